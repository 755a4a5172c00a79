package mcpclient_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pooledConns counts the connections net/http holds open in this process
// (one read loop goroutine each).
func pooledConns() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("net/http.(*persistConn).readLoop("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestIdleSessionConnections: an idle 2025-11-25 session of a Manager with
// its default HTTP client holds its GET stream on a connection of its own,
// outside net/http's pool: net/http then keeps at most the one connection
// its requests go on, not a second one (with its read and write loop
// goroutines and buffers) for the stream. (Not parallel: it counts the
// process's connections.)
func TestIdleSessionConnections(t *testing.T) {
	const n = 4
	m := newManager(t, nil)
	before := pooledConns()
	for i := range n {
		srv := mcptest.NewServer("s")
		hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
		id := string(rune('a' + i))
		ctx := testCtx(t)
		if _, err := m.RegisterServer(ctx, id, mcpclient.ServerOptions{URL: hs.URL,
			Client: mcpclient.ClientOptions{ProtocolVersion: "2025-11-25"}}); err != nil {
			t.Fatal(err)
		}
		if res, err := m.ConnectToServer(ctx, id); err != nil || res.State != mcpclient.StateConnected {
			t.Fatalf("ConnectToServer = %+v, %v", res, err)
		}
	}
	got := pooledConns() - before
	t.Logf("%d idle sessions: %d connections in net/http's pool", n, got)
	if got >= 2*n {
		t.Errorf("%d idle sessions hold %d net/http connections; want fewer than two each (the GET stream on a connection of its own)", n, got)
	}
}
