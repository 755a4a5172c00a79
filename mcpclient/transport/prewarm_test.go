package transport_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

// TestHandshakePrewarm: with a Dialer, a connection for the standing
// stream and the first requests is dialled while the handshake
// (initialize, server/discover) is in flight, not after its answer: the
// server holds the handshake until a second connection arrives (or, as a
// safety net only, 10 s), and the client still connects, listens and
// lists.
func TestHandshakePrewarm(t *testing.T) {
	for _, era := range standingEras {
		t.Run(era.name, func(t *testing.T) {
			srv := mcptest.NewServer("s")
			h := mcptest.Handler(t, era.mode, func() *mcp.Server { return srv.Server })
			var mu sync.Mutex
			conns := 0
			second := make(chan struct{})
			held := make(chan bool, 1)
			hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if strings.Contains(string(body), `"method":"initialize"`) || strings.Contains(string(body), `"method":"server/discover"`) {
					select {
					case <-second:
						select {
						case held <- true:
						default:
						}
					case <-time.After(10 * time.Second): // a safety net only
						select {
						case held <- false:
						default:
						}
					}
				}
				h.ServeHTTP(w, r)
			}))
			hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s != http.StateNew {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if conns++; conns == 2 {
					close(second)
				}
			}
			hs.Start()
			t.Cleanup(hs.Close)
			var d dialRecorder
			session, changed := connectStanding(t, hs.Client(), hs.URL, &transport.Dialer{DialContext: d.dial}, era.version)
			if !<-held {
				t.Error("no second connection arrived while the handshake was held")
			}
			if _, err := session.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			srv.AddTool("late")
			waitFor(t, changed, "tools/list_changed")
		})
	}
}
