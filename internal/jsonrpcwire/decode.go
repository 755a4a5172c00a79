package jsonrpcwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxJSONDepth is the nesting limit of go-sdk's decoder, kept here.
const maxJSONDepth = 1000

var (
	errMalformed = errors.New("invalid JSON")
	errTooDeep   = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxJSONDepth)
)

// Decode is jsonrpc.DecodeMessage: the same messages decode to the same
// values, and what it refuses, this refuses (it also refuses bytes after
// the message, which go-sdk ignores). data is not retained.
func Decode(data []byte) (jsonrpc.Message, error) {
	msg, err := DecodeShared(data)
	if err == nil {
		Own(msg)
	}
	return msg, err
}

// Own gives msg its own copy of the raw params or result that it shares
// with the bytes DecodeShared decoded it from.
func Own(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Params != nil {
			m.Params = bytes.Clone(m.Params)
		}
	case *jsonrpc.Response:
		if m.Result != nil {
			m.Result = bytes.Clone(m.Result)
		}
	}
}

// DecodeShared is Decode, but the raw params or result of the message it
// returns are slices of data: valid only as long as data is, unless Own is
// called.
func DecodeShared(data []byte) (jsonrpc.Message, error) {
	s := scanner{data: data}
	var (
		version                      string
		id                           jsonrpc.ID
		method                       string
		hasMethod                    bool
		params, result, errorRaw     []byte
		hasParams, hasResult, hasErr bool
	)
	err := s.object(func(key []byte, start, end int) error {
		v := data[start:end]
		switch string(key) {
		case "jsonrpc":
			str, ok := s.stringValue(v)
			if !ok {
				return fmt.Errorf("jsonrpc: not a string")
			}
			version = str
		case "id":
			var err error
			if id, err = decodeID(&s, v); err != nil {
				return err
			}
		case "method":
			hasMethod = true
			if string(v) == "null" {
				method = ""
				break
			}
			str, ok := s.stringValue(v)
			if !ok {
				return fmt.Errorf("method: not a string")
			}
			method = str
		case "params":
			params, hasParams = v, true
		case "result":
			result, hasResult = v, true
		case "error":
			errorRaw, hasErr = v, true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", version, "2.0")
	}
	if hasMethod {
		req := &jsonrpc.Request{ID: id, Method: method}
		if hasParams {
			req.Params = params
		}
		return req, nil
	}
	if !id.IsValid() {
		return nil, errors.New("JSON RPC invalid request")
	}
	resp := &jsonrpc.Response{ID: id}
	if hasResult {
		resp.Result = result
	}
	if hasErr && string(errorRaw) != "null" {
		// Error responses are small and rare: go-sdk decodes them, so that
		// their fields match exactly as it matches them.
		return jsonrpc.DecodeMessage(data)
	}
	return resp, nil
}

// decodeID decodes a JSON-RPC id the way jsonrpc.MakeID does: a number
// (truncated to an integer), a string, or null.
func decodeID(s *scanner, v []byte) (jsonrpc.ID, error) {
	switch {
	case string(v) == "null":
		return jsonrpc.ID{}, nil
	case v[0] == '"':
		str, ok := s.stringValue(v)
		if !ok {
			return jsonrpc.ID{}, errMalformed
		}
		return jsonrpc.MakeID(str)
	case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'):
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return jsonrpc.ID{}, fmt.Errorf("invalid id %s: %w", v, err)
		}
		return jsonrpc.MakeID(f)
	}
	return jsonrpc.MakeID(map[string]any(nil)) // an invalid type: MakeID's error
}

// scanner validates JSON and finds the bounds of values.
type scanner struct {
	data  []byte
	pos   int
	depth int
	// maxDepth is the nesting limit; 0 means go-sdk's, maxJSONDepth.
	maxDepth int
	// keyEscaped is set, during members' call of fn, when the member's
	// key held escapes.
	keyEscaped bool
}

// object scans data as one JSON object (with nothing but white space
// after it), calling fn with each member's unescaped key and the bounds of
// its value. The key is valid only during the call.
func (s *scanner) object(fn func(key []byte, start, end int) error) error {
	s.space()
	err := s.members(func(key []byte) error {
		start := s.pos
		if err := s.value(); err != nil {
			return err
		}
		return fn(key, start, s.pos)
	})
	if err != nil {
		return err
	}
	return s.end()
}

// members scans the object at s.pos, calling fn with each member's
// unescaped key (valid only during the call; keyEscaped tells whether it
// held escapes) and s.pos at the member's value, which fn must scan.
func (s *scanner) members(fn func(key []byte) error) error {
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		return errors.New("not a JSON object")
	}
	s.pos++
	if err := s.deeper(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	var keyBuf []byte
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return errMalformed
		}
		kstart := s.pos
		escaped, err := s.str()
		if err != nil {
			return err
		}
		key := s.data[kstart+1 : s.pos-1]
		if escaped {
			var k string
			if err := json.Unmarshal(s.data[kstart:s.pos], &k); err != nil {
				return err
			}
			keyBuf = append(keyBuf[:0], k...)
			key = keyBuf
		}
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return errMalformed
		}
		s.pos++
		s.space()
		s.keyEscaped = escaped
		if err := fn(key); err != nil {
			return err
		}
		if done, err := s.separator('}'); done || err != nil {
			return err
		}
	}
}

