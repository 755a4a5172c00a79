//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitEras are the two eras of streamable HTTP: 2026-07-28 input
// requests (multi round-trip) and legacy server requests.
var elicitEras = []struct {
	name    string
	mode    mcptest.Mode
	version string
}{
	{"2026-07-28", mcptest.Stateless, "2026-07-28"},
	{"2025-11-25", mcptest.Stateful, "2025-11-25"},
}

// bookState is the opaque request state of "book": characters a careless
// client might re-encode.
const bookState = "st\u00e9\"te\\ +/= \u2028<>&"

var bookSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":   map[string]any{"type": "string"},
		"nights": map[string]any{"type": "integer", "default": 2},
	},
	"required": []any{"name"},
}

// elicitServer is a go-sdk server whose tools ask the client for input.
// The input-request tools work in both eras: go-sdk's server turns input
// requests into server requests for legacy clients.
//
//   - "book": one form-mode input request;
//   - "two-step": two rounds of input, the second keyed on the first;
//   - "open-url": one URL-mode input request;
//   - "sample": a sampling input request; "roots": a roots input request;
//   - "ask" (legacy only): elicitation/create in the mode given, with the
//     tool's context (or, with detached, a context that the call's
//     cancellation does not reach, as in servers that do not propagate it);
//   - "needs-url" (legacy only): fails with -32042 until the elicitation
//     it lists is completed (see complete);
//   - "caps": the client capabilities of the request, as JSON;
//   - resources "test://confirm" (an input request, then a result with a
//     one-minute TTL) and "test://cached" (the same TTL, no input).
type elicitServer struct {
	*mcp.Server

	reads, confirmReads atomic.Int64 // resources/read calls of each resource
	rounds              atomic.Int64 // calls of tools and resources that take input
	rootsChanged        chan struct{}
	// asked gets what Elicit returned to each "ask" call, when it returns.
	asked chan error

	mu        sync.Mutex
	completed map[string]bool
	sessions  map[string]*mcp.ServerSession // by elicitation id
}

