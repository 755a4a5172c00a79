//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestGoSDKClient: go-sdk's client, in both eras, lists the union of the
// agent's catalogs, calls a tool on each upstream server, gets a prompt,
// reads a resource, gets progress, and gets list_changed when a server
// is added.
func TestGoSDKClient(t *testing.T) {
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := testCtx(t)
			changed := make(chan struct{}, 16)
			progress := make(chan *mcp.ProgressNotificationParams, 16)
			cs := e.connect(era, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
					changed <- struct{}{}
				},
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					progress <- req.Params
				},
			})

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			byName := map[string]*mcp.Tool{}
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
				byName[tl.Name] = tl
			}
			for _, want := range []string{"tool_alpha_echo", "tool_beta_echo", "tool_alpha_slow", "tool_beta_ask"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list has no %s: %v", want, names)
				}
			}
			// The keys are the agent's AITools keys.
			set := e.a.Manager().AITools(mcpclient.Filter{})
			if set.Len() != len(names) {
				t.Errorf("%d tools listed; AITools has %d", len(names), set.Len())
			}
			for _, n := range names {
				if _, ok := set.Get(n); !ok {
					t.Errorf("tool %s is not an AITools key", n)
				}
			}
			if tl := byName["tool_beta_echo"]; tl == nil || !strings.Contains(tl.Title, "beta") || !strings.Contains(tl.Description, "beta") || !strings.Contains(tl.Description, "Echoes its text.") {
				t.Errorf("tool_beta_echo = %+v; want its server named in title and description", tl)
			}

			for _, s := range []string{"alpha", "beta"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_" + s + "_echo", Arguments: map[string]any{"text": s}})
				if err != nil || res.IsError || text(res) != "echo: "+s {
					t.Errorf("call %s's echo = %+v, %v", s, res, err)
				}
			}

			// Progress comes through, before the result.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_progress", Arguments: map[string]any{"steps": 3},
				Meta: mcp.Meta{"progressToken": "p1"}})
			if err != nil || text(res) != "done in 3 steps" {
				t.Fatalf("progress call = %+v, %v", res, err)
			}
			for i := 1; i <= 3; i++ {
				select {
				case p := <-progress:
					if p.ProgressToken != "p1" || p.Progress != float64(i) || p.Total != 3 {
						t.Errorf("progress %d = %+v", i, p)
					}
				case <-ctx.Done():
					t.Fatalf("progress %d did not arrive", i)
				}
			}

			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var pnames []string
			for _, p := range prompts.Prompts {
				pnames = append(pnames, p.Name)
			}
			slices.Sort(pnames)
			if diff := cmp.Diff([]string{"alpha.greet", "beta.greet"}, pnames); diff != "" {
				t.Errorf("prompts (-want +got):\n%s", diff)
			}
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: gateway.PromptName("beta", "greet"), Arguments: map[string]string{"name": "Ada"}})
			if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada!" {
				t.Errorf("GetPrompt = %+v, %v", pr, err)
			}

			resources, err := cs.ListResources(ctx, nil)
			if err != nil || len(resources.Resources) != 1 || resources.Resources[0].URI != "test://static" {
				t.Errorf("ListResources = %+v, %v", resources, err)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static"})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "static content" {
				t.Errorf("ReadResource = %+v, %v", rr, err)
			}
			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(templates.ResourceTemplates) != 1 {
				t.Errorf("ListResourceTemplates = %+v, %v", templates, err)
			}
			rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://items/7"})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "item" {
				t.Errorf("ReadResource(template) = %+v, %v", rr, err)
			}

			// A third server: list_changed, and its tools listed.
			gamma := mcptest.NewServer("gamma")
			gammaHTTP := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return gamma.Server })
			if _, err := e.a.AddMCPServer(ctx, "gamma", gammaHTTP.URL, &agent.AddOptions{ID: "gamma"}); err != nil {
				t.Fatal(err)
			}
			waitTool(t, cs, changed, "tool_gamma_echo", true)
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_gamma_add", Arguments: map[string]any{"a": 2, "b": 3}})
			if err != nil || text(res) != "5" {
				t.Errorf("call gamma's add = %+v, %v", res, err)
			}
			// And gone again when it is removed.
			if err := e.a.RemoveMCPServer(ctx, "gamma"); err != nil {
				t.Fatal(err)
			}
			waitTool(t, cs, changed, "tool_gamma_echo", false)
		})
	}
}

