package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// The event stream reader before it kept its own read buffer, as a
// reference for TestSSEReader (with a small bufio buffer, so that long
// lines are reassembled).

// refSSEReader reads server-sent events (WHATWG "event stream interpretation")
// from r, buffering at most limit bytes for one event.
type refSSEReader struct {
	r     *bufio.Reader
	limit int
	data  bytes.Buffer
}

func newRefSSEReader(r io.Reader, limit int) *refSSEReader {
	return &refSSEReader{r: bufio.NewReaderSize(r, 64), limit: limit}
}

// Next returns the next event. It returns io.EOF when the stream ends
// cleanly between events, and io.ErrUnexpectedEOF when it ends inside one.
// The returned Data is valid until the next call.
func (s *refSSEReader) Next() (Event, error) {
	var ev Event
	s.data.Reset()
	seen := false // whether any field of this event was read
	size := 0
	for {
		line, err := s.readLine(&size)
		if err != nil {
			if err == io.EOF && seen {
				return ev, io.ErrUnexpectedEOF
			}
			return ev, err
		}
		if len(line) == 0 { // blank line: dispatch
			if !seen {
				size = 0 // between events: keep-alives do not add up (TestSSEKeepAlives)
				continue
			}
			ev.Data = s.data.Bytes()
			if len(ev.Data) > 0 && ev.Data[len(ev.Data)-1] == '\n' {
				ev.Data = ev.Data[:len(ev.Data)-1]
			}
			return ev, nil
		}
		if line[0] == ':' { // comment, e.g. a keep-alive
			if !seen {
				size = 0
			}
			continue
		}
		seen = true
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			s.data.Write(value)
			s.data.WriteByte('\n')
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID = string(value)
			}
		case "retry":
			ev.Retry = string(value)
		}
	}
}