func newElicitServer() *elicitServer {
	s := &elicitServer{completed: map[string]bool{}, sessions: map[string]*mcp.ServerSession{}, rootsChanged: make(chan struct{}, 16), asked: make(chan error, 16)}
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "elicit", Version: "1.0.0"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { s.rootsChanged <- struct{}{} },
	})
	obj := map[string]any{"type": "object"}
	tool := func(name string, h mcp.ToolHandler) { s.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, h) }

	tool("book", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.rounds.Add(1)
		r, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{RequestState: bookState, InputRequests: mcp.InputRequestMap{
				"confirm": &mcp.ElicitParams{Message: "Who is the room for?", RequestedSchema: bookSchema}}}, nil
		}
		if req.Params.RequestState != bookState {
			return errorResult(fmt.Sprintf("requestState came back as %q", req.Params.RequestState)), nil
		}
		if r.Action != "accept" {
			return textResult(r.Action), nil
		}
		return textResult(fmt.Sprintf("booked for %v, %v nights", r.Content["name"], r.Content["nights"])), nil
	})
	tool("two-step", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.rounds.Add(1)
		ask := func(key, state string) *mcp.CallToolResult {
			return &mcp.CallToolResult{RequestState: state, InputRequests: mcp.InputRequestMap{key: &mcp.ElicitParams{
				Message: key, RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{key: map[string]any{"type": "string"}}}}}}
		}
		switch req.Params.RequestState {
		case "":
			return ask("first", "step-1"), nil
		case "step-1":
			r, ok := req.Params.InputResponses["first"].(*mcp.ElicitResult)
			if !ok {
				return ask("first", "step-1"), nil
			}
			return ask("second", "step-2|"+fmt.Sprint(r.Content["first"])), nil
		default:
			first, _ := strings.CutPrefix(req.Params.RequestState, "step-2|")
			r, ok := req.Params.InputResponses["second"].(*mcp.ElicitResult)
			if !ok || len(req.Params.InputResponses) != 1 {
				return errorResult(fmt.Sprintf("round 2 got %d responses", len(req.Params.InputResponses))), nil
			}
			return textResult(first + "+" + fmt.Sprint(r.Content["second"])), nil
		}
	})
	tool("open-url", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, ok := req.Params.InputResponses["link"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"link": &mcp.ElicitParams{Mode: "url",
				Message: "Connect your account", URL: "https://auth.example.com/connect?ticket=secret", ElicitationID: "link-1"}}}, nil
		}
		return textResult("url: " + r.Action), nil
	})
	tool("sample", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, ok := req.Params.InputResponses["llm"].(*mcp.CreateMessageWithToolsResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"llm": &mcp.CreateMessageParams{MaxTokens: 50,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hi"}}}}}}, nil
		}
		var text string
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return textResult(r.Model + ": " + text), nil
	})
	tool("roots", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil
		}
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.Name+"="+root.URI)
		}
		return textResult(strings.Join(uris, ",")), nil
	})
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"mode": map[string]any{"type": "string"}, "detached": map[string]any{"type": "boolean"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				Mode     string
				Detached bool
			}
			json.Unmarshal(req.Params.Arguments, &args)
			params := &mcp.ElicitParams{Mode: "form", Message: "Your name?", RequestedSchema: bookSchema}
			if args.Mode == "url" {
				params = &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://auth.example.com/", ElicitationID: "ask-1"}
			}
			if args.Detached {
				ctx = context.WithoutCancel(ctx)
			}
			r, err := req.Session.Elicit(ctx, params)
			select {
			case s.asked <- err:
			default:
			}
			if err != nil {
				return errorResult("elicit: " + err.Error()), nil
			}
			return textResult(fmt.Sprintf("%s %v", r.Action, r.Content["name"])), nil
		})
	tool("needs-url", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.mu.Lock()
		done := s.completed["grant-1"]
		s.sessions["grant-1"] = req.Session
		s.mu.Unlock()
		if !done {
			return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", Message: "Grant access",
				URL: "https://auth.example.com/grant?x=1", ElicitationID: "grant-1"}})
		}
		return textResult("granted"), nil
	})
	tool("caps", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		data, err := json.Marshal(advertised(req.ClientCapabilities()))
		if err != nil {
			return nil, err
		}
		return textResult(string(data)), nil
	})

	s.AddResource(&mcp.Resource{URI: "test://confirm", Name: "confirm"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			s.reads.Add(1)
			r, ok := req.Params.InputResponses["ok"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.ReadResourceResult{RequestState: bookState, InputRequests: mcp.InputRequestMap{
					"ok": &mcp.ElicitParams{Message: "Read it?", RequestedSchema: map[string]any{"type": "object"}}}}, nil
			}
			if req.Params.RequestState != bookState {
				return nil, fmt.Errorf("requestState came back as %q", req.Params.RequestState)
			}
			n := s.confirmReads.Add(1)
			res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: fmt.Sprintf("%s #%d", r.Action, n)}}}
			res.TTLMs = 60000
			return res, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://cached", Name: "cached"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			n := s.reads.Add(1)
			res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: fmt.Sprintf("read #%d", n)}}}
			res.TTLMs = 60000
			return res, nil
		})
	return s
}

// complete marks a URL elicitation completed and tells the client.
func (s *elicitServer) complete(t *testing.T, id string) {
	t.Helper()
	s.mu.Lock()
	s.completed[id] = true
	ss := s.sessions[id]
	s.mu.Unlock()
	if err := ss.NotifyElicitationComplete(testCtx(t), &mcp.ElicitationCompleteParams{ElicitationID: id}); err != nil {
		t.Fatal(err)
	}
}

// caps is what "caps" reports: which capabilities the client advertised.
type caps struct {
	Form, URL, Sampling, Roots, RootsListChanged bool
	Elicitation                                  bool
}