// waitTool waits for list_changed notifications until tool is listed
// (or, with present false, no longer listed).
func waitTool(t *testing.T, cs *mcp.ClientSession, changed <-chan struct{}, tool string, present bool) {
	t.Helper()
	ctx := testCtx(t)
	for {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no list_changed with %s present=%v", tool, present)
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(tools.Tools, func(x *mcp.Tool) bool { return x.Name == tool }) == present {
			return
		}
	}
}

// TestCancel: a downstream client that cancels a slow call cancels it on
// the upstream server, in both eras.
func TestCancel(t *testing.T) {
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			e := newEnv(t, nil)
			cs := e.connect(era, nil)
			for _, up := range []struct {
				id  string
				srv *mcptest.Server
			}{{"alpha", e.alpha}, {"beta", e.beta}} {
				ctx, cancel := context.WithCancel(testCtx(t))
				errc := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_" + up.id + "_slow", Arguments: map[string]any{}})
					errc <- err
				}()
				select {
				case <-up.srv.SlowStarted:
				case <-testCtx(t).Done():
					t.Fatalf("%s: the slow call did not start", up.id)
				}
				cancel()
				select {
				case <-up.srv.SlowCancelled:
				case <-testCtx(t).Done():
					t.Fatalf("%s: the upstream server did not see the cancellation", up.id)
				}
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Errorf("%s: cancelled call = %v", up.id, err)
				}
			}
		})
	}
}

// TestElicitation: an upstream server's elicitation reaches the
// downstream client that declared elicitation, and its answer reaches the
// server; a client that did not declare it leaves it to the agent (its
// pending elicitations).
func TestElicitation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	var asked atomic.Value
	cs := e.connect(eraSessions, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Store(req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_ask", Arguments: map[string]any{}})
	if err != nil || res.IsError || text(res) != "accept:Ada" {
		t.Fatalf("ask = %+v, %v", res, err)
	}
	if asked.Load() != "Your name?" {
		t.Errorf("the client was asked %v", asked.Load())
	}

	// Without the capability: the agent's pending elicitation, answered
	// through the agent.
	plain := e.connect(eraSessions, nil)
	defer declineAgentElicitations(e)()
	res, err = plain.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_ask", Arguments: map[string]any{}})
	if err != nil || text(res) != "decline:" {
		t.Errorf("ask without the capability = %+v, %v", res, err)
	}

	// Calls of both clients in flight to the server: the request cannot
	// be told apart, and goes to the agent, not to the client that takes
	// elicitations but may not be the one asked.
	slow := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_slow", Arguments: map[string]any{}})
		slow <- err
	}()
	select {
	case <-e.beta.SlowStarted:
	case <-ctx.Done():
		t.Fatal("the slow call did not start")
	}
	asked.Store("")
	res, err = plain.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_ask", Arguments: map[string]any{}})
	if err != nil || text(res) != "decline:" || asked.Load() != "" {
		t.Errorf("ask with another client's call in flight = %+v, %v (the other client was asked %q)", res, err, asked.Load())
	}
	e.beta.ReleaseSlow()
	if err := <-slow; err != nil {
		t.Errorf("slow call: %v", err)
	}
}

