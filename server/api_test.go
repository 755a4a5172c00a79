package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/mcpclient"
)

const agentPath = "/agents/test/a"

// TestAPIRoutes goes through every route of the JSON API with good input.
func TestAPIRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	_, url := mcpServer(t, "s")

	// add: 201 for a new server, 200 for the same one again.
	body := fmt.Sprintf(`{"name":"s","url":%q,"id":"My Server","transport":{"type":"streamable-http","headers":{"X-Api-Key":"SECRET-VALUE-123"}}}`, url)
	status, _, b := e.do("POST", agentPath+"/servers", body)
	if status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	var res api.AddResult
	json.Unmarshal(b, &res)
	if diff := cmp.Diff(api.AddResult{ID: "my-server", State: string(mcpclient.StateReady)}, res); diff != "" {
		t.Fatalf("add result (-want +got):\n%s", diff)
	}
	status, _, b = e.do("POST", agentPath+"/servers", body)
	if status != http.StatusOK || !strings.Contains(string(b), `"id":"my-server"`) {
		t.Fatalf("add again: %d %s", status, b)
	}

	var seen []string // every body, to check that the header value never comes back
	get := func(path string, want int) []byte {
		t.Helper()
		status, h, b := e.do("GET", path, "")
		if status != want {
			t.Fatalf("GET %s: %d %s", path, status, b)
		}
		if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		seen = append(seen, string(b))
		return b
	}

	var agents struct{ Agents []api.AgentInfo }
	json.Unmarshal(get("/agents", 200), &agents)
	if diff := cmp.Diff([]api.AgentInfo{{Class: "agentmcp", Name: "default"}, {Class: "test", Name: "a"}}, agents.Agents); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}

	var state agent.MCPServersState
	json.Unmarshal(get(agentPath, 200), &state)
	if s := state.Servers["my-server"]; s.State != "ready" || s.Name != "s" || s.Transport != "streamable-http" {
		t.Errorf("state: %+v", s)
	}

	var servers struct{ Servers map[string]agent.MCPServer }
	json.Unmarshal(get(agentPath+"/servers", 200), &servers)
	if len(servers.Servers) != 1 || servers.Servers["my-server"].ServerURL != url {
		t.Errorf("servers: %+v", servers.Servers)
	}
	var one api.ServerState
	json.Unmarshal(get(agentPath+"/servers/my-server", 200), &one)
	if one.ID != "my-server" || one.State != "ready" || one.Instructions == nil {
		t.Errorf("server: %+v", one)
	}

	names := func(path, key string) []string {
		t.Helper()
		var m map[string][]struct{ Name, URI, URITemplate, ServerID string }
		json.Unmarshal(get(path, 200), &m)
		var out []string
		for _, x := range m[key] {
			if x.ServerID != "my-server" {
				t.Errorf("%s: serverId %q", path, x.ServerID)
			}
			out = append(out, x.Name)
		}
		slices.Sort(out)
		return out
	}
	if diff := cmp.Diff([]string{"add", "echo", "fail", "increment", "progress", "slow"}, names(agentPath+"/tools", "tools")); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	for _, q := range []string{"?serverId=my-server", "?serverName=s", "?state=ready", "?state=failed&state=ready", "?serverId=my-server&serverId=nope"} {
		if got := names(agentPath+"/tools"+q, "tools"); len(got) != 6 {
			t.Errorf("tools%s: %v", q, got)
		}
	}
	for _, q := range []string{"?serverId=nope", "?serverName=other", "?state=failed"} {
		if got := names(agentPath+"/tools"+q, "tools"); len(got) != 0 {
			t.Errorf("tools%s: %v, want none", q, got)
		}
	}
	if diff := cmp.Diff([]string{"greet"}, names(agentPath+"/prompts", "prompts")); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"static"}, names(agentPath+"/resources", "resources")); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"item"}, names(agentPath+"/resource-templates", "resourceTemplates")); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}

	post := func(path, body string, want int) []byte {
		t.Helper()
		status, _, b := e.do("POST", path, body)
		if status != want {
			t.Fatalf("POST %s: %d %s", path, status, b)
		}
		return b
	}
	var call mcp.CallToolResult
	json.Unmarshal(post(agentPath+"/servers/my-server/tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, 200), &call)
	if call.IsError || len(call.Content) != 1 || call.Content[0].(*mcp.TextContent).Text != "echo: hi" {
		t.Errorf("echo: %+v", call)
	}
	json.Unmarshal(post(agentPath+"/servers/my-server/tools/call", `{"name":"increment"}`, 200), &call)
	if call.IsError {
		t.Errorf("increment without arguments: %+v", call)
	}
	// A tool failure is a result, not an API error.
	json.Unmarshal(post(agentPath+"/servers/my-server/tools/call", `{"name":"fail","arguments":null}`, 200), &call)
	if !call.IsError {
		t.Errorf("fail: %+v", call)
	}
	var read mcp.ReadResourceResult
	json.Unmarshal(post(agentPath+"/servers/my-server/resources/read", `{"uri":"test://static"}`, 200), &read)
	if len(read.Contents) != 1 || read.Contents[0].Text != "static content" {
		t.Errorf("read: %+v", read)
	}
	var prompt mcp.GetPromptResult
	json.Unmarshal(post(agentPath+"/servers/my-server/prompts/get", `{"name":"greet","arguments":{"name":"Ada"}}`, 200), &prompt)
	if len(prompt.Messages) != 1 || prompt.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada!" {
		t.Errorf("prompt: %+v", prompt)
	}

	for _, b := range seen {
		if strings.Contains(b, "SECRET-VALUE-123") {
			t.Fatalf("a header value came back: %s", b)
		}
	}

	status, _, b = e.do("DELETE", agentPath+"/servers/my-server", "")
	if status != http.StatusNoContent || len(b) != 0 {
		t.Fatalf("delete: %d %s", status, b)
	}
	if ids := e.stored("test/a"); len(ids) != 0 {
		t.Errorf("stored after delete: %v", ids)
	}
	get(agentPath+"/servers/my-server", 404)
}

