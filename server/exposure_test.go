package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
)

// TestExposureAPI: GET and PUT /agents/{class}/{name}/exposure read and
// replace the rules, which are stored (they survive a restart); bad
// patterns get a 400 that names them and changes nothing.
func TestExposureAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	_, url := mcpServer(t, "s")
	if status, _, b := e.do("POST", agentPath+"/servers", `{"name":"s","url":"`+url+`","id":"docs"}`); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	get := func(e *env) api.Exposure {
		t.Helper()
		status, _, b := e.do("GET", agentPath+"/exposure", "")
		if status != http.StatusOK {
			t.Fatalf("GET exposure: %d %s", status, b)
		}
		var got api.Exposure
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if diff := cmp.Diff(api.Exposure{Allow: []string{}, Deny: []string{}}, get(e)); diff != "" {
		t.Fatalf("rules of a new agent (-want +got):\n%s", diff)
	}
	rules := api.Exposure{Allow: []string{"docs", "github/search_*"}, Deny: []string{"*/delete_*"}}
	body, _ := json.Marshal(rules)
	status, _, b := e.do("PUT", agentPath+"/exposure", string(body))
	if status != http.StatusOK {
		t.Fatalf("PUT exposure: %d %s", status, b)
	}
	var put api.Exposure
	json.Unmarshal(b, &put)
	if diff := cmp.Diff(rules, put); diff != "" {
		t.Fatalf("PUT's answer (-want +got):\n%s", diff)
	}

	bad := []struct{ body, want string }{
		{`{"deny":["docs/"]}`, `deny pattern \"docs/\": no tool part`},
		{`{"allow":["/x"]}`, `allow pattern \"/x\": no server part`},
		{`{"allow":["Docs"]}`, `lower-case`},
		{`{"allow":[""]}`, `empty`},
		{`{"allow":"docs"}`, `invalid JSON body`},
		{`{"allow":[],"expose":[]}`, `unknown field`},
	}
	for _, tt := range bad {
		status, _, b := e.do("PUT", agentPath+"/exposure", tt.body)
		if status != http.StatusBadRequest || !strings.Contains(string(b), tt.want) {
			t.Errorf("PUT %s: %d %s, want 400 saying %q", tt.body, status, b, tt.want)
		}
	}
	if status, _, b := e.do("POST", agentPath+"/exposure", `{}`); status != http.StatusMethodNotAllowed {
		t.Errorf("POST exposure: %d %s, want 405", status, b)
	}
	if status, _, b := e.do("GET", "/agents/test/nobody/exposure", ""); status != http.StatusNotFound || !strings.Contains(string(b), api.CodeUnknownAgent) {
		t.Errorf("GET exposure of an unknown agent: %d %s, want 404 unknown_agent", status, b)
	}

	e.stop()
	e = openEnv(t, e.path, nil)
	if diff := cmp.Diff(rules, get(e)); diff != "" {
		t.Fatalf("rules after a restart (-want +got):\n%s", diff)
	}
	if status, _, b := e.do("PUT", agentPath+"/exposure", `{}`); status != http.StatusOK {
		t.Fatalf("PUT {}: %d %s", status, b)
	}
	if diff := cmp.Diff(api.Exposure{Allow: []string{}, Deny: []string{}}, get(e)); diff != "" {
		t.Fatalf("rules after clearing (-want +got):\n%s", diff)
	}
}

// TestExposureGateway: the agent's MCP endpoint follows its exposure
// rules: a denied tool is neither listed nor callable (a call by its name,
// listed before the rules changed, is refused), a denied server shows
// nothing, in both eras; and changing the rules sends list_changed.
func TestExposureGateway(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := testCtx(t)
	for _, id := range []string{"docs", "scratch"} {
		_, url := mcpServer(t, id)
		if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: id, URL: url, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	toolsChanged := make(chan struct{}, 16)
	connect := func(era string) *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				toolsChanged <- struct{}{}
			},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.ts.URL + agentPath + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatalf("connect in %s: %v", era, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	listed := func(cs *mcp.ClientSession) (tools, prompts []string) {
		t.Helper()
		tl, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tl.Tools {
			tools = append(tools, tool.Name)
		}
		pl, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pl.Prompts {
			prompts = append(prompts, p.Name)
		}
		slices.Sort(tools)
		slices.Sort(prompts)
		return tools, prompts
	}
	// called reports whether a call of tool succeeded.
	drain := func() { // notifications from before the change do not count
		for {
			select {
			case <-toolsChanged:
			default:
				return
			}
		}
	}
	called := func(cs *mcp.ClientSession, tool string) bool {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hi"}})
		return err == nil && !res.IsError
	}
	session := connect("2025-11-25")
	all, allPrompts := listed(session)
	for _, want := range []string{"tool_docs_echo", "tool_docs_fail", "tool_scratch_echo"} {
		if !slices.Contains(all, want) {
			t.Fatalf("tools without rules: %q, want %s among them", all, want)
		}
	}
	if !called(session, "tool_docs_echo") || !called(session, "tool_scratch_echo") {
		t.Fatal("calls without rules fail")
	}

	drain()
	if status, _, b := e.do("PUT", agentPath+"/exposure", `{"deny":["scratch","docs/echo"]}`); status != http.StatusOK {
		t.Fatalf("PUT exposure: %d %s", status, b)
	}
	select {
	case <-toolsChanged:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after the rules changed")
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		cs := session
		if era != "2025-11-25" {
			cs = connect(era)
		}
		tools, prompts := listed(cs)
		for _, name := range tools {
			if strings.HasPrefix(name, "tool_scratch_") || name == "tool_docs_echo" {
				t.Errorf("%s: %s listed though denied (tools: %q)", era, name, tools)
			}
		}
		if !slices.Contains(tools, "tool_docs_fail") || len(tools) != len(all)/2-1 {
			t.Errorf("%s: tools %q, want docs' tools but echo", era, tools)
		}
		if len(prompts) != len(allPrompts)/2 || slices.ContainsFunc(prompts, func(p string) bool { return strings.HasPrefix(p, "scratch") }) {
			t.Errorf("%s: prompts %q, want docs' only (all: %q)", era, prompts, allPrompts)
		}
		for _, denied := range []string{"tool_docs_echo", "tool_scratch_echo"} {
			if called(cs, denied) {
				t.Errorf("%s: call of the denied %s succeeded", era, denied)
			}
		}
	}

	// Allowing it again brings it back, with list_changed.
	drain()
	if status, _, b := e.do("PUT", agentPath+"/exposure", `{}`); status != http.StatusOK {
		t.Fatalf("PUT exposure: %d %s", status, b)
	}
	select {
	case <-toolsChanged:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after the rules were cleared")
	}
	if tools, _ := listed(session); !cmp.Equal(all, tools) {
		t.Errorf("tools after clearing the rules: %q, want %q", tools, all)
	}
	if !called(session, "tool_docs_echo") {
		t.Error("call after clearing the rules fails")
	}
}
