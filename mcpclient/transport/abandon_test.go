package transport_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

// TestAbandonedHandshakeEndsSession: a legacy handshake whose caller
// gives up after the server made the session, before its answer came,
// does not leave that session open: the answer is awaited in the
// background and the session it names ended (a DELETE) by the time the
// connection is closed.
func TestAbandonedHandshakeEndsSession(t *testing.T) {
	made := make(chan struct{}, 1)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			// The session is made; its answer waits.
			w = &heldAnswer{ResponseWriter: w, held: func() {
				made <- struct{}{}
				<-release
			}}
		}
		real.ServeHTTP(w, r)
	}))
	conn, err := (&transport.Streamable{Endpoint: hs.URL}).Connect(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(&mcp.InitializeParams{ProtocolVersion: "2025-11-25", ClientInfo: &mcp.Implementation{Name: "t", Version: "1"}, Capabilities: &mcp.ClientCapabilities{}})
	id, _ := jsonrpc.MakeID("init-1")
	ctx, cancel := context.WithCancel(testCtx(t))
	called := make(chan error, 1)
	go func() {
		called <- conn.(transport.DirectCaller).CallDirect(ctx, &jsonrpc.Request{ID: id, Method: "initialize", Params: params}, &mcp.InitializeResult{})
	}()
	<-made
	cancel() // the handshake is given up
	if err := <-called; err == nil {
		t.Fatal("a cancelled handshake succeeded")
	}
	once.Do(func() { close(release) }) // the server answers, with the session's id
	if err := conn.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	all, ended := hs.Sessions()
	if len(all) != 1 || !slices.Equal(ended, all) {
		t.Errorf("sessions %q, ended %q; want the abandoned handshake's ended", all, ended)
	}
}

// heldAnswer calls held before the handler's answer begins.
type heldAnswer struct {
	http.ResponseWriter
	held func()
	once sync.Once
}

func (h *heldAnswer) WriteHeader(code int) {
	h.once.Do(h.held)
	h.ResponseWriter.WriteHeader(code)
}

func (h *heldAnswer) Write(p []byte) (int, error) {
	h.once.Do(h.held)
	return h.ResponseWriter.Write(p)
}

func (h *heldAnswer) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// testCtx is a context bounded as a safety net.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