// TestAPIBadInput sends bad requests: each gets a JSON error with a stable
// code and stores nothing.
func TestAPIBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{Classes: []string{"test", "other"}})
	_, url := mcpServer(t, "s")
	// One server, so that "nothing stored" means "still just that one".
	if status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":"s","url":%q,"id":"taken"}`, url)); status != 201 {
		t.Fatalf("add: %d %s", status, b)
	}
	add := func(fields string) string { return `{"name":"x","url":"` + url + `"` + fields + `}` }

	tests := []struct {
		name         string
		method, path string
		body         string
		hdr          []string
		status       int
		code         string
		msg          string // a part of the message
	}{
		{"unknown class", "GET", "/agents/nope/a/servers", "", nil, 404, api.CodeUnknownAgent, `no agent class "nope"`},
		{"class not kebab-case", "GET", "/agents/MyAgent/a/servers", "", nil, 404, api.CodeUnknownAgent, "kebab-case"},
		{"bad agent name", "POST", "/agents/test/-a/servers", add(""), nil, 404, api.CodeUnknownAgent, "invalid agent name"},
		{"bad agent name on the stream", "GET", "/agents/test/a%20b", "", nil, 404, api.CodeUnknownAgent, "invalid agent name"},
		{"unknown route", "GET", agentPath + "/nope", "", nil, 404, api.CodeNotFound, "no route"},
		{"method not allowed", "PUT", agentPath + "/servers", add(""), nil, 405, api.CodeMethodNotAllowed, "GET, POST"},
		{"malformed JSON", "POST", agentPath + "/servers", `{"name":`, nil, 400, api.CodeInvalidJSON, "invalid JSON"},
		{"empty body", "POST", agentPath + "/servers", " ", nil, 400, api.CodeInvalidJSON, "empty"},
		{"two values", "POST", agentPath + "/servers", add("") + "{}", nil, 400, api.CodeInvalidJSON, "more than one"},
		{"missing asset", "GET", "/static/nope.js", "", nil, 404, api.CodeNotFound, "/static/nope.js"},
		{"asset directory", "GET", "/static/", "", nil, 404, api.CodeNotFound, "/static/"},
		{"POST to an asset", "POST", "/static/app.js", "", nil, 405, api.CodeMethodNotAllowed, "POST"},
		{"unknown field", "POST", agentPath + "/servers", add(`,"bogus":1`), nil, 400, api.CodeInvalidJSON, "bogus"},
		{"wrong type", "POST", agentPath + "/servers", `{"name":1,"url":"x"}`, nil, 400, api.CodeInvalidJSON, "name"},
		{"not JSON", "POST", agentPath + "/servers", add(""), []string{"Content-Type: text/plain"}, 415, api.CodeUnsupportedMediaType, "application/json"},
		{"too large", "POST", agentPath + "/servers", `{"name":"` + strings.Repeat("x", maxBody) + `"}`, nil, 413, api.CodeBodyTooLarge, "larger"},
		{"no name", "POST", agentPath + "/servers", `{"url":"` + url + `"}`, nil, 400, api.CodeInvalidRequest, "name is required"},
		{"no url", "POST", agentPath + "/servers", `{"name":"x"}`, nil, 400, api.CodeInvalidRequest, "url is required"},
		{"name with an escape", "POST", agentPath + "/servers", `{"name":"\u001b[31mred","url":"` + url + `"}`, nil, 400, api.CodeInvalidRequest, "control character"},
		{"name with a line break", "POST", agentPath + "/servers", `{"name":"a\nb","url":"` + url + `"}`, nil, 400, api.CodeInvalidRequest, "control character"},
		{"name with a C1 control", "POST", agentPath + "/servers", `{"name":"a\u009bb","url":"` + url + `"}`, nil, 400, api.CodeInvalidRequest, "control character"},
		{"name with a bidi override", "POST", agentPath + "/servers", `{"name":"a\u202eb","url":"` + url + `"}`, nil, 400, api.CodeInvalidRequest, "control character"},
		{"name too long", "POST", agentPath + "/servers", `{"name":"` + strings.Repeat("é", api.MaxNameLength+1) + `","url":"` + url + `"}`, nil, 400, api.CodeInvalidRequest, "longer than 200 characters"},
		{"relative url", "POST", agentPath + "/servers", `{"name":"x","url":"/mcp"}`, nil, 400, api.CodeInvalidURL, "http or https"},
		{"ftp url", "POST", agentPath + "/servers", `{"name":"x","url":"ftp://example.com/"}`, nil, 400, api.CodeInvalidURL, "http or https"},
		{"blocked host under ftp", "POST", agentPath + "/servers", `{"name":"x","url":"ftp://10.0.0.1/"}`, nil, 400, api.CodeBlockedURL, "Blocked URL"},
		{"blocked private address", "POST", agentPath + "/servers", `{"name":"x","url":"http://10.1.2.3/mcp"}`, nil, 400, api.CodeBlockedURL, "Blocked URL"},
		{"blocked metadata address", "POST", agentPath + "/servers", `{"name":"x","url":"http://169.254.169.254/latest"}`, nil, 400, api.CodeBlockedURL, "Blocked URL"},
		{"blocked hex address", "POST", agentPath + "/servers", `{"name":"x","url":"http://0x0a000001/mcp"}`, nil, 400, api.CodeBlockedURL, "Blocked URL"},
		{"bad transport", "POST", agentPath + "/servers", add(`,"transport":{"type":"stdio"}`), nil, 400, api.CodeInvalidRequest, "transport.type"},
		{"bad header name", "POST", agentPath + "/servers", add(`,"transport":{"headers":{"Bad Name":"v"}}`), nil, 400, api.CodeInvalidRequest, "Bad Name"},
		{"reserved header", "POST", agentPath + "/servers", add(`,"transport":{"headers":{"Mcp-Session-Id":"v"}}`), nil, 400, api.CodeInvalidRequest, "Mcp-Session-Id"},
		{"header value with a line break", "POST", agentPath + "/servers", add(`,"transport":{"headers":{"X-Key":"SECRET\r\nX: y"}}`), nil, 400, api.CodeInvalidRequest, "line break"},
		{"bad protocol version", "POST", agentPath + "/servers", add(`,"client":{"protocolVersion":"1999-01-01"}`), nil, 400, api.CodeInvalidRequest, "1999-01-01"},
		{"bad retry", "POST", agentPath + "/servers", add(`,"retry":{"maxAttempts":-1}`), nil, 400, api.CodeInvalidRequest, "retry"},
		{"bad background retry", "POST", agentPath + "/servers", add(`,"retry":{"backgroundMaxDelayMs":-1}`), nil, 400, api.CodeInvalidRequest, "BackgroundMaxDelay"},
		{"bad callback host", "POST", agentPath + "/servers", add(`,"callbackHost":"ftp://x"`), nil, 400, api.CodeInvalidRequest, "callback host"},
		{"id in use", "POST", agentPath + "/servers", `{"name":"other","url":"` + url + `?v=2","id":"taken"}`, nil, 409, api.CodeIDInUse, "taken"},
		{"unknown server: get", "GET", agentPath + "/servers/nope", "", nil, 404, api.CodeUnknownServer, `"nope"`},
		{"unknown server: remove", "DELETE", agentPath + "/servers/nope", "", nil, 404, api.CodeUnknownServer, `"nope"`},
		{"unknown server: call", "POST", agentPath + "/servers/nope/tools/call", `{"name":"echo"}`, nil, 404, api.CodeUnknownServer, `"nope"`},
		{"unknown server: read", "POST", agentPath + "/servers/nope/resources/read", `{"uri":"test://static"}`, nil, 404, api.CodeUnknownServer, `"nope"`},
		{"unknown server: prompt", "POST", agentPath + "/servers/nope/prompts/get", `{"name":"greet"}`, nil, 404, api.CodeUnknownServer, `"nope"`},
		{"unknown tool", "POST", agentPath + "/servers/taken/tools/call", `{"name":"nope"}`, nil, 404, api.CodeUnknownTool, "echo"},
		{"call without name", "POST", agentPath + "/servers/taken/tools/call", `{}`, nil, 400, api.CodeInvalidRequest, "name is required"},
		{"arguments not an object", "POST", agentPath + "/servers/taken/tools/call", `{"name":"echo","arguments":[1]}`, nil, 400, api.CodeInvalidRequest, "object"},
		{"read without uri", "POST", agentPath + "/servers/taken/resources/read", `{}`, nil, 400, api.CodeInvalidRequest, "uri is required"},
		{"unknown resource", "POST", agentPath + "/servers/taken/resources/read", `{"uri":"test://nope"}`, nil, 502, api.CodeMCPError, "test://nope"},
		{"prompt without name", "POST", agentPath + "/servers/taken/prompts/get", `{}`, nil, 400, api.CodeInvalidRequest, "name is required"},
		{"unknown filter", "GET", agentPath + "/tools?server=x", "", nil, 400, api.CodeInvalidRequest, `"server"`},
		{"unknown state", "GET", agentPath + "/tools?state=sleepy", "", nil, 400, api.CodeInvalidRequest, "sleepy"},
		{"agents: wrong method", "POST", "/agents", "{}", nil, 405, api.CodeMethodNotAllowed, "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.stored("test/a")
			status, h, b := e.do(tt.method, tt.path, tt.body, tt.hdr...)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, b)
			}
			if ct := h.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			got := apiError(t, b)
			if got.Code != tt.code || !strings.Contains(got.Message, tt.msg) {
				t.Errorf("error %+v, want code %q and a message with %q", got, tt.code, tt.msg)
			}
			if strings.Contains(string(b), "SECRET") {
				t.Errorf("the error quotes a header value: %s", b)
			}
			if diff := cmp.Diff(before, e.stored("test/a")); diff != "" {
				t.Errorf("stored servers changed (-before +after):\n%s", diff)
			}
			if tt.status == 405 && h.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
		})
	}
	// Refused agents were never opened, nor stored.
	var agents struct{ Agents []api.AgentInfo }
	_, _, b := e.do("GET", "/agents", "")
	json.Unmarshal(b, &agents)
	if diff := cmp.Diff([]api.AgentInfo{{Class: "test", Name: "a"}}, agents.Agents); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	ns, err := e.st.ListNamespaces(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"test/a"}, ns); diff != "" {
		t.Errorf("stored agents (-want +got):\n%s", diff)
	}
}

