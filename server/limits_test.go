package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// liveServer is a Server behind its own HTTPServer on 127.0.0.1, for tests
// that need the real connection handling.
type liveServer struct {
	srv  *Server
	addr string
}

func startLive(t *testing.T, opts *Options) *liveServer {
	t.Helper()
	st, err := sqlite.Open(testCtx(t), filepath.Join(t.TempDir(), "agentmcp.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Open(testCtx(t), st, opts)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			hs.Close()
		}
		<-served
		srv.Close(ctx)
		st.Close()
	})
	return &liveServer{srv: srv, addr: l.Addr().String()}
}

// dial opens a raw connection to the server, closed when the test ends.
func (ls *liveServer) dial(t *testing.T) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", ls.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// defaultPath is the agent that always exists.
const defaultPath = "/agents/" + DefaultAgent

// safety bounds every read of these tests: far longer than the short
// timeouts they configure, it only turns a hang into a failure.
const safety = 20 * time.Second

// readResponse reads one response and its body from br.
func readResponse(t *testing.T, c net.Conn, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(safety))
	res, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("reading the response body: %v", err)
	}
	return res, string(b)
}

// waitClosed blocks until the server closes c, and fails if the safety
// deadline comes first. It returns how long it waited.
func waitClosed(t *testing.T, c net.Conn, br *bufio.Reader) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(safety))
	_, err := br.ReadByte()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server kept the connection open for %v", safety)
	}
	if err == nil {
		t.Fatalf("the server sent more bytes; want the connection closed")
	}
	return time.Since(start)
}

// TestIdleConnectionClosed: a keep-alive connection with no next request
// is closed after IdleTimeout.
func TestIdleConnectionClosed(t *testing.T) {
	t.Parallel()
	ls := startLive(t, &Options{IdleTimeout: 100 * time.Millisecond})
	c, br := ls.dial(t)
	fmt.Fprintf(c, "GET /static/style.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if res, _ := readResponse(t, c, br, "GET"); res.StatusCode != 200 || res.Close {
		t.Fatalf("first request: %d, close %v", res.StatusCode, res.Close)
	}
	t.Logf("idle connection closed after %v", waitClosed(t, c, br).Round(time.Millisecond))
}

// TestSlowHeadersClosed: a client that never finishes its headers is
// closed after HeaderTimeout.
func TestSlowHeadersClosed(t *testing.T) {
	t.Parallel()
	ls := startLive(t, &Options{HeaderTimeout: 100 * time.Millisecond})
	c, br := ls.dial(t)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	waitClosed(t, c, br)
}

