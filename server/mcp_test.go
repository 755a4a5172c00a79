package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/mcptest"
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
// server, behind the token, in both eras; a session keeps the agent
// awake until it ends; a hibernated agent wakes on an MCP request.
func TestMCPEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{Token: "secret"})
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	ctx := testCtx(t)
	if _, err := e.client("test", "a").AddMCPServer(ctx, AddRequest{Name: "s", URL: hs.URL, ID: "s"}); err != nil {
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
		// A session keeps the agent awake (a 2026-07-28 client has none:
		// each request is a use of its own).
		if era == "2025-11-25" && e.srv.host.Hibernate(ctx, "test", "a") {
			t.Errorf("%s: hibernated with a session open", era)
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
