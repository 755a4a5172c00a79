package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listGauge serves mcptest's server in a mode and counts the list
// requests (tools, prompts, resources, templates) in flight at once: from
// their arrival until their response starts.
// With holdTools, a tools/list is answered only once another list request
// is in flight beside it (or its request ends).
type listGauge struct {
	holdTools bool

	mu      sync.Mutex
	now     int
	max     int
	changed chan struct{} // closed and replaced when max grows
}

// httpEras are the eras of mcptest's streamable HTTP servers.
var httpEras = []struct {
	name string
	mode mcptest.Mode
}{{"2025-11-25", mcptest.Stateful}, {"2026-07-28", mcptest.Stateless}}

var listMethod = regexp.MustCompile(`"method":"(tools|prompts|resources|resources/templates)/list"`)

func (g *listGauge) serve(t *testing.T, mode mcptest.Mode) *mcptest.HTTPServer {
	srv := mcptest.NewServer("lists")
	h := mcptest.Handler(t, mode, func() *mcp.Server { return srv.Server })
	g.changed = make(chan struct{})
	return mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		m := listMethod.FindSubmatch(body)
		if r.Method != http.MethodPost || m == nil {
			h.ServeHTTP(w, r)
			return
		}
		g.add(1)
		aw := &answerWriter{ResponseWriter: w, answering: func() { g.add(-1) }}
		defer aw.answer()
		if g.holdTools && string(m[1]) == "tools" {
			g.waitForCompany(r.Context())
		}
		h.ServeHTTP(aw, r)
	}))
}

// answerWriter calls answering once, when the response starts: the
// client cannot have it, and send what it waits for, before then.
type answerWriter struct {
	http.ResponseWriter
	answering func()
	once      sync.Once
}

func (w *answerWriter) answer() { w.once.Do(w.answering) }

func (w *answerWriter) WriteHeader(code int) {
	w.answer()
	w.ResponseWriter.WriteHeader(code)
}

func (w *answerWriter) Write(b []byte) (int, error) {
	w.answer()
	return w.ResponseWriter.Write(b)
}

func (w *answerWriter) Flush() {
	w.answer()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g *listGauge) add(d int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now += d
	if g.now > g.max {
		g.max = g.now
		close(g.changed)
		g.changed = make(chan struct{})
	}
}

// waitForCompany returns once two list requests have been in flight at
// once.
func (g *listGauge) waitForCompany(ctx context.Context) {
	for {
		g.mu.Lock()
		most, changed := g.max, g.changed
		g.mu.Unlock()
		if most >= 2 {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

func (g *listGauge) maxInFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.max
}

// TestListsOneAfterAnother: a discovery lists a server's catalogs all at
// once when it is the Manager's only connection work, and one after
// another (on one HTTP connection rather than four) while another server's
// handshake is in flight, as when many servers connect at once.
func TestListsOneAfterAnother(t *testing.T) {
	for _, era := range httpEras {
		t.Run(era.name, func(t *testing.T) {
			ctx := testCtx(t)
			m := newManager(t, &mcpclient.Options{DiscoverTimeout: 20 * time.Second})

			// Alone: the lists go out together (a tools/list is answered
			// only once another list is in flight beside it).
			alone := &listGauge{holdTools: true}
			connectReady(t, m, "alone", mcpclient.ServerOptions{URL: alone.serve(t, era.mode).URL})
			if got := alone.maxInFlight(); got < 2 {
				t.Errorf("alone: at most %d list requests in flight, want the lists at once", got)
			}

			// Beside a handshake in flight: one list after another.
			arrived, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			stuck := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				once.Do(func() { close(arrived) })
				select {
				case <-release:
				case <-r.Context().Done():
				}
				http.Error(w, "gone", http.StatusServiceUnavailable)
			}))
			if _, err := m.RegisterServer(ctx, "stuck", mcpclient.ServerOptions{URL: stuck.URL}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			defer wg.Wait()
			defer close(release)
			wg.Go(func() { m.ConnectToServer(ctx, "stuck") })
			select {
			case <-arrived:
			case <-ctx.Done():
				t.Fatal("the stuck server's handshake never arrived")
			}
			busy := &listGauge{}
			connectReady(t, m, "busy", mcpclient.ServerOptions{URL: busy.serve(t, era.mode).URL})
			// Lists sent at once can still reach the server one after
			// another: a few discoveries more make that unlikely.
			for range 9 {
				if d, err := m.DiscoverIfConnected(ctx, "busy", nil); err != nil || !d.Success {
					t.Fatalf("DiscoverIfConnected(busy) = %+v, %v", d, err)
				}
			}
			if got := busy.maxInFlight(); got != 1 {
				t.Errorf("beside a handshake: %d list requests in flight at once, want 1", got)
			}
			if n := len(m.ListTools(mcpclient.Filter{ServerID: []string{"busy"}})); n == 0 {
				t.Error("beside a handshake: no tools listed")
			}
			if n := len(m.ListResourceTemplates(mcpclient.Filter{ServerID: []string{"busy"}})); n == 0 {
				t.Error("beside a handshake: no resource templates listed")
			}
		})
	}
}

// TestModernListMeta: a 2026-07-28 session's lists, sent past go-sdk's
// session method, carry the request _meta go-sdk gives the session's
// requests (its subscriptions/listen's): protocol version, client info
// and capabilities.
func TestModernListMeta(t *testing.T) {
	srv := mcptest.NewServer("meta")
	h := mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	var mu sync.Mutex
	metas := map[string][]string{} // the _meta of each method's requests, as sent
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Meta json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			mu.Lock()
			metas[msg.Method] = append(metas[msg.Method], string(msg.Params.Meta))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	m := newManager(t, nil)
	connectReady(t, m, "s", mcpclient.ServerOptions{URL: hs.URL, Client: mcpclient.ClientOptions{ProtocolVersion: "2026-07-28"}})
	mu.Lock()
	defer mu.Unlock()
	listen := metas["subscriptions/listen"]
	if len(listen) != 1 || !strings.Contains(listen[0], `"io.modelcontextprotocol/clientCapabilities"`) {
		t.Fatalf("subscriptions/listen _meta: %q", listen)
	}
	for _, method := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		if got := metas[method]; len(got) != 1 || got[0] != listen[0] {
			t.Errorf("%s _meta:\n%q\nwant subscriptions/listen's:\n%q", method, got, listen[0])
		}
	}
}