// TestSlowBodies: a body that trickles in is cut after BodyTimeout with
// 408; without the token it is never read (401, and the connection is
// closed rather than kept waiting for the rest); bodies over a route's
// limit are refused before they are read.
func TestSlowBodies(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	ls := startLive(t, &Options{Token: token, BodyTimeout: 200 * time.Millisecond})
	const auth = "Authorization: Bearer " + token + "\r\n"
	tests := []struct {
		name   string
		req    string // the request line and headers, without the final CRLF
		body   string // what is sent of the body before trickling
		status int
		code   string
	}{
		{"unauthenticated POST", "POST " + agentPath + "/servers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n", "{", 401, api.CodeUnauthorized},
		{"unauthenticated chunked POST", "POST " + agentPath + "/servers HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n", "1\r\n{\r\n", 401, api.CodeUnauthorized},
		{"trickling POST", "POST " + agentPath + "/servers HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 1000\r\n", "{", 408, api.CodeRequestTimeout},
		{"trickling chunked POST", "POST " + agentPath + "/servers HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Transfer-Encoding: chunked\r\n", "1\r\n{\r\n", 408, api.CodeRequestTimeout},
		{"too large", "POST " + agentPath + "/servers HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Length: 2000000\r\n", "{", 413, api.CodeBodyTooLarge},
		// Elsewhere a body is not read: the route answers as without one,
		// and the connection is closed.
		{"body on a GET", "GET " + defaultPath + "/servers HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Length: 10\r\n", "{", 200, ""},
		{"body on a wrong method", "PUT " + agentPath + "/servers HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Length: 10\r\n", "{", 405, api.CodeMethodNotAllowed},
		{"body on the callback", "GET /agents/test/never-opened/callback?state=s:x&code=c HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n", "{", 404, api.CodeUnknownAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, br := ls.dial(t)
			if _, err := io.WriteString(c, tt.req+"\r\n"+tt.body); err != nil {
				t.Fatal(err)
			}
			// Keep trickling, a byte at a time, until the server hangs up.
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						if _, err := c.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			start := time.Now()
			res, body := readResponse(t, c, br, "POST")
			if res.StatusCode != tt.status || (tt.code != "" && !strings.Contains(body, `"code":"`+tt.code+`"`)) {
				t.Fatalf("answer %d %s; want %d %s", res.StatusCode, body, tt.status, tt.code)
			}
			waitClosed(t, c, br)
			t.Logf("answered %d and closed after %v", tt.status, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestStreamsOutliveRequestLimits: the WebSocket and SSE streams are not
// cut by the idle, body or write timeouts of ordinary requests: they last
// as long as their pings are answered, here for many times those
// timeouts. The test counts the server's own keep-alives (SSE comments,
// WebSocket pings, sent every KeepAlive): the tenth shows the stream has
// lived ten times every limit, however slowly the machine runs.
func TestStreamsOutliveRequestLimits(t *testing.T) {
	t.Parallel()
	const limit = 50 * time.Millisecond
	ls := startLive(t, &Options{IdleTimeout: limit, BodyTimeout: limit, WriteTimeout: limit, KeepAlive: limit})
	const pings = 10 // 10 × KeepAlive: well past every limit

	t.Run("sse", func(t *testing.T) {
		t.Parallel()
		c, br := ls.dial(t)
		fmt.Fprintf(c, "GET %s/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", defaultPath)
		c.SetReadDeadline(time.Now().Add(safety))
		res, err := http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("opening the stream: %v %v", res, err)
		}
		sc := bufio.NewScanner(res.Body)
		seen := 0
		for seen < pings && sc.Scan() {
			if sc.Text() == ": keep-alive" {
				seen++
			}
		}
		if seen < pings {
			t.Fatalf("the stream ended after %d keep-alives: %v", seen, sc.Err())
		}
	})
	t.Run("websocket", func(t *testing.T) {
		t.Parallel()
		// A raw WebSocket client, to see the server's pings: it answers
		// each with its pong, as a client library does while it reads.
		c, br := ls.dial(t)
		c.SetDeadline(time.Now().Add(safety))
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", defaultPath, ls.addr)
		res, err := http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("opening the WebSocket: %v %v", res, err)
		}
		seen, frames := 0, 0
		for seen < pings {
			op, payload, err := readWSFrame(br)
			if err != nil {
				t.Fatalf("the connection ended after %d pings: %v", seen, err)
			}
			switch op {
			case wsPing:
				seen++
				if err := writeWSFrame(c, wsPong, payload); err != nil {
					t.Fatalf("pong %d: %v", seen, err)
				}
			case wsClose:
				t.Fatalf("the server closed the WebSocket after %d pings: %q", seen, payload)
			default:
				frames++
			}
		}
		if frames == 0 {
			t.Error("the server sent no state frame")
		}
	})
}

// WebSocket opcodes (RFC 6455 section 5.2).
const (
	wsClose = 0x8
	wsPing  = 0x9
	wsPong  = 0xA
)

// readWSFrame reads one frame the server sent (never masked).
func readWSFrame(r *bufio.Reader) (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if h[1]&0x80 != 0 {
		return 0, nil, errors.New("the server masked its frame")
	}
	if n > 1<<20 {
		return 0, nil, fmt.Errorf("a frame of %d bytes", n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	return h[0] & 0x0f, payload, nil
}

// writeWSFrame writes a control frame as a client does: final and masked.
func writeWSFrame(w io.Writer, op byte, payload []byte) error {
	mask := [4]byte{0x12, 0x34, 0x56, 0x78}
	b := append([]byte{0x80 | op, 0x80 | byte(len(payload))}, mask[:]...)
	for i, c := range payload {
		b = append(b, c^mask[i%4])
	}
	_, err := w.Write(b)
	return err
}