func advertised(c *mcp.ClientCapabilities) caps {
	var out caps
	if c == nil {
		return out
	}
	if e := c.Elicitation; e != nil {
		out.Elicitation, out.Form, out.URL = true, e.Form != nil, e.URL != nil
	}
	out.Sampling = c.Sampling != nil
	if c.RootsV2 != nil {
		out.Roots, out.RootsListChanged = true, c.RootsV2.ListChanged
	}
	return out
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func errorResult(s string) *mcp.CallToolResult {
	r := textResult(s)
	r.IsError = true
	return r
}

// serveElicit serves a fresh elicitServer in mode and registers it with m
// as "s", connected.
func serveElicit(t *testing.T, m *mcpclient.Manager, mode mcptest.Mode) *elicitServer {
	t.Helper()
	srv := newElicitServer()
	hs := mcptest.Serve(t, mode, func() *mcp.Server { return srv.Server })
	ctx := testCtx(t)
	if _, err := m.RegisterServer(ctx, "s", mcpclient.ServerOptions{URL: hs.URL}); err != nil {
		t.Fatal(err)
	}
	if res, err := m.ConnectToServer(ctx, "s"); err != nil || res.State != mcpclient.StateConnected {
		t.Fatalf("connect: %+v %v", res, err)
	}
	return srv
}

// callText calls a tool and returns its text, failing on errors and tool
// errors.
func callText(t *testing.T, m *mcpclient.Manager, tool string, args map[string]any) string {
	t.Helper()
	res, err := m.CallTool(testCtx(t), "s", tool, args, nil)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %q", tool, textOf(t, res))
	}
	return textOf(t, res)
}

// answer returns a handler that gives res and records the requests.
func answer(res *mcp.ElicitResult, seen chan<- *input.ElicitationRequest) func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
	return func(_ context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
		if seen != nil {
			seen <- req
		}
		if serverID != req.ServerID {
			return nil, fmt.Errorf("serverID %q, request for %q", serverID, req.ServerID)
		}
		return res, nil
	}
}

// TestElicitationForm: a tool that asks for a form gets the handler's
// answer, with the schema's defaults filled in, in both eras; decline and
// cancel reach the server; the request state comes back byte for byte.
func TestElicitationForm(t *testing.T) {
	for _, era := range elicitEras {
		for _, tt := range []struct {
			answer *mcp.ElicitResult
			want   string
		}{
			{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, "booked for Ada, 2 nights"},
			{&mcp.ElicitResult{Action: "decline"}, "decline"},
			{&mcp.ElicitResult{Action: "cancel"}, "cancel"},
		} {
			t.Run(era.name+"/"+tt.answer.Action, func(t *testing.T) {
				t.Parallel()
				m := newManager(t, nil)
				seen := make(chan *input.ElicitationRequest, 1)
				m.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: answer(tt.answer, seen)})
				srv := serveElicit(t, m, era.mode)
				if info, _ := m.Server("s"); info.ProtocolVersion != era.version {
					t.Fatalf("negotiated %s", info.ProtocolVersion)
				}
				if got := callText(t, m, "book", nil); got != tt.want {
					t.Errorf("book = %q, want %q", got, tt.want)
				}
				req := <-seen
				var schema map[string]any
				if err := json.Unmarshal(req.RequestedSchema, &schema); err != nil {
					t.Fatalf("schema %s: %v", req.RequestedSchema, err)
				}
				if req.ServerID != "s" || req.Mode != "form" || req.Message != "Who is the room for?" || req.URL != "" ||
					!cmp.Equal(schema, map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
						"name": map[string]any{"type": "string"}, "nights": map[string]any{"type": "integer", "default": float64(2)}}}) {
					t.Errorf("request %+v, schema %s", req, req.RequestedSchema)
				}
				if n := srv.rounds.Load(); n != 2 {
					t.Errorf("the tool ran %d times, want 2", n)
				}
			})
		}
	}
}

// TestElicitationRounds: input over two rounds, each answered by the
// handler; the second round's retry carries only the second answer.
func TestElicitationRounds(t *testing.T) {
	for _, era := range elicitEras[:1] { // legacy servers turn each round into one request
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, nil)
			m.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: func(_ context.Context, req *input.ElicitationRequest, _ string) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{req.Message: strings.ToUpper(req.Message)}}, nil
			}})
			srv := serveElicit(t, m, era.mode)
			if got := callText(t, m, "two-step", nil); got != "FIRST+SECOND" {
				t.Errorf("two-step = %q", got)
			}
			if n := srv.rounds.Load(); n != 3 {
				t.Errorf("%d rounds, want 3", n)
			}
		})
	}
}