// TestAPIConnectFailed adds a server nothing listens for: the error says
// so and nothing is stored; with keepIfUnreachable, it names the id under
// which the server is kept, to be retried in the background and on
// restart.
func TestAPIConnectFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	status, _, b := e.do("POST", agentPath+"/servers", `{"name":"down","url":"http://127.0.0.1:1/mcp","retry":{"maxAttempts":1}}`)
	if got := apiError(t, b); status != http.StatusBadGateway || got.Code != api.CodeConnectFailed || got.ServerID != "" ||
		!strings.Contains(got.Message, "connection refused; nothing was saved") {
		t.Errorf("without keepIfUnreachable: %d %s", status, b)
	}
	if stored := e.stored("test/a"); len(stored) != 0 {
		t.Errorf("stored without keepIfUnreachable: %v", stored)
	}
	status, _, b = e.do("POST", agentPath+"/servers", `{"name":"down","url":"http://127.0.0.1:1/mcp","retry":{"maxAttempts":1},"keepIfUnreachable":true}`)
	if status != http.StatusBadGateway {
		t.Fatalf("status %d: %s", status, b)
	}
	got := apiError(t, b)
	if got.Code != api.CodeConnectFailed || got.ServerID == "" {
		t.Fatalf("error %+v", got)
	}
	if diff := cmp.Diff([]string{got.ServerID}, e.stored("test/a")); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	status, _, b = e.do("POST", agentPath+"/servers/"+got.ServerID+"/tools/call", `{"name":"echo"}`)
	if status != http.StatusConflict || apiError(t, b).Code != api.CodeNotConnected {
		t.Errorf("call on a failed server: %d %s", status, b)
	}
	if status, _, b := e.do("DELETE", agentPath+"/servers/"+got.ServerID, ""); status != 204 {
		t.Errorf("delete: %d %s", status, b)
	}
}

