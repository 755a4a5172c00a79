package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxEncodeDepth is the nesting beyond which AppendJSON hands a value to
// encoding/json whole: encoding/json then finds cycles (an error) as it
// would have, and encodes anything else the same.
const maxEncodeDepth = 200

// AppendJSON appends the JSON encoding of v to dst: exactly the bytes
// encoding/json's Encoder writes with SetEscapeHTML(false) (without its
// trailing newline), and an error where it fails. The generic shapes
// (map[string]any, []any, strings, numbers, booleans, nil,
// json.RawMessage, json.Number) and a go-sdk *mcp.Implementation are
// written without reflection; any other value is encoded by encoding/json.
// FuzzAppendJSON and TestAppendJSON compare the two.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, v, 0, false)
}

// AppendPlain is AppendJSON for values made only of the generic shapes
// (maps, slices, strings, numbers, booleans, nil, json.Number) nested at
// most maxEncodeDepth deep, written without reflection; ok is false, and
// dst's new bytes meaningless, for any other value (one AppendJSON would
// hand to encoding/json) and where encoding/json fails.
func AppendPlain(dst []byte, v any) (_ []byte, ok bool) {
	dst, err := appendValue(dst, v, 0, true)
	return dst, err == nil
}

// errNotPlain is appendValue's error, when plain, for a value it would
// otherwise hand to encoding/json.
var errNotPlain = errors.New("jsonrpcwire: not a plain JSON value")

// appendValue is AppendJSON at depth; plain refuses (errNotPlain) what it
// would otherwise hand to encoding/json.
func appendValue(dst []byte, v any, depth int, plain bool) ([]byte, error) {
	if depth > maxEncodeDepth {
		if plain {
			return dst, errNotPlain
		}
		return appendStd(dst, v)
	}
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, v), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case float64:
		return appendFloat(dst, v, 64)
	case float32:
		return appendFloat(dst, float64(v), 32)
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(dst, v, 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case map[string]any:
		return appendMap(dst, v, depth, plain)
	case mcp.Meta:
		return appendMap(dst, v, depth, plain)
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e, depth+1, plain); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case json.RawMessage:
		if plain {
			return dst, errNotPlain
		}
		return appendRaw(dst, v)
	case json.Number:
		return appendNumber(dst, v)
	case *mcp.Implementation:
		if v != nil && sdkLayoutKnown && len(v.Icons) == 0 && !plain {
			return appendImplementation(dst, v), nil
		}
	}
	if plain {
		return dst, errNotPlain
	}
	return appendStd(dst, v)
}

// stdEncoder is encoding/json's Encoder, HTML not escaped, with the
// buffer it writes to.
type stdEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// stdEncoders keeps the encoders appendStd uses: encoding/json keeps its
// own state pooled, so that a small value it encodes allocates nothing
// more.
var stdEncoders = sync.Pool{New: func() any {
	e := new(stdEncoder)
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// appendStd appends encoding/json's encoding of v, HTML not escaped.
func appendStd(dst []byte, v any) ([]byte, error) {
	e := stdEncoders.Get().(*stdEncoder)
	e.buf.Reset()
	err := e.enc.Encode(v)
	if err == nil {
		dst = append(dst, bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))...)
	}
	if e.buf.Cap() <= maxScratch {
		stdEncoders.Put(e)
	}
	return dst, err
}

// appendMap writes an object with its keys sorted, as encoding/json does.
func appendMap(dst []byte, m map[string]any, depth int, plain bool) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, m[k], depth+1, plain); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendString writes s quoted as encoding/json does without HTML
// escaping: the quote, the backslash and control characters escaped,
// U+2028 and U+2029 as \u escapes, each byte of invalid UTF-8 as \ufffd.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendFloat formats f as encoding/json does (like ES6: %f, or %e with
// an exponent of at least one digit outside [1e-6, 1e21)). NaN and the
// infinities are encoding/json's error.
func appendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if bits == 32 {
			return appendStd(dst, float32(f))
		}
		return appendStd(dst, f)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendRaw writes a json.RawMessage compacted (nil is null); invalid JSON
// is encoding/json's error.
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	if !json.Valid(raw) {
		return appendStd(dst, raw)
	}
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return append(dst, raw...), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

