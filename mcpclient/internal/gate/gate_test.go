package gate

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/netguard"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errStopped = errors.New("replica not trusted")

// switchable is a gate that can be closed, counting its questions.
type switchable struct {
	closed atomic.Bool
	asked  atomic.Int64
}

func (s *switchable) gate() error {
	s.asked.Add(1)
	if s.closed.Load() {
		return errStopped
	}
	return nil
}

// closingBody reports whether it was closed.
type closingBody struct {
	io.Reader
	closed bool
}

func (b *closingBody) Close() error { b.closed = true; return nil }

// TestClient: a gated client's requests reach the server while the gate is
// open; once closed, none does, the body is closed, and the error wraps
// ErrClosed and the gate's.
func TestClient(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	guard, err := netguard.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var g switchable
	client := Client(&http.Client{Transport: &http.Transport{}}, guard, g.gate)
	defer client.CloseIdleConnections()

	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if served.Load() != 1 || g.asked.Load() < 2 {
		t.Errorf("open gate: %d served, gate asked %d times; want 1 served, asked at the request and at the write", served.Load(), g.asked.Load())
	}

	g.closed.Store(true)
	body := &closingBody{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, body)
	_, err = client.Do(req)
	if !errors.Is(err, ErrClosed) || !errors.Is(err, errStopped) {
		t.Errorf("closed gate: %v; want ErrClosed and the gate's error", err)
	}
	if !body.closed {
		t.Error("the body of a stopped request was not closed")
	}
	if served.Load() != 1 {
		t.Errorf("%d requests served; the closed gate let one through", served.Load())
	}
}

// TestDial: a connection dialed through Dial asks the gate before each
// write, and writes nothing once it is closed.
func TestDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	received := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			received <- ""
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		received <- string(b)
	}()
	var g switchable
	var d net.Dialer
	conn, err := Dial(d.DialContext, g.gate)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("before")); err != nil {
		t.Fatal(err)
	}
	g.closed.Store(true)
	if n, err := conn.Write([]byte("after")); n != 0 || !errors.Is(err, ErrClosed) || !errors.Is(err, errStopped) {
		t.Errorf("write past a closed gate: %d bytes, %v; want none, ErrClosed", n, err)
	}
	conn.Close()
	if got := <-received; got != "before" {
		t.Errorf("the peer read %q; want only what was written while the gate was open", got)
	}
}