// TestElicitationOfAgentCall: a request for input that an upstream server
// makes during a call of the agent's own (its API, its dashboard) goes to
// the agent's pending elicitations, never to a gateway client that has a
// call of its own in flight to the same server, in either era of the
// upstream server; a gateway client's own question still reaches it.
func TestElicitationOfAgentCall(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	var asked atomic.Int32
	cs := e.connect(eraSessions, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	var queued atomic.Int32
	w := e.a.Watch(16)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		for {
			select {
			case up := <-w.Updates():
				for _, el := range up.Elicitations {
					if e.a.AnswerElicitation(el.ID, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Owner"}}) {
						queued.Add(1)
					}
				}
			case <-w.Done():
				return
			}
		}
	}()
	defer func() { w.Stop(); <-answered }()

	for _, up := range []struct {
		id  string
		srv *mcptest.Server
	}{{"beta", e.beta}, {"alpha", e.alpha}} {
		slow := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_" + up.id + "_slow", Arguments: map[string]any{}})
			slow <- err
		}()
		select {
		case <-up.srv.SlowStarted:
		case <-ctx.Done():
			t.Fatalf("%s: the slow call did not start", up.id)
		}
		before := queued.Load()
		res, err := e.a.CallTool(ctx, up.id, "ask", nil, nil)
		if err != nil || text(res) != "accept:Owner" {
			t.Errorf("%s: the agent's call = %+v, %v; want the agent's queue to answer", up.id, res, err)
		}
		if n := asked.Load(); n != 0 {
			t.Errorf("%s: the gateway client was asked %d times for the agent's call", up.id, n)
		}
		if queued.Load() != before+1 {
			t.Errorf("%s: the agent's queue had %d elicitations; want 1", up.id, queued.Load()-before)
		}
		up.srv.ReleaseSlow()
		if err := <-slow; err != nil {
			t.Errorf("%s: slow call: %v", up.id, err)
		}
	}

	// The client's own call is still its own.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_ask", Arguments: map[string]any{}})
	if err != nil || text(res) != "accept:Ada" || asked.Load() != 1 {
		t.Errorf("the client's own ask = %+v, %v (asked %d times)", res, err, asked.Load())
	}
}

// TestExpose: a tool the hook denies is neither listed nor callable, and
// a server it denies shows nothing.
func TestExpose(t *testing.T) {
	var denyEcho atomic.Bool
	expose := func(serverID, tool string) bool {
		if serverID == "beta" && tool == "" {
			return false
		}
		return !(tool == "increment" || (denyEcho.Load() && tool == "echo"))
	}
	e := newEnv(t, &gateway.Options{Expose: expose})
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			ctx := testCtx(t)
			denyEcho.Store(false)
			e.g.Refresh()
			cs := e.connect(era, nil)
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			want := []string{"tool_alpha_add", "tool_alpha_ask", "tool_alpha_echo", "tool_alpha_fail", "tool_alpha_progress", "tool_alpha_slow"}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			for _, name := range []string{"tool_alpha_increment", "tool_beta_echo"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
				if err == nil && !res.IsError {
					t.Errorf("call of denied %s = %+v", name, res)
				}
			}
			if e.alpha.Increments.Load() != 0 {
				t.Errorf("the denied tool ran %d times", e.alpha.Increments.Load())
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "alpha.greet" {
				t.Errorf("prompts = %+v, %v", prompts, err)
			}
			// The hook is asked again at call time: a tool denied since the
			// last list is refused even before Refresh.
			denyEcho.Store(true)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_echo", Arguments: map[string]any{"text": "x"}})
			if err != nil || !res.IsError || !strings.Contains(text(res), "not exposed") {
				t.Errorf("call of a tool denied since = %+v, %v", res, err)
			}
			e.g.Refresh()
			tools, err = cs.ListTools(ctx, nil)
			if err != nil || slices.ContainsFunc(tools.Tools, func(x *mcp.Tool) bool { return x.Name == "tool_alpha_echo" }) {
				t.Errorf("after Refresh, tools = %+v, %v", tools, err)
			}
		})
	}
}

