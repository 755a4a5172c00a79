package mcpclient_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/agentmcp/agentmcp/internal/mcptest"
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
