package h1

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

const streamAnswer = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"

// serveStream answers one request with the head of an event stream and
// five bytes of it, then holds the connection until the client closes it.
func serveStream(s *scripted, c net.Conn, br *bufio.Reader) {
	if _, ok := s.read(br); !ok {
		return
	}
	io.WriteString(c, streamAnswer)
	io.Copy(io.Discard, br)
}

// openStream opens a standing stream through v and reads its first five
// bytes.
func openStream(t *testing.T, v *Via, u string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := v.OpenStream(noClient(t), req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("stream: %q, %v", buf, err)
	}
}

// TestStandingStreamTakesIdle: a standing stream goes on an idle
// connection of the requests' pool rather than dialling; one that the
// server closed before answering is given up for a new connection, once.
func TestStandingStreamTakesIdle(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		s := newScripted(t, func(s *scripted, c net.Conn, br *bufio.Reader) {
			s.read(br)
			io.WriteString(c, okAnswer)
			serveStream(s, c, br)
		})
		d := &countingDialer{}
		v := ownVia(t, d)
		if got, _, err := post(t, v, noClient(t), s.url(), "x", nil); err != nil || got != "ok" {
			t.Fatalf("request: %q, %v", got, err)
		}
		openStream(t, v, s.url())
		if d.count() != 1 {
			t.Errorf("%d dials, want 1 (the stream on the request's idle connection)", d.count())
		}
	})
	t.Run("closed by the server", func(t *testing.T) {
		s := newScripted(t, func(s *scripted, c net.Conn, br *bufio.Reader) {
			s.read(br)
			io.WriteString(c, okAnswer)
			s.read(br) // the stream's request: closed unanswered
			c.Close()
		}, serveStream)
		d := &countingDialer{}
		v := ownVia(t, d)
		if got, _, err := post(t, v, noClient(t), s.url(), "x", nil); err != nil || got != "ok" {
			t.Fatalf("request: %q, %v", got, err)
		}
		openStream(t, v, s.url())
		if d.count() != 2 || len(s.seen()) != 3 {
			t.Errorf("%d dials, requests seen %q; want 2 dials, 3 requests", d.count(), s.seen())
		}
	})
}

// TestPrewarm: Prewarm dials one connection into an empty pool, which the
// next request takes without dialling; it dials none when the pool has an
// idle one, and none after its context ended.
func TestPrewarm(t *testing.T) {
	s := newScripted(t, answerAll, answerAll)
	d := &countingDialer{}
	v := ownVia(t, d)
	u, _ := url.Parse(s.url())
	ctx, cancel := context.WithCancel(context.Background())
	v.Prewarm(ctx, u)
	if d.count() != 1 {
		t.Fatalf("%d dials after Prewarm, want 1", d.count())
	}
	v.Prewarm(ctx, u) // one is idle already
	if got, _, err := post(t, v, noClient(t), s.url(), "x", nil); err != nil || got != "ok" {
		t.Fatalf("request: %q, %v", got, err)
	}
	if d.count() != 1 {
		t.Errorf("%d dials after a second Prewarm and a request, want 1", d.count())
	}
	v.Dialer.CloseIdleConnections()
	cancel()
	v.Prewarm(ctx, u)
	if n := v.reqPool(u).idleCount(); d.count() != 1 || n != 0 {
		t.Errorf("after its context ended: %d dials, %d idle; want 1 and 0", d.count(), n)
	}
}
