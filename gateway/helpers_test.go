//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package gateway_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// The protocol eras a downstream client may speak.
const (
	eraSessions  = "2025-11-25"
	eraStateless = "2026-07-28"
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// env is an agent with two upstream servers, "alpha" (2026-07-28,
// stateless) and "beta" (2025-11-25 sessions), behind a Gateway served on
// 127.0.0.1.
type env struct {
	t                   testing.TB
	a                   *agent.Agent
	g                   *gateway.Gateway
	alpha, beta         *mcptest.Server
	alphaHTTP, betaHTTP *mcptest.HTTPServer
	URL                 string
}

func newEnv(t testing.TB, opts *gateway.Options) *env {
	t.Helper()
	ctx := testCtx(t)
	e := &env{t: t, alpha: mcptest.NewServer("alpha"), beta: mcptest.NewServer("beta")}
	addElicitTool(e.beta)
	addInputTool(e.alpha)
	addSampleTool(e.beta)
	e.alphaHTTP = mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return e.alpha.Server })
	e.betaHTTP = mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return e.beta.Server })
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// The agent answers elicitations itself when no client takes them
	// (as agentmcp serve's agents do), so its servers are offered
	// elicitation from the start.
	a, err := agent.Open(ctx, st, "test", "gw", &agent.Options{ElicitationTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	e.a = a
	for _, s := range []struct{ id, url string }{{"alpha", e.alphaHTTP.URL}, {"beta", e.betaHTTP.URL}} {
		res, err := a.AddMCPServer(ctx, s.id, s.url, &agent.AddOptions{ID: s.id})
		if err != nil || res.State != mcpclient.StateReady {
			t.Fatalf("AddMCPServer(%s) = %+v, %v", s.id, res, err)
		}
	}
	e.g = gateway.New(a, opts)
	t.Cleanup(func() {
		if err := e.g.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	e.URL = mcptest.ServeHandler(t, e.g).URL
	return e
}

// addElicitTool adds to s a tool "ask" that asks the client for a name
// (elicitation, form mode) and returns the answer.
func addElicitTool(s *mcptest.Server) {
	mcp.AddTool(s.Server, &mcp.Tool{Name: "ask", Description: "Asks the user for a name."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, nil, err
			}
			name, _ := res.Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + ":" + name}}}, nil, nil
		})
}

// addInputTool adds to s a tool "ask" that asks the client for a name
// the 2026-07-28 way: an input-required result, answered by the client's
// retry.
func addInputTool(s *mcptest.Server) {
	s.Server.AddTool(&mcp.Tool{Name: "ask", Description: "Asks the user for a name.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "Your name?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}, nil
			}
			name, _ := r.Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Action + ":" + name}}}, nil
		})
}

// addSampleTool adds to s a tool "sample" that asks the client for an
// LLM completion (sampling) and returns the model's text.
func addSampleTool(s *mcptest.Server) {
	mcp.AddTool(s.Server, &mcp.Tool{Name: "sample", Description: "Asks the client's model."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hi"}}}})
			if err != nil {
				return nil, nil, err
			}
			tc, _ := res.Content.(*mcp.TextContent)
			if tc == nil {
				return nil, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Model + ":" + tc.Text}}}, nil, nil
		})
}

// connect connects a go-sdk client to the gateway in era, closed when
// the test ends.
func (e *env) connect(era string, opts *mcp.ClientOptions) *mcp.ClientSession {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, opts)
	cs, err := c.Connect(testCtx(e.t), &mcp.StreamableClientTransport{Endpoint: e.URL, HTTPClient: &http.Client{}, DisableStandaloneSSE: false},
		&mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		e.t.Fatalf("connect in %s: %v", era, err)
	}
	e.t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != era {
		e.t.Fatalf("negotiated %s; want %s", got, era)
	}
	return cs
}

func text(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// callRacingDisconnect calls beta's slow tool through cs, stops beta's
// server while the call runs, and checks that the call ends as a tool
// error naming the server.
func callRacingDisconnect(ctx context.Context, t *testing.T, e *env, cs *mcp.ClientSession) {
	t.Helper()
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_slow", Arguments: map[string]any{}})
		done <- result{res, err}
	}()
	select {
	case <-e.beta.SlowStarted:
	case <-ctx.Done():
		t.Fatal("the slow call did not start")
	}
	e.betaHTTP.Stop()
	r := <-done
	if r.err != nil || !r.res.IsError || !strings.Contains(text(r.res), `"beta"`) {
		t.Errorf("call racing the disconnect = %+v, %v; want a tool error naming the server", r.res, r.err)
	}
}

// declineAgentElicitations declines every elicitation the agent holds
// pending, as a user of the agent's own queue would, until the function it
// returns is called.
func declineAgentElicitations(e *env) (stop func()) {
	w := e.a.Watch(16)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		for {
			select {
			case up := <-w.Updates():
				for _, el := range up.Elicitations {
					e.a.AnswerElicitation(el.ID, &mcp.ElicitResult{Action: "decline"})
				}
			case <-w.Done():
				return
			}
		}
	}()
	return func() { w.Stop(); <-answered }
}