// TestElicitationURL: URL-mode requests reach the URL handler, in both
// eras, and its answer reaches the server.
func TestElicitationURL(t *testing.T) {
	for _, era := range elicitEras {
		for _, action := range []string{"accept", "decline", "cancel"} {
			t.Run(era.name+"/"+action, func(t *testing.T) {
				t.Parallel()
				m := newManager(t, nil)
				seen := make(chan *input.ElicitationRequest, 1)
				m.ConfigureElicitationHandlers(&input.ElicitationHandlers{URL: answer(&mcp.ElicitResult{Action: action}, seen)})
				serveElicit(t, m, era.mode)
				if got := callText(t, m, "open-url", nil); got != "url: "+action {
					t.Errorf("open-url = %q", got)
				}
				req := <-seen
				if req.Mode != "url" || req.URL != "https://auth.example.com/connect?ticket=secret" || req.Message != "Connect your account" ||
					req.RequestedSchema != nil {
					t.Errorf("request %+v", req)
				}
			})
		}
	}
}

// TestElicitationURLRequired: a legacy server that answers -32042 gets its
// URL elicitations run through the URL handler; the client waits for the
// completion notification, then retries once.
func TestElicitationURLRequired(t *testing.T) {
	t.Run("completed", func(t *testing.T) {
		t.Parallel()
		m := newManager(t, nil)
		handled := make(chan *input.ElicitationRequest, 1)
		m.ConfigureElicitationHandlers(&input.ElicitationHandlers{URL: answer(&mcp.ElicitResult{Action: "accept"}, handled)})
		srv := serveElicit(t, m, mcptest.Stateful)
		done := make(chan string, 1)
		go func() {
			res, err := m.CallTool(testCtx(t), "s", "needs-url", nil, nil)
			if err != nil {
				done <- err.Error()
				return
			}
			done <- textOf(t, res)
		}()
		req := <-handled
		if req.Mode != "url" || req.URL != "https://auth.example.com/grant?x=1" || req.ElicitationID != "grant-1" || req.Message != "Grant access" {
			t.Errorf("request %+v", req)
		}
		// The handler has returned; the client waits for the server to say
		// the user is done. Were it to retry now, it would fail again.
		srv.complete(t, "grant-1")
		if got := <-done; got != "granted" {
			t.Errorf("needs-url = %q", got)
		}
	})
	for _, tt := range []struct {
		name   string
		action string
		wait   int // URLCompletionWait: -1 means none
	}{
		{"declined", "decline", 0},
		{"cancelled", "cancel", 0},
		{"not completed", "accept", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, nil)
			m.ConfigureElicitationHandlers(&input.ElicitationHandlers{URL: answer(&mcp.ElicitResult{Action: tt.action}, nil),
				URLCompletionWait: time.Duration(tt.wait)})
			serveElicit(t, m, mcptest.Stateful)
			_, err := m.CallTool(testCtx(t), "s", "needs-url", nil, nil)
			var uerr *input.URLElicitationRequiredError
			if !errors.As(err, &uerr) || !errors.Is(err, input.ErrURLElicitationRequired) {
				t.Fatalf("err = %v, want a URLElicitationRequiredError", err)
			}
			want := tt.action
			if want == "accept" {
				want = "" // the retry failed
			}
			if uerr.Action != want || uerr.ServerID != "s" || len(uerr.Elicitations) != 1 || uerr.Elicitations[0].ElicitationID != "grant-1" {
				t.Errorf("error %+v", uerr)
			}
			if strings.Contains(err.Error(), "x=1") {
				t.Errorf("the error shows the URL's query: %v", err)
			}
		})
	}
}