// TestClient uses the Go client for every call it has.
func TestClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{Token: "tok-123"})
	_, url := mcpServer(t, "s")
	c := e.client("test", "a")
	ctx := testCtx(t)
	res, err := c.AddMCPServer(ctx, api.AddRequest{Name: "s", URL: url, ID: "s"})
	if err != nil || res.State != string(mcpclient.StateReady) {
		t.Fatalf("add: %+v %v", res, err)
	}
	st, err := c.MCPServers(ctx)
	if err != nil || st.Servers["s"].State != "ready" {
		t.Fatalf("state: %+v %v", st, err)
	}
	tools, err := c.ListTools(ctx, client.Filter{ServerID: []string{"s"}, State: []string{string(mcpclient.StateReady)}})
	if err != nil || len(tools) != 6 {
		t.Fatalf("tools: %d %v", len(tools), err)
	}
	call, err := c.CallTool(ctx, "s", "add", map[string]int{"a": 2, "b": 3})
	if err != nil || toolResult(t, call).Content[0].(*mcp.TextContent).Text != "5" {
		t.Fatalf("call: %+v %v", call, err)
	}
	if _, err := c.ReadResource(ctx, "s", "test://static"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPrompt(ctx, "s", "greet", map[string]string{"name": "x"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CallTool(ctx, "nope", "echo", nil)
	var aerr *api.APIError
	if !errorsAs(err, &aerr) || aerr.Code != api.CodeUnknownServer || aerr.Status != 404 {
		t.Fatalf("unknown server: %v", err)
	}
	if err := c.RemoveMCPServer(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	bad, _ := client.New(client.AgentURL(e.ts.URL, "test", "a"), nil)
	if _, err := bad.MCPServers(ctx); !errorsAs(err, &aerr) || aerr.Code != api.CodeUnauthorized {
		t.Fatalf("without token: %v", err)
	}
}

// TestAddRequestName: names of up to api.MaxNameLength characters, however
// many bytes, and printable Unicode are taken.
func TestAddRequestName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{strings.Repeat("é", api.MaxNameLength), "Docs – 東京 🚀", "a b"} {
		req := api.AddRequest{Name: name, URL: "https://example.com/mcp"}
		if _, err := agent.AddOptionsFor(&req); err != nil {
			t.Errorf("name %q: %v", name, err)
		}
	}
}

// TestAddRequestRetry: every retry field of the API reaches the agent's
// options, the background retry's included.
func TestAddRequestRetry(t *testing.T) {
	t.Parallel()
	var req api.AddRequest
	body := `{"name":"x","url":"https://example.com/mcp","retry":{"maxAttempts":2,"baseDelayMs":100,` +
		`"maxDelayMs":1000,"backgroundMaxDelayMs":60000,"disableBackground":true}}`
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	o, err := agent.AddOptionsFor(&req)
	if err != nil {
		t.Fatal(err)
	}
	want := &mcpclient.RetryOptions{MaxAttempts: 2, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second,
		BackgroundMaxDelay: time.Minute, DisableBackground: true}
	if diff := cmp.Diff(want, o.Retry); diff != "" {
		t.Errorf("retry options (-want +got):\n%s", diff)
	}
}

// TestAPIErrorsNameServers: the messages of the errors of calls on a
// server name it by its name, with its id where that differs, not by its
// id alone.
func TestAPIErrorsNameServers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	srv, url := mcpServer(t, "s")
	t.Cleanup(srv.ReleaseSlow)
	status, _, b := e.do("POST", agentPath+"/servers", `{"name":"Docs Server","url":"`+url+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	var added struct{ ID string }
	json.Unmarshal(b, &added)
	status, _, b = e.do("POST", agentPath+"/servers", `{"name":"Down Server","url":"http://127.0.0.1:1/mcp","retry":{"maxAttempts":1},"keepIfUnreachable":true}`)
	down := apiError(t, b)
	if status != http.StatusBadGateway || down.ServerID == "" {
		t.Fatalf("add an unreachable server: %d %s", status, b)
	}
	tests := []struct {
		name, path, body string
		status           int
		code, label      string
		id               string
	}{
		{"unknown tool", "/tools/call", `{"name":"nope"}`, 404, api.CodeUnknownTool, `"Docs Server" (id ` + added.ID + `)`, added.ID},
		{"timeout", "/tools/call", `{"name":"slow","timeoutMs":50}`, 504, api.CodeTimeout, `"Docs Server" (id ` + added.ID + `)`, added.ID},
		{"mcp error", "/resources/read", `{"uri":"test://nope"}`, 502, api.CodeMCPError, `"Docs Server" (id ` + added.ID + `)`, added.ID},
		{"not connected", "/tools/call", `{"name":"echo"}`, 409, api.CodeNotConnected, `"Down Server" (id ` + down.ServerID + `)`, down.ServerID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, b := e.do("POST", agentPath+"/servers/"+tt.id+tt.path, tt.body)
			got := apiError(t, b)
			if status != tt.status || got.Code != tt.code || got.ServerID != tt.id {
				t.Fatalf("%d %s; want %d %s", status, b, tt.status, tt.code)
			}
			if !strings.Contains(got.Message, "MCP server "+tt.label) {
				t.Errorf("message %q does not name the server as %s", got.Message, tt.label)
			}
			if strings.Contains(got.Message, fmt.Sprintf("server %q", tt.id)) {
				t.Errorf("message %q names the server by its id alone", got.Message)
			}
		})
	}
}
