package h1

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingDialer dials TCP and counts the connections, and the writes on
// them.
type countingDialer struct {
	mu     sync.Mutex
	n      int
	writes int
}

func (d *countingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.n++
	d.mu.Unlock()
	return &countedConn{Conn: c, d: d}, nil
}

func (d *countingDialer) writeCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writes
}

// countedConn counts its writes (a request goes out in one).
type countedConn struct {
	net.Conn
	d *countingDialer
}

func (c *countedConn) Write(p []byte) (int, error) {
	c.d.mu.Lock()
	c.d.writes++
	c.d.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *countedConn) NetConn() net.Conn { return c.Conn }

func (d *countingDialer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// ownVia returns a Via whose requests go on connections dialled by
// d, closed when the test ends.
func ownVia(t *testing.T, d *countingDialer) *Via {
	v := &Via{Dialer: &Dialer{DialContext: d.dial}}
	t.Cleanup(v.Dialer.CloseIdleConnections)
	return v
}

// post sends a POST of body to url through v and returns the answer's
// body, read to its end.
func post(t *testing.T, v *Via, client *http.Client, url, body string, header http.Header) (string, *http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := v.Do(client, req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return string(data), resp, err
}

// open sends a POST to url through v and returns the response, its body
// unread.
func open(t *testing.T, v *Via, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("x"))
	resp, err := v.Do(noClient(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// noClient is an HTTP client that fails the test if it is used.
func noClient(t *testing.T) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("%s %s went through the HTTPClient", r.Method, r.URL)
		return nil, errors.New("not through the client")
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestOwnRequests: requests on the pool's connections carry what net/http
// would send (method, path and query, Host, User-Agent, Content-Length,
// Accept-Encoding: gzip, the custom headers, the body), get the answer
// whole, gzip undone, and reuse one connection one after another.
func TestOwnRequests(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		answer := "echo:" + string(body)
		if r.URL.Query().Get("gzip") == "1" && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write([]byte(answer))
			zw.Close()
			return
		}
		if r.URL.Query().Get("chunked") == "1" {
			w.(http.Flusher).Flush() // no Content-Length: chunked
		}
		io.WriteString(w, answer)
	}))
	defer hs.Close()
	d := &countingDialer{}
	v := ownVia(t, d)
	for i, q := range []string{"", "?chunked=1", "?gzip=1", "?a=b&c=d", ""} {
		got, resp, err := post(t, v, noClient(t), hs.URL+"/mcp"+q, "hello", http.Header{"X-Api-Key": {"KEY"}, "Content-Type": {"application/json"}})
		if err != nil || got != "echo:hello" {
			t.Fatalf("request %d (%q): %q, %v", i, q, got, err)
		}
		if q == "?gzip=1" && (!resp.Uncompressed || resp.Header.Get("Content-Encoding") != "") {
			t.Errorf("gzip answer: Uncompressed %v, Content-Encoding %q", resp.Uncompressed, resp.Header.Get("Content-Encoding"))
		}
	}
	if n := d.count(); n != 1 {
		t.Errorf("%d connections dialled for 5 requests one after another, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	r := seen[3]
	for k, want := range map[string]string{
		"X-Api-Key": "KEY", "Content-Type": "application/json", "Accept-Encoding": "gzip",
		"User-Agent": "Go-http-client/1.1",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if r.Method != http.MethodPost || r.URL.RequestURI() != "/mcp?a=b&c=d" || r.Host != strings.TrimPrefix(hs.URL, "http://") ||
		r.ContentLength != 5 || r.Proto != "HTTP/1.1" {
		t.Errorf("request: %s %s %s, Host %q, Content-Length %d", r.Method, r.URL.RequestURI(), r.Proto, r.Host, r.ContentLength)
	}
}

// scripted is a TCP server on 127.0.0.1 whose connections are served, in
// the order they come, by the given functions.
type scripted struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	reqs  []string // the request lines read, in order
	conns []net.Conn
}

func newScripted(t *testing.T, serve ...func(s *scripted, c net.Conn, br *bufio.Reader)) *scripted {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scripted{ln: ln}
	s.wg.Go(func() {
		for _, fn := range serve {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Go(func() { fn(s, c, bufio.NewReader(c)) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *scripted) url() string { return "http://" + s.ln.Addr().String() + "/mcp" }

// read reads one request and returns its body; "" and false at the end.
func (s *scripted) read(br *bufio.Reader) (string, bool) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", false
	}
	body, _ := io.ReadAll(req.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, req.Method+" "+string(body))
	s.mu.Unlock()
	return string(body), true
}

func (s *scripted) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

const okAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// answerAll answers every request of a connection with okAnswer.
func answerAll(s *scripted, c net.Conn, br *bufio.Reader) {
	for {
		if _, ok := s.read(br); !ok {
			return
		}
		io.WriteString(c, okAnswer)
	}
}

// TestOwnRequestsRetry: a request that meets a reused connection closed by
// the server before any byte of the answer is sent again, once, on a new
// connection; on a new connection, it is not (the server had it).
func TestOwnRequestsRetry(t *testing.T) {
	t.Run("reused", func(t *testing.T) {
		s := newScripted(t, func(s *scripted, c net.Conn, br *bufio.Reader) {
			s.read(br)
			io.WriteString(c, okAnswer)
			s.read(br) // the second request: closed unanswered
			c.Close()
		}, answerAll)
		d := &countingDialer{}
		v := ownVia(t, d)
		for i := range 2 {
			if got, _, err := post(t, v, noClient(t), s.url(), "x", nil); err != nil || got != "ok" {
				t.Fatalf("request %d: %q, %v", i, got, err)
			}
		}
		if d.count() != 2 || len(s.seen()) != 3 {
			t.Errorf("%d dials, requests seen %q; want 2 dials, 3 requests", d.count(), s.seen())
		}
	})
	t.Run("new", func(t *testing.T) {
		s := newScripted(t, func(s *scripted, c net.Conn, br *bufio.Reader) {
			s.read(br)
			c.Close()
		}, answerAll)
		d := &countingDialer{}
		v := ownVia(t, d)
		if _, _, err := post(t, v, noClient(t), s.url(), "x", nil); err == nil {
			t.Fatal("a request whose new connection closed unanswered succeeded")
		}
		if d.count() != 1 || len(s.seen()) != 1 {
			t.Errorf("%d dials, requests seen %q; want 1 dial, 1 request", d.count(), s.seen())
		}
	})
}

// TestOwnRequestsNotReused: a connection is reused only after an answer
// read to its end and nothing after it; otherwise the next request dials.
func TestOwnRequestsNotReused(t *testing.T) {
	for name, answer := range map[string]string{
		"Connection: close": "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.0":          "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"bytes past it":     okAnswer + "HTTP/1.1 200 OK\r\n",
		"no length":         "HTTP/1.1 200 OK\r\n\r\nok", // read until the server closes
	} {
		t.Run(name, func(t *testing.T) {
			once := func(s *scripted, c net.Conn, br *bufio.Reader) {
				s.read(br)
				io.WriteString(c, answer)
				if name == "no length" {
					c.Close()
					return
				}
				s.read(br) // a second request on it would be seen here
				c.Close()
			}
			s := newScripted(t, once, once)
			d := &countingDialer{}
			v := ownVia(t, d)
			for i := range 2 {
				got, _, err := post(t, v, noClient(t), s.url(), "x", nil)
				if err != nil || !strings.HasPrefix(got, "ok") {
					t.Fatalf("request %d: %q, %v", i, got, err)
				}
			}
			if d.count() != 2 || len(s.seen()) != 2 {
				t.Errorf("%d dials, requests seen %q; want 2 dials, 2 requests", d.count(), s.seen())
			}
		})
	}
	t.Run("closed before its end", func(t *testing.T) {
		// A stream that goes on past the drain limit: the connection is
		// closed, not read to its end.
		var ended sync.WaitGroup
		ended.Add(1)
		s := newScripted(t, func(s *scripted, c net.Conn, br *bufio.Reader) {
			defer ended.Done()
			s.read(br)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			events := strings.Repeat("data: x\n\n", 100)
			chunk := fmt.Sprintf("%x\r\n%s\r\n", len(events), events)
			for {
				if _, err := io.WriteString(c, chunk); err != nil {
					return // the client closed it
				}
			}
		}, answerAll)
		d := &countingDialer{}
		v := ownVia(t, d)
		resp := open(t, v, s.url())
		first := make([]byte, 10)
		io.ReadFull(resp.Body, first)
		resp.Body.Close()
		ended.Wait()
		if got, _, err := post(t, v, noClient(t), s.url(), "y", nil); err != nil || got != "ok" {
			t.Fatalf("the next request: %q, %v", got, err)
		}
		if d.count() != 2 {
			t.Errorf("%d dials, want 2", d.count())
		}
	})
	t.Run("closed just before its end", func(t *testing.T) {
		// A response stream closed once its answer was read, whose end
		// comes after: read to its end, and the connection reused.
		read := make(chan struct{})
		s := newScripted(t, func(s *scripted, c net.Conn, br *bufio.Reader) {
			s.read(br)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			io.WriteString(c, "e\r\ndata: answer\n\n\r\n")
			<-read
			io.WriteString(c, "0\r\n\r\n")
			answerAll(s, c, br)
		}, answerAll)
		d := &countingDialer{}
		v := ownVia(t, d)
		resp := open(t, v, s.url())
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		close(read)
		resp.Body.Close()
		if got, _, err := post(t, v, noClient(t), s.url(), "y", nil); err != nil || got != "ok" || line != "data: answer\n" {
			t.Fatalf("first %q; the next request: %q, %v", line, got, err)
		}
		if d.count() != 1 {
			t.Errorf("%d dials, want 1", d.count())
		}
	})
}

// TestOwnRequestsInvalidHeader: a header value that would split the
// request fails it before anything is written.
func TestOwnRequestsInvalidHeader(t *testing.T) {
	s := newScripted(t, answerAll, answerAll)
	d := &countingDialer{}
	v := ownVia(t, d)
	for _, h := range []http.Header{{"X-Api-Key": {"a\r\nInjected: yes"}}, {"Bad Name": {"x"}}} {
		if _, _, err := post(t, v, noClient(t), s.url(), "x", h); err == nil || !strings.Contains(err.Error(), "invalid header field") {
			t.Errorf("%v: %v, want an invalid header error", h, err)
		}
	}
	if n := d.writeCount(); n != 0 {
		t.Errorf("%d writes", n)
	}
}

// TestOwnRequestsCancel: a request whose context ends returns its error
// and its connection is not kept.
func TestOwnRequestsCancel(t *testing.T) {
	arrived := make(chan struct{})
	s := newScripted(t, func(s *scripted, c net.Conn, br *bufio.Reader) {
		s.read(br)
		close(arrived)
		io.Copy(io.Discard, c) // no answer, until the client closes
	})
	v := ownVia(t, &countingDialer{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url(), strings.NewReader("x"))
	if _, err := v.Do(noClient(t), req); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if n := len(v.pool.Load().idle); n != 0 {
		t.Errorf("%d idle connections kept", n)
	}
}

// TestOwnRequestsRedirect: a redirect is followed by the HTTPClient (its
// CheckRedirect decides), and the connection's later requests go through
// it too.
func TestOwnRequestsRedirect(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			return
		}
		io.Copy(w, r.Body)
	}))
	defer hs.Close()
	var viaClient int
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		viaClient++
		return http.DefaultTransport.RoundTrip(r)
	})}
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	v := ownVia(t, &countingDialer{})
	for i := range 2 {
		if got, _, err := post(t, v, client, hs.URL+"/old", "body", nil); err != nil || got != "body" {
			t.Fatalf("request %d: %q, %v", i, got, err)
		}
	}
	if viaClient != 4 {
		t.Errorf("%d requests through the client, want 4 (each request and its redirect)", viaClient)
	}
}

