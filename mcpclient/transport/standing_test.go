package transport_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

// streamRecorder wraps an MCP handler and notes, for each request, its
// headers and the client address it came from.
type streamRecorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []seenRequest
	// stream receives the standing stream's request once the server has
	// started to answer it: go-sdk registers a subscriptions/listen
	// stream's subscriptions before it writes their acknowledgment, and a
	// GET stream before its head, so a change made after that reaches it.
	stream chan seenRequest
}

type seenRequest struct {
	method, remote string
	header         http.Header
	proxied        bool
}

// isStanding reports whether r opens the standing stream: the legacy GET,
// or the 2026-07-28 subscriptions/listen POST.
func isStanding(r seenRequest) bool {
	return r.method == http.MethodGet || r.header.Get("Mcp-Method") == "subscriptions/listen"
}

func (s *streamRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sr := seenRequest{method: r.Method, remote: r.RemoteAddr, header: r.Header.Clone(), proxied: r.Header.Get("Via-Test-Proxy") != ""}
	s.mu.Lock()
	s.seen = append(s.seen, sr)
	s.mu.Unlock()
	if isStanding(sr) {
		w = &answerSignal{ResponseWriter: w, answered: func() {
			select {
			case s.stream <- sr:
			default:
			}
		}}
	}
	s.next.ServeHTTP(w, r)
}

// answerSignal calls answered once, when the handler first writes its
// response's head or body.
type answerSignal struct {
	http.ResponseWriter
	answered func()
	once     sync.Once
}

func (a *answerSignal) WriteHeader(code int) {
	a.ResponseWriter.WriteHeader(code)
	a.once.Do(a.answered)
}

func (a *answerSignal) Write(p []byte) (int, error) {
	n, err := a.ResponseWriter.Write(p)
	a.once.Do(a.answered)
	return n, err
}

func (a *answerSignal) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	a.once.Do(a.answered)
}

func (a *answerSignal) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// recordedServer is an MCP server behind a streamRecorder, over plain
// HTTP or TLS, with an HTTP client and a Dialer that each record the
// connections they dial.
type recordedServer struct {
	srv                  *mcptest.Server
	rec                  *streamRecorder
	hs                   *httptest.Server
	client               *http.Client
	dialer               *transport.Dialer
	viaClient, viaStream dialRecorder
}

func newRecordedServer(t *testing.T, scheme string, mode mcptest.Mode) *recordedServer {
	t.Helper()
	r := &recordedServer{srv: mcptest.NewServer("s")}
	r.rec = &streamRecorder{next: mcptest.Handler(t, mode, func() *mcp.Server { return r.srv.Server }), stream: make(chan seenRequest, 1)}
	if scheme == "https" {
		r.hs = httptest.NewTLSServer(r.rec)
	} else {
		r.hs = httptest.NewServer(r.rec)
	}
	t.Cleanup(r.hs.Close)
	base := r.hs.Client().Transport.(*http.Transport)
	ht := base.Clone()
	ht.DialContext = r.viaClient.dial
	t.Cleanup(ht.CloseIdleConnections)
	r.client = &http.Client{Transport: ht}
	r.dialer = &transport.Dialer{DialContext: r.viaStream.dial, TLSClientConfig: base.TLSClientConfig}
	return r
}

// dialRecorder is a dialer that notes the local address of each connection.
type dialRecorder struct {
	mu    sync.Mutex
	local map[string]bool
}

func (d *dialRecorder) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		d.mu.Lock()
		if d.local == nil {
			d.local = map[string]bool{}
		}
		d.local[c.LocalAddr().String()] = true
		d.mu.Unlock()
	}
	return c, err
}

func (d *dialRecorder) dialled(remote string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.local[remote]
}

func (d *dialRecorder) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.local)
}

type standingCase struct {
	name    string
	mode    mcptest.Mode
	version string
}

var standingEras = []standingCase{
	{"2025-11-25", mcptest.Stateful, "2025-11-25"},
	{"2026-07-28", mcptest.Stateless, "2026-07-28"},
}

// listChangedClient returns a go-sdk client and a channel that receives
// when one of its sessions hears of a tool list change.
func listChangedClient() (*mcp.Client, chan struct{}) {
	changed := make(chan struct{}, 8)
	return mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}), changed
}

