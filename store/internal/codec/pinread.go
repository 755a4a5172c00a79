package codec

import (
	"encoding/json"

	"github.com/agentmcp/agentmcp/store"
)

// decodePinRecord fills p from a pin's record as EncodePin writes it (each
// field once, by its exact name; strings without escapes; definitions as
// objects), in one pass over the bytes: an agent reads every pin of its
// tools when it wakes, and encoding/json spends most of that scanning the
// definitions twice. It reports false, leaving p to json.Unmarshal, for
// any record it does not read as encoding/json would.
func decodePinRecord(data []byte, p *store.Pin) bool {
	var out store.Pin
	r := recordReader{data: data}
	r.ws()
	if !r.byte('{') {
		return false
	}
	var seen uint16
	r.ws()
	if r.peek('}') {
		r.i++
	} else {
		for {
			r.ws()
			key, ok := r.plainString()
			if !ok {
				return false
			}
			r.ws()
			if !r.byte(':') {
				return false
			}
			r.ws()
			bit, ok := pinRecordFields[string(key)]
			if !ok || seen&bit != 0 {
				return false // unknown, or twice: encoding/json's rules
			}
			seen |= bit
			switch bit {
			case fieldNamespace, fieldServerID, fieldTool, fieldState, fieldFingerprint, fieldSeenFingerprint:
				s, ok := r.plainString()
				if !ok {
					return false
				}
				switch bit {
				case fieldNamespace:
					out.Namespace = string(s)
				case fieldServerID:
					out.ServerID = string(s)
				case fieldTool:
					out.Tool = string(s)
				case fieldState:
					out.State = string(s)
				case fieldFingerprint:
					out.Fingerprint = string(s)
				case fieldSeenFingerprint:
					out.SeenFingerprint = string(s)
				}
			case fieldDefinition, fieldSeen:
				if !r.peek('{') {
					return false
				}
				start := r.i
				if !r.skipValue(0) {
					return false
				}
				raw := json.RawMessage(append([]byte(nil), data[start:r.i]...))
				if bit == fieldDefinition {
					out.Definition = raw
				} else {
					out.Seen = raw
				}
			case fieldPinnedAt, fieldChangedAt:
				start := r.i
				if _, ok := r.plainString(); !ok {
					return false
				}
				t := &out.PinnedAt
				if bit == fieldChangedAt {
					t = &out.ChangedAt
				}
				if t.UnmarshalJSON(data[start:r.i]) != nil {
					return false
				}
			}
			r.ws()
			if r.byte(',') {
				continue
			}
			if !r.byte('}') {
				return false
			}
			break
		}
	}
	r.ws()
	if r.i != len(data) {
		return false
	}
	*p = out
	return true
}

const (
	fieldNamespace uint16 = 1 << iota
	fieldServerID
	fieldTool
	fieldState
	fieldFingerprint
	fieldDefinition
	fieldSeenFingerprint
	fieldSeen
	fieldPinnedAt
	fieldChangedAt
)

// pinRecordFields are store.Pin's JSON names.
var pinRecordFields = map[string]uint16{
	"namespace": fieldNamespace, "serverId": fieldServerID, "tool": fieldTool, "state": fieldState,
	"fingerprint": fieldFingerprint, "definition": fieldDefinition, "seenFingerprint": fieldSeenFingerprint,
	"seen": fieldSeen, "pinnedAt": fieldPinnedAt, "changedAt": fieldChangedAt,
}

// recordReader reads a JSON record.
type recordReader struct {
	data []byte
	i    int
}

func (r *recordReader) ws() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *recordReader) peek(b byte) bool { return r.i < len(r.data) && r.data[r.i] == b }

func (r *recordReader) byte(b byte) bool {
	if r.peek(b) {
		r.i++
		return true
	}
	return false
}

// plainString reads a string without escapes, of printable ASCII: its
// text is its bytes.
func (r *recordReader) plainString() ([]byte, bool) {
	if !r.byte('"') {
		return nil, false
	}
	start := r.i
	for r.i < len(r.data) {
		b := r.data[r.i]
		switch {
		case b == '"':
			r.i++
			return r.data[start : r.i-1], true
		case b == '\\' || b < 0x20 || b >= 0x80:
			return nil, false
		}
		r.i++
	}
	return nil, false
}

// skipValue reads past one JSON value, checking its syntax as
// encoding/json does (strings may hold any byte but controls; escapes are
// checked).
func (r *recordReader) skipValue(depth int) bool {
	if depth >= 10000 {
		return false
	}
	r.ws()
	if r.i >= len(r.data) {
		return false
	}
	switch b := r.data[r.i]; {
	case b == '{':
		r.i++
		r.ws()
		if r.byte('}') {
			return true
		}
		for {
			r.ws()
			if !r.peek('"') || !r.skipString() {
				return false
			}
			r.ws()
			if !r.byte(':') || !r.skipValue(depth+1) {
				return false
			}
			r.ws()
			if r.byte(',') {
				continue
			}
			return r.byte('}')
		}
	case b == '[':
		r.i++
		r.ws()
		if r.byte(']') {
			return true
		}
		for {
			if !r.skipValue(depth + 1) {
				return false
			}
			r.ws()
			if r.byte(',') {
				continue
			}
			return r.byte(']')
		}
	case b == '"':
		return r.skipString()
	case b == '-' || ('0' <= b && b <= '9'):
		return r.skipNumber()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(r.data)-r.i >= len(lit) && string(r.data[r.i:r.i+len(lit)]) == lit {
			r.i += len(lit)
			return true
		}
	}
	return false
}

func (r *recordReader) skipString() bool {
	r.i++ // "
	for r.i < len(r.data) {
		b := r.data[r.i]
		switch {
		case b == '"':
			r.i++
			return true
		case b < 0x20:
			return false
		case b == '\\':
			r.i++
			if r.i >= len(r.data) {
				return false
			}
			switch r.data[r.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.i++
			case 'u':
				r.i++
				for range 4 {
					if r.i >= len(r.data) || !isHex(r.data[r.i]) {
						return false
					}
					r.i++
				}
			default:
				return false
			}
		default:
			r.i++
		}
	}
	return false
}

func isHex(b byte) bool {
	return ('0' <= b && b <= '9') || ('a' <= b && b <= 'f') || ('A' <= b && b <= 'F')
}

func (r *recordReader) skipNumber() bool {
	d := r.data
	digits := func() int {
		n := 0
		for r.i < len(d) && '0' <= d[r.i] && d[r.i] <= '9' {
			r.i++
			n++
		}
		return n
	}
	if d[r.i] == '-' {
		r.i++
	}
	switch {
	case r.i < len(d) && d[r.i] == '0':
		r.i++
	case digits() == 0:
		return false
	}
	if r.i < len(d) && d[r.i] == '.' {
		r.i++
		if digits() == 0 {
			return false
		}
	}
	if r.i < len(d) && (d[r.i] == 'e' || d[r.i] == 'E') {
		r.i++
		if r.i < len(d) && (d[r.i] == '+' || d[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
