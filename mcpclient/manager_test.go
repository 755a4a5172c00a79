package mcpclient_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func toolNames(tools []mcpclient.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.ServerID+"/"+t.Name)
	}
	slices.Sort(names)
	return names
}

var wantTools = []string{"add", "echo", "fail", "increment", "progress", "slow"}

func prefixed(id string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, id+"/"+n)
	}
	return out
}

// TestTransports connects over every transport and era and checks the
// catalog, a call, and what the Manager recorded.
func TestTransports(t *testing.T) {
	tests := []struct {
		name          string
		mode          mcptest.Mode
		inProcess     bool
		transport     mcpclient.TransportType
		pin           string
		wantTransport mcpclient.TransportType
		wantVersion   string
		wantSession   bool
	}{
		{name: "in-process", inProcess: true, wantTransport: mcpclient.TransportInProcess, wantVersion: "2026-07-28"},
		{name: "stateful/auto", mode: mcptest.Stateful, wantTransport: mcpclient.TransportStreamableHTTP, wantVersion: "2025-11-25", wantSession: true},
		{name: "stateless/auto", mode: mcptest.Stateless, wantTransport: mcpclient.TransportStreamableHTTP, wantVersion: "2026-07-28"},
		{name: "stateless/pinned-legacy", mode: mcptest.Stateless, pin: "2025-11-25", wantTransport: mcpclient.TransportStreamableHTTP, wantVersion: "2025-11-25"},
		{name: "stateless/pinned-modern", mode: mcptest.Stateless, pin: "2026-07-28", wantTransport: mcpclient.TransportStreamableHTTP, wantVersion: "2026-07-28"},
		{name: "sse/auto-fallback", mode: mcptest.SSE, wantTransport: mcpclient.TransportSSE, wantVersion: "2025-11-25"},
		{name: "sse/explicit", mode: mcptest.SSE, transport: mcpclient.TransportSSE, wantTransport: mcpclient.TransportSSE, wantVersion: "2025-11-25"},
		{name: "stateful/explicit", mode: mcptest.Stateful, transport: mcpclient.TransportStreamableHTTP, wantTransport: mcpclient.TransportStreamableHTTP, wantVersion: "2025-11-25", wantSession: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer("s")
			opts := mcpclient.ServerOptions{Name: "Test", Client: mcpclient.ClientOptions{ProtocolVersion: tt.pin},
				Transport: mcpclient.TransportOptions{Type: tt.transport}}
			if tt.inProcess {
				opts.InProcess = inProcess(srv)
			} else {
				opts.URL = mcptest.Serve(t, tt.mode, func() *mcp.Server { return srv.Server }).URL
			}
			m := newManager(t, nil)
			connectReady(t, m, "s1", opts)

			if diff := cmp.Diff(prefixed("s1", wantTools), toolNames(m.ListTools(mcpclient.Filter{}))); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if got := len(m.ListPrompts(mcpclient.Filter{})); got != 1 {
				t.Errorf("%d prompts, want 1", got)
			}
			if got := len(m.ListResources(mcpclient.Filter{})); got != 1 {
				t.Errorf("%d resources, want 1", got)
			}
			if got := len(m.ListResourceTemplates(mcpclient.Filter{})); got != 1 {
				t.Errorf("%d resource templates, want 1", got)
			}
			ctx := testCtx(t)
			res, err := m.CallTool(ctx, "s1", "echo", map[string]any{"text": "hi"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != "echo: hi" {
				t.Errorf("echo = %q", got)
			}
			pr, err := m.GetPrompt(ctx, "s1", "greet", map[string]string{"name": "Ada"})
			if err != nil || len(pr.Messages) != 1 {
				t.Errorf("GetPrompt = %+v, %v", pr, err)
			}
			rr, err := m.ReadResource(ctx, "s1", "test://static")
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "static content" {
				t.Errorf("ReadResource = %+v, %v", rr, err)
			}

			info, _ := m.Server("s1")
			if info.Transport != tt.wantTransport || info.ProtocolVersion != tt.wantVersion {
				t.Errorf("transport %q version %q; want %q %q", info.Transport, info.ProtocolVersion, tt.wantTransport, tt.wantVersion)
			}
			if (info.SessionID != "") != tt.wantSession {
				t.Errorf("session id %q; want one: %v", info.SessionID, tt.wantSession)
			}
			if info.ServerInfo == nil || info.ServerInfo.Name != "s" || info.Instructions != "Test server s." {
				t.Errorf("server info %+v, instructions %q", info.ServerInfo, info.Instructions)
			}
		})
	}
}

// TestTransportRules checks when auto falls back to SSE, and that explicit
// types never do.
func TestTransportRules(t *testing.T) {
	tests := []struct {
		name       string
		mode       mcptest.Mode
		fault      int
		transport  mcpclient.TransportType
		want       mcpclient.State
		wantNotSSE bool     // the SSE transport must not have been tried
		wantErr    []string // in the error, in this order
	}{
		{name: "500 fails without fallback", mode: mcptest.Stateful, fault: http.StatusInternalServerError, want: mcpclient.StateFailed, wantNotSSE: true},
		{name: "401 authenticates without fallback", mode: mcptest.Stateful, fault: http.StatusUnauthorized, want: mcpclient.StateAuthenticating, wantNotSSE: true},
		{name: "404 falls back and fails on SSE too", mode: mcptest.Stateful, fault: http.StatusNotFound, want: mcpclient.StateFailed,
			wantErr: []string{"streamable-http failed: ", "POST ", ": 404 Not Found", "then sse failed: GET ", "404 Not Found"}},
		{name: "400 falls back and fails on SSE too", mode: mcptest.Stateful, fault: http.StatusBadRequest, want: mcpclient.StateFailed,
			wantErr: []string{"streamable-http failed: ", "POST ", ": 400 Bad Request", "then sse failed: GET ", "400 Bad Request"}},
		{name: "403 fails without fallback", mode: mcptest.Stateful, fault: http.StatusForbidden, want: mcpclient.StateFailed, wantNotSSE: true},
		{name: "429 fails without fallback", mode: mcptest.Stateful, fault: http.StatusTooManyRequests, want: mcpclient.StateFailed, wantNotSSE: true},
		{name: "explicit streamable on SSE-only endpoint", mode: mcptest.SSE, transport: mcpclient.TransportStreamableHTTP, want: mcpclient.StateFailed, wantNotSSE: true},
		{name: "explicit SSE on streamable endpoint", mode: mcptest.Stateful, transport: mcpclient.TransportSSE, want: mcpclient.StateFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer("s")
			hs := mcptest.Serve(t, tt.mode, func() *mcp.Server { return srv.Server })
			hs.SetFault(tt.fault)
			var gets int
			m := newManager(t, nil)
			ctx := testCtx(t)
			if _, err := m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: hs.URL, Transport: mcpclient.TransportOptions{Type: tt.transport}}); err != nil {
				t.Fatal(err)
			}
			before := hs.Requests.Load()
			res, err := m.ConnectToServer(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if res.State != tt.want {
				t.Fatalf("state %s (%v), want %s", res.State, res.Err, tt.want)
			}
			_ = gets
			if msg := fmt.Sprint(res.Err); !inOrder(msg, tt.wantErr) {
				t.Errorf("error %q; want %q in it, in order", msg, tt.wantErr)
			}
			info, _ := m.Server("s1")
			if info.State != tt.want {
				t.Errorf("Server().State = %s, want %s", info.State, tt.want)
			}
			if tt.want == mcpclient.StateFailed && info.Error == nil {
				t.Errorf("failed without an error")
			}
			if tt.want == mcpclient.StateAuthenticating && !mcpclient.IsUnauthorized(res.Err) {
				t.Errorf("IsUnauthorized(%v) = false", res.Err)
			}
			// Streamable HTTP costs two POSTs (the 2026-07-28 probe, then
			// initialize); the SSE attempt adds a GET.
			n := hs.Requests.Load() - before
			if tt.wantNotSSE && n > 2 {
				t.Errorf("%d requests: the SSE transport was tried", n)
			}
		})
	}
}

