package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestMCPEndpoint: /agents/{class}/{name}/mcp is the agent as an MCP
// server, behind the token, in both eras; an idle session does not keep
// the agent awake (its hibernation ends the session); a hibernated agent
// wakes on an MCP request.
func TestMCPEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{Token: "secret"})
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	ctx := testCtx(t)
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "s", URL: hs.URL, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	endpoint := e.ts.URL + "/agents/test/a/mcp"
	connect := func(token, era string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
		c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
		return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	}
	if cs, err := connect("wrong", "2025-11-25"); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		if cs != nil {
			cs.Close()
		}
		t.Fatalf("connect with a wrong token: %v", err)
	}
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		cs, err := connect("secret", era)
		if err != nil {
			t.Fatalf("connect in %s: %v", era, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != era {
			t.Errorf("negotiated %s; want %s", got, era)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_s_echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "echo: hi" {
			t.Errorf("%s: call = %+v, %v", era, res, err)
		}
		// An idle session, its standalone GET stream open, does not keep
		// the agent awake: the agent hibernates, which ends the session
		// (its client finds it gone and starts another).
		if era == "2025-11-25" {
			if !e.srv.host.Hibernate(ctx, "test", "a") {
				t.Errorf("%s: an idle session kept the agent awake", era)
			} else if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_s_echo", Arguments: map[string]any{"text": "hi"}}); err == nil {
				t.Errorf("%s: the session outlived its agent's hibernation", era)
			}
		}
		cs.Close()
	}
	// Ended (its DELETE is answered once the session let go of the
	// agent), the session no longer holds the agent: it hibernates, and
	// the next MCP request wakes it. The session's standalone GET stream
	// is a request of its own, which holds the agent until its handler
	// returns, after the DELETE was answered: the hibernation is asked
	// again until that request is over.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(10 * time.Second) // a safety net
	for e.srv.host.IsAwake("test", "a") && !e.srv.host.Hibernate(ctx, "test", "a") {
		if time.Now().After(deadline) {
			t.Fatal("the agent stays awake after its session ended")
		}
		<-tick.C
	}
	// Behind a proxy that forwards a public name to the loopback listener:
	// the server's own Host check (the token) applies, not go-sdk's.
	hc := &http.Client{Transport: bearer{"secret", hostRewrite{"agents.example.com", http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools after a wake = %+v, %v", tools, err)
	}
}

// hostRewrite sends every request with another Host header.
type hostRewrite struct {
	host string
	next http.RoundTripper
}

func (h hostRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	return h.next.RoundTrip(r)
}

// TestMCPSessionSubject: in OAuth mode a session of the MCP endpoint is
// bound to the subject of the token that opened it: another subject's
// token, valid as it is, finds no such session (404) to use or to end,
// and the session goes on for its own user; the logs never carry a
// session id.
func TestMCPSessionSubject(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	as := oauthtest.NewServer(t, &oauthtest.Options{JWT: "ES256"})
	client := as.AddClient(oauthtest.Client{ID: "editor", RedirectURIs: []string{"http://127.0.0.1/cb"}})
	e := newEnv(t, &Options{Token: "secret", OAuth: &OAuthOptions{Issuer: as.Issuer()},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	ctx := testCtx(t)
	_, url := mcpServer(t, "s")
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	endpoint := e.ts.URL + agentPath + "/mcp"
	token := func(sub string) string {
		c := as.AccessJWTClaims(client.ID, endpoint)
		c["sub"] = sub
		return as.SignJWT(c)
	}
	alice, bob := token("alice"), token("bob")
	hc := &http.Client{Transport: bearer{alice, http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("alice's session: %v", err)
	}
	list := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	headers := []string{"Mcp-Session-Id: " + cs.ID(), "Mcp-Protocol-Version: 2025-11-25",
		"Accept: application/json, text/event-stream", "Content-Type: application/json"}
	for _, r := range []struct{ method, body string }{{"POST", list}, {"DELETE", ""}, {"GET", ""}} {
		status, _, b := e.do(r.method, agentPath+"/mcp", r.body, append(headers, "Authorization: Bearer "+bob)...)
		if status != http.StatusNotFound {
			t.Errorf("bob's %s in alice's session: %d %s; want 404", r.method, status, b)
		}
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("alice's session after bob's tries: %v", err)
	}
	if strings.Contains(logs.String(), cs.ID()) {
		t.Errorf("the session id is in the logs:\n%s", logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use (a log's).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAbandonedQuestion: a 2026-07-28 MCP client that leaves a question
// of its call unanswered keeps the agent busy only until the gateway's
// InputTimeout, which cancels the call; meanwhile POST .../hibernate's 409
// says what keeps the agent awake.
func TestAbandonedQuestion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{Token: "secret", Gateway: func(*agent.Agent) *gateway.Options {
		return &gateway.Options{InputTimeout: time.Second}
	}})
	ctx := testCtx(t)
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "asker", URL: askServer(t), ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tool_asker_ask","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"editor","version":"1"}}}}`
	status, _, b := e.do("POST", agentPath+"/mcp", call, "Authorization: Bearer secret", "Mcp-Protocol-Version: 2026-07-28",
		"Mcp-Method: tools/call", "Mcp-Name: tool_asker_ask", "Accept: application/json, text/event-stream")
	if status != http.StatusOK || !strings.Contains(string(b), "input_required") {
		t.Fatalf("the call = %d %s; want an input-required result", status, b)
	}
	// The client never comes back.
	status, _, b = e.do("POST", agentPath+"/hibernate", "", "Authorization: Bearer secret")
	if status != http.StatusConflict || !strings.Contains(string(b), "in flight") || !strings.Contains(string(b), "MCP client question") {
		t.Errorf("hibernate with the question pending = %d %s; want 409 naming the call and the question", status, b)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		status, _, b = e.do("POST", agentPath+"/hibernate", "", "Authorization: Bearer secret")
		if status == http.StatusNoContent {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the abandoned question keeps the agent busy: %d %s", status, b)
		}
	}
}
