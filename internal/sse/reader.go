package sse

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// An Event is one server-sent event.
type Event struct {
	Name  string // "event:" field; "" means "message"
	ID    string // "id:" field, or "" when the event set none
	Retry string // "retry:" field, or ""
	Data  []byte // "data:" lines joined with "\n"
}

// ErrEventTooLarge is returned when one event exceeds the size limit.
var ErrEventTooLarge = errors.New("server-sent event exceeds the size limit")

// Reader reads server-sent events (WHATWG "event stream interpretation")
// from r, buffering at most limit bytes for one event.
//
// Its read buffer grows to the longest line it meets, so a line is never
// reassembled from pieces. A reader made by NewReader takes its buffers
// from a pool and gives them back on Release (every call answered with an
// event stream reads one); NewLongReader starts small, for the streams
// that stay open and mostly idle for the life of a connection.
type Reader struct {
	r          io.Reader
	limit      int
	buf        []byte // buf[start:end] is read but not yet consumed
	start, end int
	err        error // from r, returned once buf holds no whole line
	empty      int   // consecutive reads that returned nothing
	data       *bytes.Buffer
	// line is the event's one data line so far, in buf: an event of one
	// line (as MCP servers send them) is handed out without a copy. It
	// moves to data before buf is reused (spill).
	line []byte
	bufs *pooled // where buf and data go back to, if pooled
	// wait, if set, blocks until r has bytes to read; the reader holds no
	// buffer while it waits (see NewIdleReader).
	wait func() error
}

// buffers holds the buffers of released Readers. A collection empties a
// sync.Pool, and a reader of large events would grow its buffer again
// (4 KiB, 8, ... up to the event) after each: kept holds a few buffers
// of up to maxKept bytes through collections.
var (
	buffers = sync.Pool{New: func() any {
		return &pooled{buf: make([]byte, readBuffer), data: new(bytes.Buffer)}
	}}
	kept = make(chan *pooled, 4)
)

type pooled struct {
	buf  []byte
	data *bytes.Buffer
}

const (
	// readBuffer is the starting read buffer of a reader from the pool.
	readBuffer = 4 << 10
	// longBuffer is the starting read buffer of a long-lived stream's
	// reader: an idle stream holds it for the life of its connection.
	longBuffer = 512
	// MaxPooled is the largest buffer kept for reuse.
	MaxPooled = 1 << 20
	// maxKept is the largest buffer kept through collections.
	maxKept = 256 << 10
)

// NewReader returns a reader of r with pooled buffers; call Release when
// done with it. limit is the most bytes one event may take (0: no limit).
func NewReader(r io.Reader, limit int) *Reader {
	var b *pooled
	select {
	case b = <-kept:
	default:
		b = buffers.Get().(*pooled)
	}
	return &Reader{r: r, limit: limit, buf: b.buf[:cap(b.buf)], data: b.data, bufs: b}
}

// NewLongReader returns a reader of r with small buffers of its own.
func NewLongReader(r io.Reader, limit int) *Reader {
	return &Reader{r: r, limit: limit, buf: make([]byte, longBuffer), data: new(bytes.Buffer)}
}

// NewIdleReader returns a reader of r that holds no buffer between events:
// when it has read every byte it was given and wants more, it lets its
// buffers go and calls wait, which must block until r has bytes to read
// (or fail), then takes a buffer from a pool again. It is for streams
// that stay open and idle for long: they then hold nothing but r. A read
// of r must not block once wait returned nil (a read may return fewer
// bytes, and even none, without blocking for long).
func NewIdleReader(r io.Reader, limit int, wait func() error) *Reader {
	return &Reader{r: r, limit: limit, wait: wait, data: new(bytes.Buffer)}
}

// idleBuffers holds the read buffers of idle readers while they wait.
var idleBuffers = sync.Pool{New: func() any { b := make([]byte, longBuffer); return &b }}

