package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eras are the ways of reaching a go-sdk server over HTTP in each era.
var eras = []struct {
	name    string
	mode    mcptest.Mode
	version string
}{
	{"2026-07-28", mcptest.Stateless, "2026-07-28"},
	{"2025-11-25", mcptest.Stateful, "2025-11-25"},
	{"2024-11-05-sse", mcptest.SSE, "2025-11-25"},
}

// TestListChanged: a tool added on the server reaches the catalog through
// list_changed, in both eras, with an event.
func TestListChanged(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer("s")
			hs := mcptest.Serve(t, era.mode, func() *mcp.Server { return srv.Server })
			m := newManager(t, nil)
			rec := record(m)
			connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
			if info, _ := m.Server("s1"); info.ProtocolVersion != era.version {
				t.Fatalf("negotiated %s, want %s", info.ProtocolVersion, era.version)
			}
			srv.AddTool("late")
			rec.waitFor(t, "tools event", func(ev mcpclient.Event) bool {
				return ev.Kind == mcpclient.EventToolsChanged && ev.ServerID == "s1" &&
					slices.Contains(toolNames(m.ListTools(mcpclient.Filter{})), "s1/late")
			})
			srv.RemoveTools("late")
			rec.waitFor(t, "tool removal", func(ev mcpclient.Event) bool {
				return ev.Kind == mcpclient.EventToolsChanged &&
					!slices.Contains(toolNames(m.ListTools(mcpclient.Filter{})), "s1/late")
			})
		})
	}
}

func TestProgress(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer("s")
			hs := mcptest.Serve(t, era.mode, func() *mcp.Server { return srv.Server })
			m := newManager(t, nil)
			connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
			var mu sync.Mutex
			var got []float64
			res, err := m.CallTool(testCtx(t), "s1", "progress", map[string]any{"steps": 3}, &mcpclient.CallOptions{
				Progress: func(p *mcp.ProgressNotificationParams) {
					mu.Lock()
					got = append(got, p.Progress)
					mu.Unlock()
				}})
			if err != nil {
				t.Fatal(err)
			}
			if textOf(t, res) != "done in 3 steps" {
				t.Errorf("result %q", textOf(t, res))
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(got, []float64{1, 2, 3}) {
				t.Errorf("progress %v, want [1 2 3]", got)
			}
		})
	}
}

// TestCancel: cancelling the caller's context cancels the request on the
// server.
func TestCancel(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer("s")
			hs := mcptest.Serve(t, era.mode, func() *mcp.Server { return srv.Server })
			m := newManager(t, nil)
			connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
			ctx, cancel := context.WithCancel(testCtx(t))
			errc := make(chan error, 1)
			go func() {
				_, err := m.CallTool(ctx, "s1", "slow", nil, nil)
				errc <- err
			}()
			<-srv.SlowStarted
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("call error %v, want context.Canceled", err)
			}
			<-srv.SlowCancelled // the server saw the cancellation
			// The connection is still usable.
			if _, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "x"}, nil); err != nil {
				t.Errorf("call after a cancellation: %v", err)
			}
		})
	}
}

func TestToolError(t *testing.T) {
	m := newManager(t, nil)
	connectReady(t, m, "s1", mcpclient.ServerOptions{InProcess: inProcess(mcptest.NewServer("s"))})
	res, err := m.CallTool(testCtx(t), "s1", "fail", nil, nil)
	if err != nil {
		t.Fatalf("a tool failure is a result, not an error: %v", err)
	}
	if !res.IsError || textOf(t, res) != "it failed" {
		t.Errorf("result %+v", res)
	}
	if _, err := m.CallTool(testCtx(t), "s1", "no-such-tool", nil, nil); err == nil {
		t.Errorf("calling an unknown tool succeeded")
	}
}

// TestRequestIDs: the Manager's direct requests (tools/call and the lists
// through transport.DirectCaller) and go-sdk's own requests (the
// handshake, a call with progress) have ids unique on the session, of two
// kinds (agentmcp-N and go-sdk's integers); a cancelled 2025-11-25 direct
// call is cancelled on the server with notifications/cancelled naming its
// id; on go-sdk's transport (the option) every request is go-sdk's.
func TestRequestIDs(t *testing.T) {
	for _, era := range eras[:2] {
		for _, impl := range []mcpclient.TransportImplementation{mcpclient.ImplementationAgentMCP, mcpclient.ImplementationGoSDK} {
			t.Run(era.name+"/"+string(impl), func(t *testing.T) {
				t.Parallel()
				srv := mcptest.NewServer("s")
				type post struct {
					id     json.RawMessage
					method string
					params json.RawMessage
				}
				var (
					mu    sync.Mutex
					posts []post
				)
				h := mcptest.Handler(t, era.mode, func() *mcp.Server { return srv.Server })
				hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost {
						body, _ := io.ReadAll(r.Body)
						r.Body = io.NopCloser(bytes.NewReader(body))
						var msg struct {
							ID     json.RawMessage `json:"id"`
							Method string          `json:"method"`
							Params json.RawMessage `json:"params"`
						}
						if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
							mu.Lock()
							posts = append(posts, post{msg.ID, msg.Method, msg.Params})
							mu.Unlock()
						}
					}
					h.ServeHTTP(w, r)
				}))
				m := newManager(t, nil)
				connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL, Transport: mcpclient.TransportOptions{Implementation: impl}})
				ctx := testCtx(t)
				for range 2 {
					if _, err := m.CallTool(ctx, "s1", "echo", map[string]any{"text": "x"}, nil); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := m.CallTool(ctx, "s1", "progress", map[string]any{"steps": 1},
					&mcpclient.CallOptions{Progress: func(*mcp.ProgressNotificationParams) {}}); err != nil {
					t.Fatal(err)
				}
				callCtx, cancel := context.WithCancel(ctx)
				errc := make(chan error, 1)
				go func() {
					_, err := m.CallTool(callCtx, "s1", "slow", nil, nil)
					errc <- err
				}()
				<-srv.SlowStarted
				cancel()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Errorf("cancelled call: %v", err)
				}
				<-srv.SlowCancelled

				mu.Lock()
				defer mu.Unlock()
				seen := map[string]string{}
				var slowID json.RawMessage
				for _, p := range posts {
					if p.id == nil {
						continue
					}
					if prev, ok := seen[string(p.id)]; ok {
						t.Errorf("id %s used by %s and %s", p.id, prev, p.method)
					}
					seen[string(p.id)] = p.method
					direct := strings.HasPrefix(string(p.id), `"agentmcp-`)
					var params struct {
						Name string `json:"name"`
					}
					_ = json.Unmarshal(p.params, &params)
					wantDirect := impl == mcpclient.ImplementationAgentMCP && (strings.HasSuffix(p.method, "/list") ||
						p.method == "initialize" || p.method == "server/discover" || (p.method == "tools/call" && params.Name != "progress"))
					if direct != wantDirect {
						t.Errorf("%s %s has id %s; want a direct request: %v", p.method, params.Name, p.id, wantDirect)
					}
					if params.Name == "slow" {
						slowID = p.id
					}
				}
				if era.mode != mcptest.Stateful {
					return // 2026-07-28: closing the stream is the cancellation
				}
				found := false
				for _, p := range posts {
					var cp struct {
						RequestID json.RawMessage `json:"requestId"`
					}
					if p.method == "notifications/cancelled" && json.Unmarshal(p.params, &cp) == nil && bytes.Equal(cp.RequestID, slowID) {
						found = true
					}
				}
				if !found {
					t.Errorf("no notifications/cancelled for the slow call %s", slowID)
				}
			})
		}
	}
}
