package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestUnknownAgent: reading an agent that does not exist (state, servers,
// catalog, elicitations, streams, calls) is a 404 unknown_agent that lists
// the agents that exist, and opens nothing. Adding a server or PUT creates
// one; the default agent always exists.
func TestUnknownAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	_, url := mcpServer(t, "s")
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	const nosuch = "/agents/test/nosuch"
	wantAgents := []string{"agentmcp/default", "test/a"}
	for _, tt := range []struct{ method, path, body string }{
		{"GET", nosuch, ""},
		{"GET", nosuch + "/servers", ""},
		{"GET", nosuch + "/servers/s", ""},
		{"DELETE", nosuch + "/servers/s", ""},
		{"GET", nosuch + "/tools", ""},
		{"GET", nosuch + "/prompts", ""},
		{"GET", nosuch + "/resources", ""},
		{"GET", nosuch + "/resource-templates", ""},
		{"GET", nosuch + "/elicitations", ""},
		{"POST", nosuch + "/elicitations/x", `{"action":"decline"}`},
		{"GET", nosuch + "/events", ""},
		{"POST", nosuch + "/servers/s/tools/call", `{"name":"echo"}`},
		{"POST", nosuch + "/servers/s/resources/read", `{"uri":"test://static"}`},
		{"POST", nosuch + "/servers/s/prompts/get", `{"name":"greet"}`},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			status, _, b := e.do(tt.method, tt.path, tt.body)
			if status != http.StatusNotFound {
				t.Fatalf("status %d: %s", status, b)
			}
			got := apiError(t, b)
			if got.Code != api.CodeUnknownAgent {
				t.Errorf("code %q: %s", got.Code, b)
			}
			if diff := cmp.Diff(wantAgents, got.Agents); diff != "" {
				t.Errorf("agents (-want +got):\n%s", diff)
			}
		})
	}
	// The WebSocket is refused before the upgrade; the Go client says why.
	_, res, err := websocket.Dial(testCtx(t), client.AgentURL(e.ts.URL, "test", "nosuch"), nil)
	if err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("WebSocket of an unknown agent: %v %v", res, err)
	}
	_, err = e.client("test", "nosuch").MCPServers(testCtx(t))
	var aerr *api.APIError
	if !errors.As(err, &aerr) || aerr.Code != api.CodeUnknownAgent || !cmp.Equal(wantAgents, aerr.Agents) {
		t.Errorf("client: %v %+v", err, aerr)
	}
	if diff := cmp.Diff([]api.AgentInfo{{Class: "test", Name: "a"}}, e.srv.Agents()); diff != "" {
		t.Fatalf("reads opened agents (-want +got):\n%s", diff)
	}

	// The default agent exists without servers.
	if status, _, b := e.do("GET", "/agents/agentmcp/default", ""); status != http.StatusOK {
		t.Errorf("default agent: %d %s", status, b)
	}
	// PUT creates an agent: 201, then 200.
	for _, want := range []int{http.StatusCreated, http.StatusOK} {
		if status, _, b := e.do("PUT", "/agents/test/made", ""); status != want {
			t.Errorf("PUT: %d %s, want %d", status, b, want)
		}
	}
	if status, _, b := e.do("PUT", "/agents/Bad/made", ""); status != http.StatusNotFound || apiError(t, b).Code != api.CodeUnknownAgent {
		t.Errorf("PUT of a bad class: %d %s", status, b)
	}
	if status, _, b := e.do("GET", "/agents/test/made/servers", ""); status != http.StatusOK {
		t.Errorf("created agent: %d %s", status, b)
	}
	// Adding a server creates an agent.
	c := e.client("test", "added")
	if _, err := c.AddMCPServer(testCtx(t), api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	agents, err := client.ListAgents(testCtx(t), e.ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The default agents, then the stored ones, then those only awake.
	want := []api.AgentInfo{{Class: "agentmcp", Name: "default"}, {Class: "test", Name: "a"}, {Class: "test", Name: "added"}, {Class: "test", Name: "made"}}
	if diff := cmp.Diff(want, agents); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
}

// TestCallTimeout: a call on an MCP server through the API is bounded by
// the request's timeoutMs, else by Options.CallTimeout, and is cancelled on
// the MCP server when the bound passes or its HTTP client goes away.
func TestCallTimeout(t *testing.T) {
	t.Parallel()
	// Limits long enough for the calls to reach the MCP server on a busy
	// machine: the test checks that the server sees them cancelled.
	e := newEnv(t, &Options{CallTimeout: time.Second})
	srv, url := mcpServer(t, "s")
	t.Cleanup(srv.ReleaseSlow)

	// A server with a slow resource and a slow prompt.
	slow := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	cancelled := make(chan string, 4)
	block := func(ctx context.Context, what string) error {
		<-ctx.Done()
		cancelled <- what
		return ctx.Err()
	}
	slow.AddResource(&mcp.Resource{URI: "test://slow", Name: "slow"}, func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, block(ctx, "resource")
	})
	slow.AddPrompt(&mcp.Prompt{Name: "slow"}, func(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, block(ctx, "prompt")
	})
	_, slowURL := mcpServerOf(t, slow)

	c := e.client("test", "a")
	for id, u := range map[string]string{"s": url, "slow": slowURL} {
		if _, err := c.AddMCPServer(testCtx(t), api.AddRequest{Name: id, URL: u, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	waitSignal := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-testCtx(t).Done():
			t.Fatalf("no %s", what)
		}
	}
	timedOut := func(path, body, limit string) {
		t.Helper()
		status, _, b := e.do("POST", agentPath+path, body)
		if status != http.StatusGatewayTimeout {
			t.Fatalf("POST %s %s: %d %s", path, body, status, b)
		}
		if got := apiError(t, b); got.Code != api.CodeTimeout || got.ServerID == "" || !strings.Contains(got.Message, "longer than "+limit+" ") {
			t.Errorf("error %+v, want timeout after %s", got, limit)
		}
	}

	// timeoutMs, then the server's default.
	timedOut("/servers/s/tools/call", `{"name":"slow","timeoutMs":500}`, "500ms")
	waitSignal(srv.SlowStarted, "the call with timeoutMs to start")
	waitSignal(srv.SlowCancelled, "cancellation of the call with timeoutMs")
	timedOut("/servers/s/tools/call", `{"name":"slow"}`, "1s")
	waitSignal(srv.SlowStarted, "the call bounded by CallTimeout to start")
	waitSignal(srv.SlowCancelled, "cancellation of the call bounded by CallTimeout")
	for _, tt := range []struct{ path, body, limit, what string }{
		{"/servers/slow/resources/read", `{"uri":"test://slow","timeoutMs":500}`, "500ms", "resource"},
		{"/servers/slow/prompts/get", `{"name":"slow"}`, "1s", "prompt"},
	} {
		timedOut(tt.path, tt.body, tt.limit)
		select {
		case got := <-cancelled:
			if got != tt.what {
				t.Errorf("cancelled %s, want %s", got, tt.what)
			}
		case <-testCtx(t).Done():
			t.Fatalf("the %s was not cancelled", tt.what)
		}
	}

	// A client that goes away cancels its call on the MCP server. (Its
	// deadline, sent as timeoutMs, keeps the server's 1s default out of
	// the way.)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "s", "slow", nil)
		done <- err
	}()
	waitSignal(srv.SlowStarted, "slow call")
	cancel()
	waitSignal(srv.SlowCancelled, "cancellation when the client went away")
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}

	for _, body := range []string{`{"name":"slow","timeoutMs":-1}`, fmt.Sprintf(`{"name":"slow","timeoutMs":%d}`, api.MaxCallTimeout.Milliseconds()+1)} {
		status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", body)
		if status != http.StatusBadRequest || apiError(t, b).Code != api.CodeInvalidRequest {
			t.Errorf("%s: %d %s", body, status, b)
		}
	}
}

