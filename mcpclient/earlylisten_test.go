package mcpclient_test

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listenOrder serves mcptest's server statelessly (2026-07-28) and
// watches the order of a connect's requests:
//
//   - server/discover is held until a subscriptions/listen arrives (or, as
//     a safety net only, 10 s): beside reports whether one came while it
//     was held;
//   - the listen's response head goes out at once, then the listen is held
//     before the server takes it (its subscription not made yet) until the
//     first tools/list is answered or holdListen passes; early reports
//     whether a tools/list arrived before the subscription was
//     acknowledged;
//   - a tool is added around each step: "before" while the listen is held,
//     "during" as the first tools/list arrives, "between" once it is
//     answered. A client that listed before the acknowledgment never hears
//     of "between": it was added before the subscription was made, after
//     the list was taken.
type listenOrder struct {
	srv *mcptest.Server

	mu      sync.Mutex
	methods []string
	beside  bool
	early   bool
	acked   bool

	listened chan struct{} // closed when a subscriptions/listen arrives
	listDone chan struct{} // closed once the first tools/list is answered
	once     sync.Once
	listOnce sync.Once
}

// holdListen is how long the listen is held before the server takes it: a
// client that lists before the acknowledgment does so within it.
const holdListen = 200 * time.Millisecond

func (o *listenOrder) serve(t *testing.T) *mcptest.HTTPServer {
	o.srv = mcptest.NewServer("order")
	o.listened = make(chan struct{})
	o.listDone = make(chan struct{})
	h := mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return o.srv.Server })
	return mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		m := anyMethod.FindSubmatch(body)
		if r.Method != http.MethodPost || m == nil {
			h.ServeHTTP(w, r)
			return
		}
		method := string(m[1])
		o.mu.Lock()
		o.methods = append(o.methods, method)
		o.mu.Unlock()
		switch method {
		case "server/discover":
			select {
			case <-o.listened:
				o.mu.Lock()
				o.beside = true
				o.mu.Unlock()
			case <-time.After(10 * time.Second): // a safety net only
			}
		case "subscriptions/listen":
			o.once.Do(func() { close(o.listened) })
			// The head goes out before the server has the subscription:
			// it is no acknowledgment.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			o.srv.AddTool("before")
			select {
			case <-o.listDone:
			case <-time.After(holdListen):
			}
			w = &ackWriter{ResponseWriter: w, acked: func() {
				o.mu.Lock()
				o.acked = true
				o.mu.Unlock()
			}}
		case "tools/list":
			first := false
			o.listOnce.Do(func() { first = true })
			if !first {
				break
			}
			o.mu.Lock()
			o.early = !o.acked
			o.mu.Unlock()
			o.srv.AddTool("during")
			h.ServeHTTP(w, r)
			o.srv.AddTool("between")
			close(o.listDone)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

func (o *listenOrder) count(method string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, m := range o.methods {
		if m == method {
			n++
		}
	}
	return n
}

// ackWriter calls acked before the first bytes the server writes on the
// listen's stream (its acknowledgment) can go out.
type ackWriter struct {
	http.ResponseWriter
	acked func()
}

func (w *ackWriter) WriteHeader(int) {} // sent already

func (w *ackWriter) Write(b []byte) (int, error) {
	w.acked()
	return w.ResponseWriter.Write(b)
}

func (w *ackWriter) Flush() {
	w.acked()
	w.ResponseWriter.(http.Flusher).Flush()
}

// TestEarlyListen: a 2026-07-28 session sends its subscriptions/listen
// beside server/discover (the server holds discover until it comes), one
// listen only (go-sdk's is answered by it), and lists only once the
// listen's acknowledgment was read, not its head: no tools/list arrives
// while the server holds the listen. No tool added around the connect is
// lost: those added before the list was taken are in it, and the one
// added after it reaches the client by tools/list_changed.
func TestEarlyListen(t *testing.T) {
	for _, toolsOnly := range []bool{true, false} {
		name := "every list"
		if toolsOnly {
			name = "ToolsOnly"
		}
		t.Run(name, func(t *testing.T) {
			m := newManager(t, nil)
			var o listenOrder
			connectReady(t, m, "s", mcpclient.ServerOptions{URL: o.serve(t).URL,
				Client: mcpclient.ClientOptions{ProtocolVersion: "2026-07-28", ToolsOnly: toolsOnly}})
			o.mu.Lock()
			beside, early := o.beside, o.early
			o.mu.Unlock()
			if !beside {
				t.Error("no subscriptions/listen arrived while server/discover was held")
			}
			if early {
				t.Error("tools/list arrived before the listen was acknowledged")
			}
			if n := o.count("subscriptions/listen"); n != 1 {
				t.Errorf("subscriptions/listen sent %d times, want 1", n)
			}
			f := mcpclient.Filter{ServerID: []string{"s"}}
			has := func(name string) bool {
				return slices.ContainsFunc(m.ListTools(f), func(tl mcpclient.Tool) bool { return tl.Name == name })
			}
			for _, name := range []string{"before", "during"} {
				if !has(name) {
					t.Errorf("tool %q, added before the list was taken, is not in the first list", name)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for !has("between") {
				if time.Now().After(deadline) {
					t.Fatal(`tool "between", added once the list was answered, was never listed`)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// TestEarlyListenLegacy: against a 2025-11-25 server, the early listen
// beside the 2026-07-28 probe is refused and dropped; the session falls
// back to initialize, lists, and hears of a change on its GET stream.
func TestEarlyListenLegacy(t *testing.T) {
	m := newManager(t, nil)
	srv := mcptest.NewServer("legacy")
	var l methodLog
	connectReady(t, m, "s", mcpclient.ServerOptions{URL: l.serve(t, mcptest.Stateful, srv).URL,
		Client: mcpclient.ClientOptions{ToolsOnly: true}})
	if l.count("initialize") != 1 || l.count("tools/list") != 1 {
		t.Errorf("requests %v: want one initialize and one tools/list", l.methods)
	}
	srv.AddTool("later")
	f := mcpclient.Filter{ServerID: []string{"s"}}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.ContainsFunc(m.ListTools(f), func(tl mcpclient.Tool) bool { return tl.Name == "later" }) {
		if time.Now().After(deadline) {
			t.Fatal("the tool added later was never listed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEarlyListenNoAck: a server that opens the listen's stream but never
// acknowledges it (against the specification) is waited for a bounded
// time, not for the whole connect timeout: the session connects and lists.
func TestEarlyListenNoAck(t *testing.T) {
	srv := mcptest.NewServer("noack")
	h := mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if m := anyMethod.FindSubmatch(body); m != nil && string(m[1]) == "subscriptions/listen" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		h.ServeHTTP(w, r)
	}))
	m := newManager(t, &mcpclient.Options{ConnectTimeout: 20 * time.Second})
	connectReady(t, m, "s", mcpclient.ServerOptions{URL: hs.URL,
		Client: mcpclient.ClientOptions{ProtocolVersion: "2026-07-28", ToolsOnly: true}})
	if len(m.ListTools(mcpclient.Filter{})) == 0 {
		t.Error("no tools listed")
	}
}