// TestElicitationNoHandler: a request for a mode without a handler fails
// with an error naming the mode; handler changes apply to the live session.
func TestElicitationNoHandler(t *testing.T) {
	both := &input.ElicitationHandlers{
		Form: answer(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil),
		URL:  answer(&mcp.ElicitResult{Action: "accept"}, nil),
	}
	t.Run("2026-07-28", func(t *testing.T) {
		t.Parallel()
		m := newManager(t, nil)
		m.ConfigureElicitationHandlers(both)
		serveElicit(t, m, mcptest.Stateless)
		m.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: both.Form})
		_, err := m.CallTool(testCtx(t), "s", "open-url", nil, nil)
		if !errors.Is(err, input.ErrNoHandler) || !strings.Contains(err.Error(), "url-mode") {
			t.Errorf("err = %v, want ErrNoHandler naming url mode", err)
		}
		if got := callText(t, m, "book", nil); got != "booked for Ada, 2 nights" {
			t.Errorf("book = %q", got)
		}
	})
	t.Run("2025-11-25", func(t *testing.T) {
		t.Parallel()
		m := newManager(t, nil)
		m.ConfigureElicitationHandlers(both)
		serveElicit(t, m, mcptest.Stateful)
		m.ConfigureElicitationHandlers(&input.ElicitationHandlers{URL: both.URL})
		res, err := m.CallTool(testCtx(t), "s", "ask", map[string]any{"mode": "form"}, nil)
		if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "no form-mode elicitation handler") {
			t.Errorf("ask form: %v %+v", err, res)
		}
		if got := callText(t, m, "ask", map[string]any{"mode": "url"}); got != "accept <nil>" {
			t.Errorf("ask url = %q", got)
		}
	})
}

// TestElicitationCancel: cancelling the call cancels the handler's
// context: in 2026-07-28 (the handler runs within the call), and in the
// legacy era both when the server cancels its request and when it does not.
func TestElicitationCancel(t *testing.T) {
	for _, tt := range []struct {
		name string
		mode mcptest.Mode
		tool string
		args map[string]any
	}{
		{"2026-07-28", mcptest.Stateless, "book", nil},
		{"2025-11-25", mcptest.Stateful, "ask", map[string]any{"mode": "form"}},
		{"2025-11-25 server does not cancel", mcptest.Stateful, "ask", map[string]any{"mode": "form", "detached": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, nil)
			started, ended := make(chan struct{}), make(chan error, 1)
			safety := testCtx(t) // a safety net only: the test fails if it ends this way
			m.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: func(ctx context.Context, _ *input.ElicitationRequest, _ string) (*mcp.ElicitResult, error) {
				close(started)
				select {
				case <-ctx.Done():
					ended <- ctx.Err()
					return nil, ctx.Err()
				case <-safety.Done():
					ended <- errors.New("the handler's context was never cancelled")
					return nil, errors.New("gone")
				}
			}})
			srv := serveElicit(t, m, tt.mode)
			if tt.tool != "ask" {
				srv = nil // the tool does not wait for the client
			}
			detached, _ := tt.args["detached"].(bool)
			ctx, cancel := context.WithCancel(testCtx(t))
			errc := make(chan error, 1)
			go func() {
				_, err := m.CallTool(ctx, "s", tt.tool, tt.args, nil)
				errc <- err
			}()
			<-started
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("call: %v, want context.Canceled", err)
			}
			if err := <-ended; !errors.Is(err, context.Canceled) {
				t.Errorf("handler ctx: %v", err)
			}
			if srv != nil {
				// The server learns that the call is over, from the
				// client's notifications/cancelled or from its answer to
				// elicitation/create (the only way when the server does
				// not cancel). Both travel on requests of their own, which
				// the next call may overtake: wait for the tool to end.
				select {
				case err := <-srv.asked:
					if err == nil || detached && !strings.Contains(err.Error(), "elicitation handler") {
						t.Errorf("the server's elicitation ended with %v, want the client's error answer", err)
					}
				case <-safety.Done():
					t.Fatal("the server never learned that the call was cancelled")
				}
			}
			// The session is still usable.
			m.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: answer(&mcp.ElicitResult{Action: "decline"}, nil)})
			if got := callText(t, m, "book", nil); got != "decline" {
				t.Errorf("book after the cancellation = %q", got)
			}
		})
	}
}

