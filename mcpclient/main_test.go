package mcpclient_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/internal/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newManager returns a Manager closed when the test ends.
func newManager(t testing.TB, opts *mcpclient.Options) *mcpclient.Manager {
	t.Helper()
	m := mcpclient.New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// testCtx is a context bounded as a safety net.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connectReady registers, connects and discovers a server, failing the
// test unless it ends ready.
func connectReady(t testing.TB, m *mcpclient.Manager, id string, opts mcpclient.ServerOptions) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := m.RegisterServer(ctx, id, opts); err != nil {
		t.Fatal(err)
	}
	res, err := m.ConnectToServer(ctx, id)
	if err != nil || res.State != mcpclient.StateConnected {
		t.Fatalf("ConnectToServer(%s) = %+v, %v; want connected", id, res, err)
	}
	d, err := m.DiscoverIfConnected(ctx, id, nil)
	if err != nil || !d.Success || d.State != mcpclient.StateReady {
		t.Fatalf("DiscoverIfConnected(%s) = %+v, %v; want ready", id, d, err)
	}
}

func inProcess(s *mcptest.Server) mcpclient.InProcessFactory {
	return func(context.Context, map[string]any) (*mcp.Server, error) { return s.Server, nil }
}

// textOf returns the first text content of a tool result.
func textOf(t testing.TB, r *mcp.CallToolResult) string {
	t.Helper()
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	t.Fatalf("no text in result %+v", r)
	return ""
}
