package mcpclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// An sseEvent is one server-sent event.
type sseEvent struct {
	Name  string // "event:" field; "" means "message"
	ID    string // "id:" field, or "" when the event set none
	Retry string // "retry:" field, or ""
	Data  []byte // "data:" lines joined with "\n"
}

// errEventTooLarge is returned when one event exceeds the size limit.
var errEventTooLarge = errors.New("server-sent event exceeds the size limit")

// sseReader reads server-sent events (WHATWG "event stream interpretation")
// from r, buffering at most limit bytes for one event.
type sseReader struct {
	r     *bufio.Reader
	limit int
	data  bytes.Buffer
}

func newSSEReader(r io.Reader, limit int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), limit: limit}
}

// Next returns the next event. It returns io.EOF when the stream ends
// cleanly between events, and io.ErrUnexpectedEOF when it ends inside one.
// The returned Data is valid until the next call.
func (s *sseReader) Next() (sseEvent, error) {
	var ev sseEvent
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
				continue
			}
			ev.Data = s.data.Bytes()
			if len(ev.Data) > 0 && ev.Data[len(ev.Data)-1] == '\n' {
				ev.Data = ev.Data[:len(ev.Data)-1]
			}
			return ev, nil
		}
		if line[0] == ':' { // comment, e.g. a keep-alive
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
func (s *sseReader) readLine(size *int) ([]byte, error) {
	var line []byte
	for {
		frag, err := s.r.ReadSlice('\n')
		*size += len(frag)
		if s.limit > 0 && *size > s.limit {
			return nil, errEventTooLarge
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