// TestAdvertisement: sessions advertise exactly the configured elicitation
// modes, sampling when a handler is set and roots when roots are set; a
// change applies to the next session.
func TestAdvertisement(t *testing.T) {
	form := answer(&mcp.ElicitResult{Action: "decline"}, nil)
	url := answer(&mcp.ElicitResult{Action: "decline"}, nil)
	sample := func(context.Context, *mcp.CreateMessageParams, string) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("no")
	}
	tests := []struct {
		name     string
		handlers *input.ElicitationHandlers
		sampling bool
		roots    []*mcp.Root
		want     caps
	}{
		{"none", nil, false, nil, caps{}},
		{"form", &input.ElicitationHandlers{Form: form}, false, nil, caps{Elicitation: true, Form: true}},
		{"url", &input.ElicitationHandlers{URL: url}, false, nil, caps{Elicitation: true, URL: true}},
		{"both", &input.ElicitationHandlers{Form: form, URL: url}, false, nil, caps{Elicitation: true, Form: true, URL: true}},
		{"sampling", nil, true, nil, caps{Sampling: true}},
		{"roots", nil, false, []*mcp.Root{}, caps{Roots: true, RootsListChanged: true}},
		{"all", &input.ElicitationHandlers{Form: form, URL: url}, true, []*mcp.Root{{URI: "file:///w"}},
			caps{Elicitation: true, Form: true, URL: true, Sampling: true, Roots: true, RootsListChanged: true}},
	}
	for _, era := range elicitEras {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				m := newManager(t, nil)
				if tt.handlers != nil {
					m.ConfigureElicitationHandlers(tt.handlers)
				}
				if tt.sampling {
					m.ConfigureSampling(sample)
				}
				m.ConfigureRoots(tt.roots)
				serveElicit(t, m, era.mode)
				var got caps
				json.Unmarshal([]byte(callText(t, m, "caps", nil)), &got)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("the server saw (-want +got):\n%s", diff)
				}
				info, _ := m.Server("s")
				if diff := cmp.Diff(tt.want, advertised(info.Advertised)); diff != "" {
					t.Errorf("ServerInfo.Advertised (-want +got):\n%s", diff)
				}
			})
		}
		t.Run(era.name+"/cleared", func(t *testing.T) {
			t.Parallel()
			m := newManager(t, nil)
			rec := record(m)
			m.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: form, URL: url})
			serveElicit(t, m, era.mode)
			m.ConfigureElicitationHandlers(nil)
			rec.waitFor(t, "advertisement event", func(ev mcpclient.Event) bool {
				return ev.Kind == mcpclient.EventAdvertisementChanged && ev.ServerID == "s"
			})
			info, _ := m.Server("s")
			if info.Elicitation != nil || !advertised(info.Advertised).Elicitation {
				t.Errorf("after clearing: next %+v, current %+v", info.Elicitation, info.Advertised)
			}
			// The live session still advertises both, but has no handler.
			if res, err := m.CallTool(testCtx(t), "s", "book", nil, nil); err == nil && !res.IsError {
				t.Errorf("book without a handler: %+v", res)
			}
			if res, err := m.ConnectToServer(testCtx(t), "s"); err != nil || res.State != mcpclient.StateConnected {
				t.Fatalf("reconnect: %+v %v", res, err)
			}
			if got := callText(t, m, "caps", nil); got != `{"Form":false,"URL":false,"Sampling":false,"Roots":false,"RootsListChanged":false,"Elicitation":false}` {
				t.Errorf("after reconnecting: %s", got)
			}
		})
	}
}