// elements scans the array at s.pos, calling fn with s.pos at each
// element, which fn must scan.
func (s *scanner) elements(fn func() error) error {
	if s.pos >= len(s.data) || s.data[s.pos] != '[' {
		return errors.New("not a JSON array")
	}
	s.pos++
	if err := s.deeper(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		s.space()
		if err := fn(); err != nil {
			return err
		}
		if done, err := s.separator(']'); done || err != nil {
			return err
		}
	}
}

// deeper enters one more level of nesting, within the limit; the caller
// leaves it (s.depth--) when done.
func (s *scanner) deeper() error {
	s.depth++
	switch {
	case s.maxDepth == 0 && s.depth > maxJSONDepth:
		return errTooDeep
	case s.maxDepth > 0 && s.depth > s.maxDepth:
		return fmt.Errorf("json: exceeded maximum nesting depth of %d", s.maxDepth)
	}
	return nil
}

// separator scans what follows a member or an element: a ',' (more
// follow) or closing (done).
func (s *scanner) separator(closing byte) (done bool, err error) {
	s.space()
	if s.pos >= len(s.data) {
		return false, errMalformed
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return false, nil
	case closing:
		s.pos++
		return true, nil
	}
	return false, errMalformed
}

// end checks that only white space follows.
func (s *scanner) end() error {
	s.space()
	if s.pos != len(s.data) {
		return errors.New("invalid character after the JSON value")
	}
	return nil
}

// stringValue returns the string v (a valid JSON value) holds.
func (s *scanner) stringValue(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var str string
	if json.Unmarshal(v, &str) != nil {
		return "", false
	}
	return str, true
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value validates and skips one JSON value at s.pos.
func (s *scanner) value() error {
	if s.pos >= len(s.data) {
		return errMalformed
	}
	switch c := s.data[s.pos]; {
	case c == '"':
		_, err := s.str()
		return err
	case c == '{' || c == '[':
		return s.composite()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return errMalformed
}

// composite skips an object or array, with nesting bounded.
func (s *scanner) composite() error {
	open := s.data[s.pos]
	s.pos++
	if err := s.deeper(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == closer {
		s.pos++
		return nil
	}
	for {
		s.space()
		if open == '{' {
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return errMalformed
			}
			if _, err := s.str(); err != nil {
				return err
			}
			s.space()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return errMalformed
			}
			s.pos++
			s.space()
		}
		if err := s.value(); err != nil {
			return err
		}
		if done, err := s.separator(closer); done || err != nil {
			return err
		}
	}
}

func (s *scanner) literal(lit string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return errMalformed
	}
	s.pos += len(lit)
	return nil
}

// number skips a number, following the JSON grammar.
func (s *scanner) number() error {
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return errMalformed
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return errMalformed
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return errMalformed
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return nil
}

// SWAR constants: one byte repeated over a 64-bit word.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special returns a mask whose lowest set bit is the high bit of the first
// byte of w (little-endian) that is a quote, a backslash or a control
// character (the bytes a JSON string scan must stop at), or 0 if none is.
// Only the lowest set bit is exact: a borrow may flag bytes above it.
func special(w uint64) uint64 {
	q := w ^ ('"' * lsb)
	b := w ^ ('\\' * lsb)
	return (((q - lsb) &^ q) | ((b - lsb) &^ b) | ((w - 0x20*lsb) &^ w)) & msb
}

// nextSpecial returns the index of the first byte at or after i that is a
// quote, a backslash or a control character, or len(d).
func nextSpecial(d []byte, i int) int {
	for ; i+8 <= len(d); i += 8 {
		if m := special(binary.LittleEndian.Uint64(d[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(d); i++ {
		if c := d[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(d)
}

// str skips a string starting at s.pos (a quote), eight bytes at a time
// where nothing needs a look, and reports whether it holds escapes.
func (s *scanner) str() (escaped bool, err error) {
	d := s.data
	i := s.pos + 1
	for {
		i = nextSpecial(d, i)
		if i >= len(d) {
			return false, errMalformed
		}
		switch c := d[i]; {
		case c == '"':
			s.pos = i + 1
			return escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				return false, errMalformed
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) {
					return false, errMalformed
				}
				for _, h := range d[i+2 : i+6] {
					if !isHex(h) {
						return false, errMalformed
					}
				}
				i += 6
			default:
				return false, errMalformed
			}
		case c < 0x20:
			return false, errMalformed
		default:
			i++
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