// TestOwnRequestsIdle: an idle connection closed by its server is not
// taken again, nor one idle for longer than idleConnTimeout.
func TestOwnRequestsIdle(t *testing.T) {
	s := newScripted(t, func(s *scripted, c net.Conn, br *bufio.Reader) {
		s.read(br)
		io.WriteString(c, okAnswer)
		c.Close()
	}, answerAll, answerAll)
	d := &countingDialer{}
	v := ownVia(t, d)
	if _, _, err := post(t, v, noClient(t), s.url(), "x", nil); err != nil {
		t.Fatal(err)
	}
	pc := v.pool.Load().idle[0]
	// Wait for the server's close to reach the socket.
	if err := readableWait(pc.raw)(); err != nil {
		t.Fatal(err)
	}
	if !closedByPeer(pc.raw) {
		t.Fatal("closedByPeer: false for a connection the server closed")
	}
	pc.idleSince = time.Now().Add(-livenessAfter) // old enough to be looked at
	if got, _, err := post(t, v, noClient(t), s.url(), "y", nil); err != nil || got != "ok" {
		t.Fatalf("%q, %v", got, err)
	}
	if d.count() != 2 || len(s.seen()) != 2 || d.writeCount() != 2 {
		t.Errorf("%d dials, %d requests, %d writes; want 2 of each (the closed connection not written to)", d.count(), len(s.seen()), d.writeCount())
	}
	if closedByPeer(v.pool.Load().idle[0].raw) {
		t.Error("closedByPeer: true for an open connection")
	}
	v.pool.Load().idle[0].idleSince = time.Now().Add(-idleConnTimeout)
	v.pool.Load().expire()
	if n := len(v.pool.Load().idle); n != 0 {
		t.Errorf("%d idle connections after they expired", n)
	}
}