// TestAdvertisementSeed: a server's seed is advertised until handlers are
// configured, for one successful handshake.
func TestAdvertisementSeed(t *testing.T) {
	seed := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
	for _, era := range elicitEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			srv := newElicitServer()
			hs := mcptest.Serve(t, era.mode, func() *mcp.Server { return srv.Server })
			m := newManager(t, nil)
			rec := record(m)
			ctx := testCtx(t)
			m.RegisterServer(ctx, "s", mcpclient.ServerOptions{URL: hs.URL, Client: mcpclient.ClientOptions{Capabilities: seed}})
			if info, _ := m.Server("s"); !advertised(&mcp.ClientCapabilities{Elicitation: info.Elicitation}).URL {
				t.Errorf("before connecting, next %+v", info.Elicitation)
			}
			if res, _ := m.ConnectToServer(ctx, "s"); res.State != mcpclient.StateConnected {
				t.Fatal(res.Err)
			}
			if got := callText(t, m, "caps", nil); !strings.Contains(got, `"URL":true`) {
				t.Errorf("seeded session: %s", got)
			}
			rec.waitFor(t, "seed spent", func(ev mcpclient.Event) bool {
				return ev.Kind == mcpclient.EventAdvertisementChanged && ev.ServerID == "s"
			})
			if info, _ := m.Server("s"); info.Elicitation != nil {
				t.Errorf("after the seeded handshake, next %+v", info.Elicitation)
			}
			m.ConnectToServer(ctx, "s")
			if got := callText(t, m, "caps", nil); strings.Contains(got, `"Elicitation":true`) {
				t.Errorf("second session: %s", got)
			}

			// Handlers configured before the handshake win over the seed.
			m2 := newManager(t, nil)
			m2.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: answer(&mcp.ElicitResult{Action: "decline"}, nil)})
			m2.RegisterServer(ctx, "s", mcpclient.ServerOptions{URL: hs.URL, Client: mcpclient.ClientOptions{Capabilities: seed}})
			m2.ConnectToServer(ctx, "s")
			res, err := m2.CallTool(ctx, "s", "caps", nil, nil)
			if err != nil || !strings.Contains(textOf(t, res), `"Form":true,"URL":false`) {
				t.Errorf("handlers and seed: %v %v", res, err)
			}
		})
	}
}

// TestInputNotCached: a resource read that took input is not served from
// go-sdk's cache, though its result has a TTL, while a plain one is; the
// request state comes back unchanged.
func TestInputNotCached(t *testing.T) {
	m := newManager(t, nil)
	var asked atomic.Int64
	m.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
	}})
	srv := serveElicit(t, m, mcptest.Stateless)
	ctx := testCtx(t)
	read := func(uri string) string {
		t.Helper()
		res, err := m.ReadResource(ctx, "s", uri)
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		return res.Contents[0].Text
	}
	if a, b := read("test://cached"), read("test://cached"); a != "read #1" || b != a {
		t.Fatalf("plain reads: %q, %q; the cache is not in use, so this test proves nothing", a, b)
	}
	if a, b := read("test://confirm"), read("test://confirm"); a != "accept #1" || b != "accept #2" {
		t.Errorf("reads that took input: %q, %q", a, b)
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("the handler was asked %d times, want 2", n)
	}
	if n := srv.reads.Load(); n != 5 {
		t.Errorf("the server got %d reads, want 5", n)
	}
}

// TestSamplingAndRoots: sampling requests reach the handler and roots the
// server, in both eras; legacy servers hear when the roots change.
func TestSamplingAndRoots(t *testing.T) {
	for _, era := range elicitEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, nil)
			m.ConfigureSampling(func(_ context.Context, req *mcp.CreateMessageParams, serverID string) (*mcp.CreateMessageResult, error) {
				text := req.Messages[0].Content.(*mcp.TextContent).Text
				return &mcp.CreateMessageResult{Model: "test-" + serverID, Role: "assistant", Content: &mcp.TextContent{Text: text + "!"}}, nil
			})
			m.ConfigureRoots([]*mcp.Root{{URI: "file:///b", Name: "b"}, {URI: "file:///a", Name: "a"}})
			srv := serveElicit(t, m, era.mode)
			if got := callText(t, m, "sample", nil); got != "test-s: Say hi!" {
				t.Errorf("sample = %q", got)
			}
			if got := callText(t, m, "roots", nil); got != "a=file:///a,b=file:///b" {
				t.Errorf("roots = %q", got)
			}
			m.ConfigureRoots([]*mcp.Root{{URI: "file:///a", Name: "A"}, {URI: "file:///c", Name: "c"}})
			if era.mode == mcptest.Stateful {
				<-srv.rootsChanged
			}
			if got := callText(t, m, "roots", nil); got != "A=file:///a,c=file:///c" {
				t.Errorf("roots after the change = %q", got)
			}
			m.ConfigureSampling(nil)
			if _, err := m.CallTool(testCtx(t), "s", "sample", nil, nil); era.mode == mcptest.Stateless && !errors.Is(err, input.ErrNoHandler) {
				t.Errorf("sample without a handler: %v", err)
			}
		})
	}
}