// inOrder reports whether s contains each of subs, in order.
func inOrder(s string, subs []string) bool {
	for _, sub := range subs {
		i := strings.Index(s, sub)
		if i < 0 {
			return false
		}
		s = s[i+len(sub):]
	}
	return true
}

// TestAutoFallbackGoSDKSSE connects with TransportAuto to go-sdk's own SSE
// server, which answers the streamable initialize POST with 400 text/plain
// (not 404 or 405): the Manager falls back to SSE.
func TestAutoFallbackGoSDKSSE(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer("s")
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv.Server }, nil)
	var posts400 atomic.Int64
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if r.Method == http.MethodPost && rec.code == http.StatusBadRequest {
			posts400.Add(1)
		}
	}))
	t.Cleanup(func() {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	})
	m := newManager(t, nil)
	connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
	info, _ := m.Server("s1")
	if info.Transport != mcpclient.TransportSSE || info.ProtocolVersion != "2025-11-25" {
		t.Errorf("transport %q version %q; want sse 2025-11-25", info.Transport, info.ProtocolVersion)
	}
	if posts400.Load() == 0 {
		t.Errorf("the server never answered 400: the test does not test the fallback on 400")
	}
	res, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "hi"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "echo: hi" {
		t.Errorf("echo = %q", got)
	}
}

// statusRecorder records the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