// TestOwnRequestsShared: the connections of one Dialer share its idle
// connections to a host, as net/http's Transport does: a new connection
// (an agent woken) takes up the warm one a closed one left, and
// CloseIdleConnections closes them.
func TestOwnRequestsShared(t *testing.T) {
	s := newScripted(t, answerAll, answerAll)
	d := &countingDialer{}
	first := ownVia(t, d)
	second := &Via{Dialer: first.Dialer}
	for i, v := range []*Via{first, second} {
		if got, _, err := post(t, v, noClient(t), s.url(), "x", nil); err != nil || got != "ok" {
			t.Fatalf("request %d: %q, %v", i, got, err)
		}
	}
	if d.count() != 1 {
		t.Errorf("%d dials, want 1", d.count())
	}
	first.Dialer.CloseIdleConnections()
	if n := len(first.pool.Load().idle); n != 0 {
		t.Errorf("%d idle connections after CloseIdleConnections", n)
	}
	if got, _, err := post(t, second, noClient(t), s.url(), "y", nil); err != nil || got != "ok" || d.count() != 2 {
		t.Errorf("after CloseIdleConnections: %q, %v, %d dials (want 2)", got, err, d.count())
	}
}

// TestOwnRequestsContextEnded: a request whose context has ended is not
// written, on a warm connection as on a new one (go-sdk sends its fallback
// initialize with the context of a discover that was cancelled, and
// net/http sends nothing then: neither may this).
func TestOwnRequestsContextEnded(t *testing.T) {
	s := newScripted(t, answerAll)
	d := &countingDialer{}
	v := ownVia(t, d)
	if _, _, err := post(t, v, noClient(t), s.url(), "warm", nil); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the warm connection, then a new one
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url(), strings.NewReader("late"))
		if _, err := v.Do(noClient(t), req); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	}
	if n := d.writeCount(); n != 1 {
		t.Errorf("%d writes, want 1 (the warm-up)", n)
	}
}