// appendNumber writes a json.Number as is ("" as 0); an invalid number is
// encoding/json's error.
func appendNumber(dst []byte, n json.Number) ([]byte, error) {
	if n == "" {
		return append(dst, '0'), nil
	}
	s := scanner{data: []byte(n)}
	if s.number() != nil || s.pos != len(s.data) {
		return appendStd(dst, n)
	}
	return append(dst, n...), nil
}

// appendImplementation writes an *mcp.Implementation without icons, its
// fields in go-sdk's order with go-sdk's tags (sdkLayoutKnown checks them).
func appendImplementation(dst []byte, impl *mcp.Implementation) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, impl.Name)
	dst = appendOptString(dst, `,"title":`, impl.Title)
	dst = appendOptString(dst, `,"description":`, impl.Description)
	dst = append(dst, `,"version":`...)
	dst = appendString(dst, impl.Version)
	dst = appendOptString(dst, `,"websiteUrl":`, impl.WebsiteURL)
	return append(dst, '}')
}

// appendOptString writes an omitempty string member, key being the comma,
// the quoted name and the colon.
func appendOptString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(append(dst, key...), s)
}

// scratch holds the buffers MarshalParams encodes into; one that grew
// beyond maxScratch is dropped rather than kept.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

const maxScratch = 16 << 10

// MarshalParams returns the JSON encoding of a request's params, as
// AppendParams writes it, in a slice of its own size (one allocation).
func MarshalParams(params mcp.Params) (json.RawMessage, error) {
	p := scratch.Get().(*[]byte)
	b, err := AppendParams((*p)[:0], params)
	var out json.RawMessage
	if err == nil {
		out = bytes.Clone(b)
	}
	if cap(b) <= maxScratch {
		*p = b
		scratch.Put(p)
	}
	return out, err
}

// AppendParams appends the JSON encoding of a request's params, exactly
// as encoding/json (HTML not escaped) writes it, as go-sdk's jsonrpc2 sends
// it: tools/call params and the four list params are written field by
// field (their _meta and arguments by AppendJSON), anything else, or one
// of them with a field this does not write (a tools/call's
// inputResponses), by encoding/json.
func AppendParams(dst []byte, params mcp.Params) ([]byte, error) {
	if !sdkLayoutKnown {
		return appendStd(dst, params)
	}
	switch p := params.(type) {
	case *mcp.CallToolParams:
		if p == nil || len(p.InputResponses) > 0 {
			break
		}
		dst = append(dst, '{')
		var err error
		if dst, err = appendMetaMember(dst, p.Meta); err != nil {
			return dst, err
		}
		dst = append(dst, `"name":`...)
		dst = appendString(dst, p.Name)
		if p.Arguments != nil {
			dst = append(dst, `,"arguments":`...)
			if dst, err = appendValue(dst, p.Arguments, 1, false); err != nil {
				return dst, err
			}
		}
		dst = appendOptString(dst, `,"requestState":`, p.RequestState)
		return append(dst, '}'), nil
	case *mcp.ListToolsParams:
		if p != nil {
			return appendListParams(dst, p.Meta, p.Cursor)
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			return appendListParams(dst, p.Meta, p.Cursor)
		}
	case *mcp.ListResourcesParams:
		if p != nil {
			return appendListParams(dst, p.Meta, p.Cursor)
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			return appendListParams(dst, p.Meta, p.Cursor)
		}
	}
	return appendStd(dst, params)
}

// appendListParams writes the params of a list request.
func appendListParams(dst []byte, meta mcp.Meta, cursor string) ([]byte, error) {
	dst = append(dst, '{')
	var err error
	if dst, err = appendMetaMember(dst, meta); err != nil {
		return dst, err
	}
	if cursor != "" {
		dst = append(dst, `"cursor":`...)
		dst = appendString(dst, cursor)
	} else if len(meta) > 0 {
		dst = dst[:len(dst)-1] // the comma after _meta
	}
	return append(dst, '}'), nil
}

// appendMetaMember writes `"_meta":{...},` unless meta is empty
// (omitempty).
func appendMetaMember(dst []byte, meta mcp.Meta) ([]byte, error) {
	if len(meta) == 0 {
		return dst, nil
	}
	dst = append(dst, `"_meta":`...)
	dst, err := appendMap(dst, meta, 1, false)
	return append(dst, ','), err
}