// connectStanding connects a go-sdk client listening for tool list changes
// to endpoint through a Streamable with sd, and returns the session and a
// channel of its list changes.
func connectStanding(t *testing.T, hc *http.Client, endpoint string, sd *transport.Dialer, version string) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	client, changed := listChangedClient()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &transport.Streamable{
		Endpoint:       endpoint,
		HTTPClient:     hc,
		Dialer:         sd,
		Header:         http.Header{"X-Api-Key": {"KEY"}},
		Authorize:      func(r *http.Request) error { r.Header.Set("Authorization", "Bearer TOKEN"); return nil },
		MaxMessageSize: 1 << 20,
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	return session, changed
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second): // a safety net only
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// checkRoutes checks that each request rec saw came over a connection
// of the dialer it should. The standing stream goes on a connection of
// the Dialer. So do the requests when ownRequests is set (the
// streamable transport), but for the first of an https connection, which
// goes through the HTTPClient (the server may speak HTTP/2); else they go
// through the HTTPClient (the SSE transport).
func checkRoutes(t *testing.T, rec *streamRecorder, scheme string, ownRequests bool, client, stream *dialRecorder) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	streams, requests := 0, 0
	for _, r := range rec.seen {
		// Over TLS the first request goes through the HTTPClient, which
		// learns whether the server speaks HTTP/2.
		viaClient := !ownRequests || (requests == 0 && scheme == "https")
		if isStanding(r) {
			streams++
			viaClient = false
		} else {
			requests++
		}
		switch {
		case viaClient && !client.dialled(r.remote):
			t.Errorf("a %s %s came from %s, not a connection of the HTTPClient", r.method, r.header.Get("Mcp-Method"), r.remote)
		case !viaClient && !stream.dialled(r.remote):
			t.Errorf("a %s %s came from %s, not a connection of the Dialer", r.method, r.header.Get("Mcp-Method"), r.remote)
		}
	}
	if streams == 0 {
		t.Error("no standing stream was opened")
	}
}

// checkHeaders checks that the standing stream's request carried what the
// other requests carry.
func checkHeaders(t *testing.T, rec *streamRecorder, version string) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	session := ""
	for _, r := range rec.seen {
		if !isStanding(r) && r.header.Get("Mcp-Session-Id") != "" {
			session = r.header.Get("Mcp-Session-Id")
		}
	}
	for _, r := range rec.seen {
		if !isStanding(r) {
			continue
		}
		for k, want := range map[string]string{
			"X-Api-Key":            "KEY",
			"Authorization":        "Bearer TOKEN",
			"Mcp-Protocol-Version": version,
			"Mcp-Session-Id":       session,
		} {
			if got := r.header.Get(k); got != want {
				t.Errorf("the standing stream's %s: %s = %q, want %q", r.method, k, got, want)
			}
		}
	}
}

// TestStandingStreamOwnConnection: with a Dialer, the standing stream
// (the legacy GET stream, the 2026-07-28 subscriptions/listen stream) goes
// on a connection it dialled, over plain HTTP and over TLS, with the
// headers the other requests carry; the other requests go on connections
// it dialled too (but for the first over https: see checkRoutes); and the stream works (a tool added on the server reaches the
// client through it).
func TestStandingStreamOwnConnection(t *testing.T) {
	for _, era := range standingEras {
		for _, scheme := range []string{"http", "https"} {
			t.Run(era.name+"/"+scheme, func(t *testing.T) {
				r := newRecordedServer(t, scheme, era.mode)
				_, changed := connectStanding(t, r.client, r.hs.URL, r.dialer, era.version)
				waitFor(t, r.rec.stream, "standing stream")
				r.srv.AddTool("late")
				waitFor(t, changed, "tools/list_changed")
				checkRoutes(t, r.rec, scheme, true, &r.viaClient, &r.viaStream)
				checkHeaders(t, r.rec, era.version)
			})
		}
	}
}