// readLine reads one line without its terminator (LF or CRLF; no MCP server
// ends lines with a lone CR, which this reader does not split on), adding
// its length to *size and failing once *size passes the limit.
func (s *refSSEReader) readLine(size *int) ([]byte, error) {
	var line []byte
	for {
		frag, err := s.r.ReadSlice('\n')
		*size += len(frag)
		if s.limit > 0 && *size > s.limit {
			return nil, ErrEventTooLarge
		}
		if err == bufio.ErrBufferFull {
			line = append(line, frag...)
			continue
		}
		if err != nil {
			if err == io.EOF && len(frag)+len(line) > 0 {
				// A last line without a terminator is not an event line.
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line != nil {
			line = append(line, frag...)
		} else {
			line = frag
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}

// readAll reads every event of in with next, and describes them.
func readAll(next func() (Event, error)) string {
	var b strings.Builder
	for range 10000 {
		ev, err := next()
		if err != nil {
			switch {
			case errors.Is(err, ErrEventTooLarge):
				b.WriteString("too large")
			case err == io.EOF:
				b.WriteString("EOF")
			case err == io.ErrUnexpectedEOF:
				b.WriteString("unexpected EOF")
			default:
				b.WriteString("error")
			}
			return b.String()
		}
		fmt.Fprintf(&b, "[%q %q %q %q]", ev.Name, ev.ID, ev.Retry, ev.Data)
	}
	return b.String()
}

var sseCorpus = []string{
	"data: hello\n\n",
	"event: message\ndata: {\"a\":1}\nid: 7\n\n: keep-alive\n\ndata: two\r\ndata: lines\r\n\r\n",
	"retry: 1000\nid: 1\n\ndata:no space\n\n",
	"data: " + strings.Repeat("x", 5000) + "\n\n",
	"data: unterminated",
	"data: ends inside\n",
	"id: a\x00b\ndata: x\n\n",
	"\n\n\ndata: after blanks\n\nevent: other\ndata: y\n\n",
	"field without colon\ndata: z\n\n",
	// One data line is handed out in place; more are joined.
	"data\ndata: x\n\ndata\n\ndata:\n\n",
	"data: a\nid: 1\nevent: e\ndata: b\n\n",
	"data: " + strings.Repeat("y", 700) + "\nevent: late\nid: 2\n\ndata: next\n\n",
}

func checkSSE(t *testing.T, in string, limit int) {
	t.Helper()
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+err": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		ref := newRefSSEReader(wrap(strings.NewReader(in)), limit)
		want := readAll(ref.Next)
		for _, kind := range []string{"pooled", "long", "idle"} {
			var sr *Reader
			switch kind {
			case "long":
				sr = NewLongReader(wrap(strings.NewReader(in)), limit)
			case "idle":
				// The wait checks that the reader holds no read buffer
				// while it waits, nor a data buffer between events.
				sr = NewIdleReader(wrap(strings.NewReader(in)), limit, func() error {
					if sr.buf != nil || (sr.data != nil && sr.data.Len() == 0) {
						t.Errorf("%s reader: the idle reader waits with a buffer (read %d, data %v)", name, len(sr.buf), sr.data != nil)
					}
					return nil
				})
			default:
				sr = NewReader(wrap(strings.NewReader(in)), limit)
			}
			got := readAll(sr.Next)
			sr.Release()
			if got != want {
				t.Errorf("%s reader, %s, limit %d, input %.80q:\n got %.300s\nwant %.300s", name, kind, limit, in, got, want)
			}
		}
	}
}

func TestSSEReader(t *testing.T) {
	for _, in := range sseCorpus {
		for _, limit := range []int{0, 10, 100, 4096, 1 << 20} {
			checkSSE(t, in, limit)
		}
	}
}

func FuzzSSEReader(f *testing.F) {
	for _, in := range sseCorpus {
		f.Add(in, 0)
		f.Add(in, 64)
	}
	f.Fuzz(func(t *testing.T, in string, limit int) {
		if limit < 0 || limit > 1<<20 {
			return
		}
		checkSSE(t, in, limit)
	})
}

// TestIdleReaderWaits: an idle reader waits before each read that starts
// with nothing buffered, without its buffers, and a wait's error ends the
// stream with that error.
func TestIdleReaderWaits(t *testing.T) {
	stream := "data: one\n\n: ping\n\ndata: two\n\n"
	waits := 0
	sr := NewIdleReader(iotest.OneByteReader(strings.NewReader(stream)), 0, func() error { waits++; return nil })
	if got, want := readAll(sr.Next), `["" "" "" "one"]["" "" "" "two"]EOF`; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	// One-byte reads: a wait before the first byte of each line, and
	// before the read that finds the end.
	if lines := strings.Count(stream, "\n"); waits != lines+1 {
		t.Errorf("%d waits for %d lines; want one before each line and one before the end", waits, lines)
	}
	boom := errors.New("closed while waiting")
	sr = NewIdleReader(strings.NewReader("data: one\n\n"), 0, func() error { return boom })
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Errorf("Next = %v, want the wait's error", err)
	}
}

// TestSSEKeepAlives: comments and blank lines between events (keep-alives
// on a quiet stream) do not count toward the next event's size limit.
func TestSSEKeepAlives(t *testing.T) {
	stream := strings.Repeat(": ping\n\n", 200) + "\n\n" + "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n"
	ev, err := NewLongReader(strings.NewReader(stream), 1024).Next()
	if err != nil || !strings.Contains(string(ev.Data), "notifications/x") {
		t.Fatalf("Next = %q, %v; want the event after the keep-alives", ev.Data, err)
	}
	// One comment longer than the limit is still refused.
	_, err = NewLongReader(strings.NewReader(": "+strings.Repeat("x", 2000)+"\n\ndata: x\n\n"), 1024).Next()
	if !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("a 2000-byte comment: %v, want ErrEventTooLarge", err)
	}
}

// TestBuffersKept: the buffers of a released reader that grew for a large
// event outlast collections, up to maxKept; larger ones are not kept.
func TestBuffersKept(t *testing.T) {
	drain := func() (caps []int) {
		for {
			select {
			case b := <-kept:
				caps = append(caps, cap(b.buf))
			default:
				return caps
			}
		}
	}
	drain()
	runtime.GC()
	runtime.GC() // a sync.Pool is empty after two
	read := func(size int) {
		sr := NewReader(strings.NewReader("data: "+strings.Repeat("x", size)+"\n\n"), 0)
		if ev, err := sr.Next(); err != nil || len(ev.Data) != size {
			t.Fatalf("Next: %d bytes, %v", len(ev.Data), err)
		}
		sr.Release()
	}
	read(100 << 10)
	runtime.GC()
	runtime.GC()
	if caps := drain(); len(caps) != 1 || caps[0] < 100<<10 {
		t.Errorf("kept buffers %v after two collections; want one of at least 100 KiB", caps)
	}
	read(300 << 10)
	if caps := drain(); len(caps) != 0 {
		t.Errorf("kept buffers %v; want none above %d bytes", caps, maxKept)
	}
}