// Release gives the reader's buffers back to the pool, if they came from
// it. Neither the reader nor the Data of its events may be used afterwards.
func (s *Reader) Release() {
	b := s.bufs
	if b == nil {
		return
	}
	b.buf, b.data = s.buf, s.data
	s.buf, s.data, s.r, s.bufs = nil, nil, nil, nil
	if cap(b.buf) > MaxPooled {
		b.buf = make([]byte, readBuffer)
	}
	if b.data.Cap() > MaxPooled {
		b.data = new(bytes.Buffer)
	}
	b.data.Reset()
	if cap(b.buf) <= maxKept && b.data.Cap() <= maxKept {
		select {
		case kept <- b:
			return
		default:
		}
	}
	buffers.Put(b)
}

// Next returns the next event. It returns io.EOF when the stream ends
// cleanly between events, and io.ErrUnexpectedEOF when it ends inside one.
// The returned Data is valid until the next call.
func (s *Reader) Next() (Event, error) {
	var ev Event
	if s.data != nil {
		s.data.Reset()
	}
	s.line = nil
	lines := 0    // data lines of this event
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
				size = 0 // between events: keep-alives do not add up
				continue
			}
			switch {
			case s.line != nil:
				ev.Data = s.line
			case s.data != nil:
				ev.Data = s.data.Bytes()
			}
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
			if lines++; lines == 1 {
				// Not nil even for an empty value: the line counts.
				s.line = line[len(line)-len(value):]
				break
			}
			s.spill()
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

// idle gives the reader's buffers up, waits for input, and takes a read
// buffer back. The data buffer is given up only when it holds nothing of
// the event being read.
func (s *Reader) idle() error {
	if s.buf != nil {
		if cap(s.buf) == longBuffer {
			b := s.buf[:longBuffer]
			idleBuffers.Put(&b)
		}
		s.buf = nil
	}
	if s.data != nil && s.data.Len() == 0 {
		s.data = nil
	}
	err := s.wait()
	s.buf = *idleBuffers.Get().(*[]byte)
	return err
}

// spill moves the event's data line from buf to data.
func (s *Reader) spill() {
	if s.line == nil {
		return
	}
	if s.data == nil {
		s.data = new(bytes.Buffer)
	}
	s.data.Write(s.line)
	s.data.WriteByte('\n')
	s.line = nil
}

// readLine reads one line without its terminator (LF or CRLF; no MCP server
// ends lines with a lone CR, which this reader does not split on), adding
// its length to *size and failing once *size passes the limit. The line is
// valid until the next call.
func (s *Reader) readLine(size *int) ([]byte, error) {
	scanned := 0 // bytes of buf[start:end] known to hold no newline
	for {
		if i := bytes.IndexByte(s.buf[s.start+scanned:s.end], '\n'); i >= 0 {
			n := scanned + i + 1 // with the terminator
			*size += n
			if s.limit > 0 && *size > s.limit {
				return nil, ErrEventTooLarge
			}
			line := s.buf[s.start : s.start+n-1]
			s.start += n
			if k := len(line); k > 0 && line[k-1] == '\r' {
				line = line[:k-1]
			}
			return line, nil
		}
		scanned = s.end - s.start
		if s.limit > 0 && *size+scanned > s.limit {
			return nil, ErrEventTooLarge
		}
		if s.err != nil {
			if s.err == io.EOF && scanned > 0 {
				// A last line without a terminator is not an event line.
				return nil, io.ErrUnexpectedEOF
			}
			return nil, s.err
		}
		// Make room: move the partial line to the front, or grow.
		if s.start > 0 {
			s.spill() // the event's data line may be in front of it
			copy(s.buf, s.buf[s.start:s.end])
			s.start, s.end = 0, scanned
		}
		if s.wait != nil && s.end == 0 {
			// Nothing is buffered: wait without a buffer.
			if err := s.idle(); err != nil {
				s.err = err
				continue
			}
		}
		if s.end == len(s.buf) {
			grown := make([]byte, 2*len(s.buf))
			copy(grown, s.buf[:s.end])
			s.buf = grown
		}
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		switch {
		case err != nil:
			s.err = err
		case n > 0:
			s.empty = 0
		default:
			if s.empty++; s.empty >= 100 { // as bufio gives up
				s.err = io.ErrNoProgress
			}
		}
	}
}