// TestUpstreamDown: a call that races its server's disconnect is a tool
// error the model can read; the server's tools then disappear (with
// list_changed), and come back with it.
func TestUpstreamDown(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	changed := make(chan struct{}, 16)
	cs := e.connect(eraSessions, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	callRacingDisconnect(ctx, t, e, cs)
	waitTool(t, cs, changed, "tool_beta_echo", false)
	// alpha is unaffected.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_echo", Arguments: map[string]any{"text": "up"}})
	if err != nil || text(res) != "echo: up" {
		t.Errorf("alpha while beta is down = %+v, %v", res, err)
	}
	e.betaHTTP.Restart()
	if _, err := e.a.Reconnect(ctx, "beta"); err != nil {
		t.Fatal(err)
	}
	waitTool(t, cs, changed, "tool_beta_echo", true)
}

// TestSampling: an upstream server's sampling request reaches the
// downstream client that declared sampling, and the model's answer
// reaches the server.
func TestSampling(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	// The gateway set the agent's sampling handler: sessions started since
	// offer sampling upstream.
	if _, err := e.a.Reconnect(ctx, "beta"); err != nil {
		t.Fatal(err)
	}
	cs := e.connect(eraSessions, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m1", Role: "assistant", Content: &mcp.TextContent{Text: "hi"}}, nil
		},
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_sample", Arguments: map[string]any{}})
	if err != nil || res.IsError || text(res) != "m1:hi" {
		t.Fatalf("sample = %+v, %v", res, err)
	}
	// A client without sampling: the agent has no handler either, so the
	// server's request fails, and the call with it.
	plain := e.connect(eraSessions, nil)
	res, err = plain.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_sample", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Errorf("sample without a client that samples = %+v", res)
	}
}

// TestElicitationStateless: a 2026-07-28 client has no session to be
// asked on; an upstream elicitation during its call (from a 2025-11-25
// server's request, or a 2026-07-28 server's input-required result)
// reaches it as an input-required result, and its retry's answer reaches
// the server.
func TestElicitationStateless(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	var asked atomic.Int64
	cs := e.connect(eraStateless, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	for _, s := range []string{"alpha", "beta"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_" + s + "_ask", Arguments: map[string]any{}})
		if err != nil || res.IsError || text(res) != "accept:Ada" {
			t.Errorf("%s's ask = %+v, %v", s, res, err)
		}
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("the client was asked %d times; want 2", n)
	}
	// Without the capability: the agent's pending elicitation.
	plain := e.connect(eraStateless, nil)
	defer declineAgentElicitations(e)()
	res, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_ask", Arguments: map[string]any{}})
	if err != nil || text(res) != "decline:" {
		t.Errorf("ask without the capability = %+v, %v", res, err)
	}
}

// contentTypes records the Content-Type of each response to a POST.
type contentTypes struct {
	mu  sync.Mutex
	got []string
}

func (c *contentTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost {
		c.mu.Lock()
		c.got = append(c.got, resp.Header.Get("Content-Type"))
		c.mu.Unlock()
	}
	return resp, err
}

func (c *contentTypes) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

// TestStatelessJSONResponse: a 2026-07-28 request that asks for no
// progress is answered with application/json; one with a progress token
// gets an event stream, which carries its progress.
func TestStatelessJSONResponse(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	ct := &contentTypes{}
	progress := make(chan *mcp.ProgressNotificationParams, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.URL, HTTPClient: &http.Client{Transport: ct}},
		&mcp.ClientSessionOptions{ProtocolVersion: eraStateless})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ct.take()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_echo", Arguments: map[string]any{"text": "a"}})
	if err != nil || text(res) != "echo: a" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	if got := ct.take(); len(got) != 1 || !strings.HasPrefix(got[0], "application/json") {
		t.Errorf("a call without progress was answered with %q; want application/json", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_progress", Arguments: map[string]any{"steps": 2},
		Meta: mcp.Meta{"progressToken": "p"}})
	if err != nil || text(res) != "done in 2 steps" {
		t.Fatalf("progress call = %+v, %v", res, err)
	}
	if got := ct.take(); len(got) != 1 || !strings.HasPrefix(got[0], "text/event-stream") {
		t.Errorf("a call with a progress token was answered with %q; want text/event-stream", got)
	}
	for i := 1; i <= 2; i++ {
		select {
		case p := <-progress:
			if p.Progress != float64(i) {
				t.Errorf("progress %d = %+v", i, p)
			}
		case <-ctx.Done():
			t.Fatalf("progress %d did not arrive", i)
		}
	}
}