// TestStandingStreamFallsBack: the standing stream goes through the
// HTTPClient when the Dialer cannot carry it as the client would:
// when its Proxy names a proxy, and when the server speaks HTTP/2 (the
// stream is one more stream on the shared connection).
func TestStandingStreamFallsBack(t *testing.T) {
	t.Run("proxy", func(t *testing.T) {
		for _, era := range standingEras {
			t.Run(era.name, func(t *testing.T) {
				srv := mcptest.NewServer("s")
				rec := &streamRecorder{next: mcptest.Handler(t, era.mode, func() *mcp.Server { return srv.Server }), stream: make(chan seenRequest, 1)}
				hs := httptest.NewServer(rec)
				t.Cleanup(hs.Close)
				// A forward proxy on 127.0.0.1 that marks what it forwards.
				fwd := &httputil.ReverseProxy{
					Rewrite: func(pr *httputil.ProxyRequest) {
						pr.Out.URL = pr.In.URL
						pr.Out.Header.Set("Via-Test-Proxy", "1")
					},
					FlushInterval: -1,
				}
				// Full duplex: otherwise, when the proxy writes the head of
				// the answer, net/http's server drains and closes what it
				// takes for the rest of the request's body, while the
				// proxy's transport may still be reading it for its end;
				// that read fails, and the transport closes the connection
				// to the server, ending the subscriptions/listen stream
				// just after its acknowledgment.
				proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
						t.Error(err)
					}
					fwd.ServeHTTP(w, r)
				}))
				t.Cleanup(proxy.Close)
				proxyURL, _ := url.Parse(proxy.URL)
				ht := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
				t.Cleanup(ht.CloseIdleConnections)
				var viaStream dialRecorder
				sd := &transport.Dialer{DialContext: viaStream.dial, Proxy: http.ProxyURL(proxyURL)}

				_, changed := connectStanding(t, &http.Client{Transport: ht}, hs.URL, sd, era.version)
				stream := waitFor(t, rec.stream, "standing stream")
				srv.AddTool("late")
				waitFor(t, changed, "tools/list_changed")
				if !stream.proxied {
					t.Error("the standing stream did not go through the proxy")
				}
				if n := viaStream.count(); n != 0 {
					t.Errorf("the Dialer dialled %d connections, want none", n)
				}
			})
		}
	})
	t.Run("userinfo", func(t *testing.T) {
		srv := mcptest.NewServer("s")
		rec := &streamRecorder{next: mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server }), stream: make(chan seenRequest, 1)}
		hs := httptest.NewServer(rec)
		t.Cleanup(hs.Close)
		ht := &http.Transport{}
		t.Cleanup(ht.CloseIdleConnections)
		var viaStream dialRecorder
		sd := &transport.Dialer{DialContext: viaStream.dial}
		endpoint := strings.Replace(hs.URL, "http://", "http://user:pass@", 1)
		connectStanding(t, &http.Client{Transport: ht}, endpoint, sd, "2025-11-25")
		waitFor(t, rec.stream, "standing stream")
		if n := viaStream.count(); n != 0 {
			t.Errorf("the Dialer dialled %d connections for a URL with userinfo, want none", n)
		}
	})
	t.Run("http2", func(t *testing.T) {
		srv := mcptest.NewServer("s")
		rec := &streamRecorder{next: mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server }), stream: make(chan seenRequest, 1)}
		hs := httptest.NewUnstartedServer(rec)
		hs.EnableHTTP2 = true
		hs.StartTLS()
		t.Cleanup(hs.Close)
		base := hs.Client().Transport.(*http.Transport)
		t.Cleanup(base.CloseIdleConnections)
		var viaStream dialRecorder
		sd := &transport.Dialer{DialContext: viaStream.dial, TLSClientConfig: base.TLSClientConfig}

		_, changed := connectStanding(t, hs.Client(), hs.URL, sd, "2025-11-25")
		waitFor(t, rec.stream, "standing stream")
		srv.AddTool("late")
		waitFor(t, changed, "tools/list_changed")
		if n := viaStream.count(); n != 0 {
			t.Errorf("the Dialer dialled %d connections to an HTTP/2 server, want none", n)
		}
	})
}