// TestAPIReconnect: POST .../servers/{id}/reconnect connects a failed
// server again at once (its background retry is minutes away here): while
// the server is down it is connect_failed, once it is back, ready with its
// tools.
func TestAPIReconnect(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	hs.Stop()
	c := e.client("test", "a")
	ctx := testCtx(t)
	slowRetry := &api.RetryRequest{MaxAttempts: 1, BaseDelayMS: 600_000, MaxDelayMS: 600_000}
	_, err := c.AddMCPServer(ctx, api.AddRequest{Name: "s", URL: hs.URL, ID: "s", Retry: slowRetry, KeepIfUnreachable: true})
	var aerr *api.APIError
	if !errors.As(err, &aerr) || aerr.Code != api.CodeConnectFailed {
		t.Fatalf("add while down: %v", err)
	}
	if _, err := c.Reconnect(ctx, "s"); !errors.As(err, &aerr) || aerr.Code != api.CodeConnectFailed || aerr.ServerID != "s" || aerr.Status != http.StatusBadGateway {
		t.Fatalf("reconnect while down: %v", err)
	}
	hs.Restart()
	res, err := c.Reconnect(ctx, "s")
	if err != nil || res.State != string(mcpclient.StateReady) || res.ID != "s" {
		t.Fatalf("reconnect: %+v %v", res, err)
	}
	tools, err := c.ListTools(ctx, client.Filter{ServerID: []string{"s"}})
	if err != nil || len(tools) == 0 {
		t.Errorf("tools after reconnect: %d %v", len(tools), err)
	}
	if _, err := c.Reconnect(ctx, "nope"); !errors.As(err, &aerr) || aerr.Code != api.CodeUnknownServer {
		t.Errorf("unknown server: %v", err)
	}
	if _, err := e.client("test", "nosuch").Reconnect(ctx, "s"); !errors.As(err, &aerr) || aerr.Code != api.CodeUnknownAgent {
		t.Errorf("unknown agent: %v", err)
	}
}
