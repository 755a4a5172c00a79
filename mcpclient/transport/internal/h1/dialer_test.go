package h1

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// chunked encodes data in chunks of the given sizes (the rest in one).
func chunked(data string, sizes ...int) string {
	var b bytes.Buffer
	w := httputil.NewChunkedWriter(&b)
	for _, n := range sizes {
		n = min(n, len(data))
		w.Write([]byte(data[:n]))
		data = data[n:]
	}
	if data != "" {
		w.Write([]byte(data))
	}
	w.Close()
	b.WriteString("\r\n")
	return b.String()
}

// checkChunked compares chunkedBody with net/http's chunked reader on in,
// read whole, a byte at a time, and in halves, with some of it already read
// with the response's head (pending).
func checkChunked(t *testing.T, in string) {
	t.Helper()
	want, wantErr := io.ReadAll(httputil.NewChunkedReader(strings.NewReader(in)))
	for _, pending := range []int{0, 1, len(in) / 2, len(in)} {
		pending = min(pending, len(in))
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"whole": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader, "half": iotest.HalfReader,
		} {
			b := &chunkedBody{r: wrap(strings.NewReader(in[pending:]))}
			if pending > 0 {
				b.pending = []byte(in[:pending])
			}
			got, err := io.ReadAll(b)
			if wantErr == nil && (err != nil || !bytes.Equal(got, want)) {
				t.Fatalf("%s, %d pending, %.80q: got %q, %v; want %q", name, pending, in, got, err, want)
			}
			if wantErr != nil && err == nil && !bytes.Equal(got, want) && !errors.Is(wantErr, io.ErrUnexpectedEOF) {
				// Lenient where net/http is strict (a bare LF after a
				// chunk's data) is allowed; silently different is not.
				t.Logf("%s: net/http fails (%v), chunkedBody reads %q", name, wantErr, got)
			}
			if b.pending != nil && len(b.pending) == 0 {
				t.Fatalf("an emptied pending slice is still held")
			}
		}
	}
}

var chunkedCorpus = []string{
	chunked(""),
	chunked("data: x\n\n"),
	chunked("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n: ping\n\n", 1, 2, 3, 10, 40),
	chunked(strings.Repeat("data: y\n\n", 300), 700, 1, 1500),
	"5;ext=1\r\nhello\r\n0\r\n\r\n",
	"5 \r\nhello\r\n0\r\n\r\n",
	"A\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n",
	"0000000000000005\r\nhello\r\n0\r\n\r\n",
	"5\r\nhel",                                // cut inside a chunk
	"5\r\nhelloXX",                            // no CRLF after the data
	"zz\r\nhello\r\n",                         // not hex
	"\r\n",                                    // no size
	"00000000000000005\r\nhello\r\n0\r\n\r\n", // 17 digits
}

// TestChunkedBody: the in-place chunked decoder of standing streams reads
// what net/http's reads, however the bytes arrive.
func TestChunkedBody(t *testing.T) {
	for _, in := range chunkedCorpus {
		checkChunked(t, in)
	}
	// Errors: a cut stream is io.ErrUnexpectedEOF, malformed framing
	// errChunked.
	for in, want := range map[string]error{"5\r\nhel": io.ErrUnexpectedEOF, "5\r\nhelloXX": errChunked, "zz\r\n": errChunked, "\r\n": errChunked} {
		_, err := io.ReadAll(&chunkedBody{r: strings.NewReader(in)})
		if !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", in, err, want)
		}
	}
}

func FuzzChunkedBody(f *testing.F) {
	for _, in := range chunkedCorpus {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) { checkChunked(t, in) })
}

// TestReadableWait: on a TCP connection the wait returns once a byte can
// be read, without reading it, and fails once the connection is closed; a
// connection without a socket has none.
func TestReadableWait(t *testing.T) {
	if p, _ := net.Pipe(); readableWait(p) != nil {
		t.Error("a pipe has a wait")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wait := readableWait(c)
	if runtime.GOOS != "windows" && wait == nil {
		t.Fatal("a TCP connection has no wait")
	}
	if wait == nil {
		return
	}
	s.Write([]byte("x"))
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if n, err := c.Read(b[:]); n != 1 || b[0] != 'x' {
		t.Fatalf("after the wait, Read = %d %q, %v; want the byte still there", n, b[:n], err)
	}
	done := make(chan error, 1)
	go func() { done <- wait() }()
	c.Close()
	if err := <-done; err == nil {
		t.Error("the wait on a closed connection returned nil")
	}
}

// TestStandingStreamHostileHead: a server answering a standing stream's
// request with an endless header line, or with informational (1xx)
// answers one after another, gets an error once the head passes
// maxStreamHead bytes or maxInformational answers, as from net/http's
// Transport, instead of growing this process's memory or holding the
// stream's goroutine for ever.
func TestStandingStreamHostileHead(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(w io.Writer) error
		want  string
	}{
		{"endless header line", func(w io.Writer) error {
			if _, err := io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Endless: "); err != nil {
				return err
			}
			chunk := bytes.Repeat([]byte("a"), 64<<10)
			for range (maxStreamHead / len(chunk)) + 2 {
				if _, err := w.Write(chunk); err != nil {
					return err
				}
			}
			return nil
		}, "larger than"},
		{"endless 1xx answers", func(w io.Writer) error {
			for range maxInformational + 3 {
				if _, err := io.WriteString(w, "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"); err != nil {
					return err
				}
			}
			return nil
		}, "informational"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			served := make(chan struct{})
			go func() {
				defer close(served)
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				// Read the request's head, then answer, then hold the
				// connection open: only the client's limit can end it.
				buf := make([]byte, 4096)
				if _, err := c.Read(buf); err != nil {
					return
				}
				if tt.write(c) == nil {
					io.Copy(io.Discard, c) // until the client closes
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+l.Addr().String()+"/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			v := &Via{Dialer: &Dialer{DialContext: (&net.Dialer{}).DialContext}}
			resp, err := v.openOwn(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("openOwn: a response (%d); want an error", resp.StatusCode)
			}
			if ctx.Err() != nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("openOwn: %v; want an error saying %q before the safety timeout", err, tt.want)
			}
			<-served // the client closed the connection
		})
	}
}