// TestSSEStreamOwnConnection: the 2024-11-05 transport's event stream goes
// on a connection of the Dialer, with the custom headers and
// credentials, over plain HTTP and TLS; so do the POSTs (over TLS, after
// the first, through the HTTPClient); messages arrive on the stream.
func TestSSEStreamOwnConnection(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			r := newRecordedServer(t, scheme, mcptest.SSE)
			srv, rec, hs := r.srv, r.rec, r.hs

			client, changed := listChangedClient()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			session, err := client.Connect(ctx, &transport.SSE{
				Endpoint:       hs.URL,
				HTTPClient:     r.client,
				Dialer:         r.dialer,
				Header:         http.Header{"X-Api-Key": {"KEY"}},
				Authorize:      func(r *http.Request) error { r.Header.Set("Authorization", "Bearer TOKEN"); return nil },
				MaxMessageSize: 1 << 20,
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { session.Close() })
			stream := waitFor(t, rec.stream, "event stream")
			if _, err := session.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			srv.AddTool("late")
			waitFor(t, changed, "tools/list_changed")
			checkRoutes(t, rec, scheme, true, &r.viaClient, &r.viaStream)
			if stream.header.Get("X-Api-Key") != "KEY" || stream.header.Get("Authorization") != "Bearer TOKEN" {
				t.Errorf("the event stream's headers: %v", stream.header)
			}
		})
	}
}

// listenBreaker passes requests on to next. It drops the connection of
// the first subscriptions/listen stream once the server's acknowledgment
// is out, as a proxy's timeout would: no response ends it. It holds the
// second until hold is closed, and signals when that one is acknowledged.
type listenBreaker struct {
	next          http.Handler
	mu            sync.Mutex
	listens       int
	second, acked chan struct{}
	hold          chan struct{}
}

func (b *listenBreaker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Method") != "subscriptions/listen" {
		b.next.ServeHTTP(w, r)
		return
	}
	b.mu.Lock()
	b.listens++
	n := b.listens
	b.mu.Unlock()
	switch n {
	case 1:
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		b.next.ServeHTTP(&cutOnFlush{ResponseWriter: w, cut: cancel}, r.WithContext(ctx))
	case 2:
		b.second <- struct{}{}
		<-b.hold
		b.next.ServeHTTP(&answerSignal{ResponseWriter: w, answered: func() { close(b.acked) }}, r)
	default:
		b.next.ServeHTTP(w, r)
	}
}

// cutOnFlush drops the connection, as a proxy would, once the handler
// flushed what it wrote, and then ends the handler's context with cut.
type cutOnFlush struct {
	http.ResponseWriter
	cut         func()
	wrote, done bool
}

func (c *cutOnFlush) Write(p []byte) (int, error) {
	if c.done {
		return 0, http.ErrHijacked
	}
	c.wrote = true
	return c.ResponseWriter.Write(p)
}

func (c *cutOnFlush) Flush() {
	if c.done {
		return
	}
	c.ResponseWriter.(http.Flusher).Flush()
	if c.wrote {
		c.done = true
		if conn, _, err := http.NewResponseController(c.ResponseWriter).Hijack(); err == nil {
			conn.Close()
		}
		c.cut()
	}
}

// TestListenStreamReopened: a 2026-07-28 subscriptions/listen stream that
// ends without its response is issued again; a change the server made
// while no stream was open is announced once it is (the server told
// nobody), and later changes come on the new stream.
func TestListenStreamReopened(t *testing.T) {
	srv := mcptest.NewServer("s")
	b := &listenBreaker{
		next:   mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }),
		second: make(chan struct{}, 1), acked: make(chan struct{}), hold: make(chan struct{}),
	}
	hs := httptest.NewServer(b)
	t.Cleanup(hs.Close)
	var viaStream dialRecorder
	_, changed := connectStanding(t, hs.Client(), hs.URL, &transport.Dialer{DialContext: viaStream.dial}, "2026-07-28")

	waitFor(t, b.second, "second subscriptions/listen")
	srv.AddTool("gap") // heard by no stream
	close(b.hold)
	waitFor(t, changed, "tools/list_changed for the change made between the streams")
	waitFor(t, b.acked, "acknowledgment of the second listen")
	srv.AddTool("late")
	waitFor(t, changed, "tools/list_changed on the new stream")
}
