package aitools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// decodeJSON decodes data as json.Unmarshal into an any does (objects as
// map[string]any, the last of duplicate keys kept; arrays as []any;
// numbers as float64; the same errors, as far as whether there is one),
// in one pass over the bytes: schemas stored as JSON (a woken agent's
// catalogs) are decoded for every tool on the first AITools.
func decodeJSON(data []byte) (any, error) {
	d := &jsonDecoder{data: data}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.ws(); d.i != len(d.data) {
		return nil, fmt.Errorf("%w: data after the value", errJSONSyntax)
	}
	return v, nil
}

var errJSONSyntax = errors.New("invalid JSON")

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

type jsonDecoder struct {
	data []byte
	i    int
}

func (d *jsonDecoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (any, error) {
	d.ws()
	if d.i >= len(d.data) {
		return nil, fmt.Errorf("%w: unexpected end", errJSONSyntax)
	}
	switch b := d.data[d.i]; {
	case b == '{':
		if depth >= maxJSONDepth {
			return nil, fmt.Errorf("%w: nested too deeply", errJSONSyntax)
		}
		return d.object(depth + 1)
	case b == '[':
		if depth >= maxJSONDepth {
			return nil, fmt.Errorf("%w: nested too deeply", errJSONSyntax)
		}
		return d.array(depth + 1)
	case b == '"':
		return d.str()
	case b == '-' || ('0' <= b && b <= '9'):
		return d.number()
	case b == 't':
		return true, d.literal("true")
	case b == 'f':
		return false, d.literal("false")
	case b == 'n':
		return nil, d.literal("null")
	}
	return nil, fmt.Errorf("%w: unexpected %q", errJSONSyntax, d.data[d.i])
}

func (d *jsonDecoder) literal(lit string) error {
	if len(d.data)-d.i < len(lit) || string(d.data[d.i:d.i+len(lit)]) != lit {
		return fmt.Errorf("%w: bad literal", errJSONSyntax)
	}
	d.i += len(lit)
	return nil
}

func (d *jsonDecoder) number() (any, error) {
	start := d.i
	data := d.data
	digits := func() int {
		n := 0
		for d.i < len(data) && '0' <= data[d.i] && data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if data[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(data) && data[d.i] == '0':
		d.i++
	case digits() == 0:
		return nil, fmt.Errorf("%w: bad number", errJSONSyntax)
	}
	if d.i < len(data) && data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, fmt.Errorf("%w: bad number", errJSONSyntax)
		}
	}
	if d.i < len(data) && (data[d.i] == 'e' || data[d.i] == 'E') {
		d.i++
		if d.i < len(data) && (data[d.i] == '+' || data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, fmt.Errorf("%w: bad number", errJSONSyntax)
		}
	}
	f, err := strconv.ParseFloat(string(data[start:d.i]), 64)
	if err != nil {
		return nil, fmt.Errorf("number %s: %w", data[start:d.i], err) // out of float64's range, as encoding/json says
	}
	return f, nil
}

// str decodes the string at d.i: its bytes as they are when it has no
// escape and is valid UTF-8, else as encoding/json decodes it.
func (d *jsonDecoder) str() (string, error) {
	data := d.data
	start := d.i
	d.i++
	plain := true
	for {
		if d.i >= len(data) {
			return "", fmt.Errorf("%w: unterminated string", errJSONSyntax)
		}
		b := data[d.i]
		switch {
		case b == '"':
			d.i++
			raw := data[start:d.i]
			if plain {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", err
			}
			return s, nil
		case b == '\\':
			plain = false
			d.i += 2
		case b < 0x20:
			return "", fmt.Errorf("%w: control character in a string", errJSONSyntax)
		case b < utf8.RuneSelf:
			d.i++
		default:
			r, size := utf8.DecodeRune(data[d.i:])
			if r == utf8.RuneError && size == 1 {
				plain = false // replaced by encoding/json
			}
			d.i += size
		}
	}
}

func (d *jsonDecoder) array(depth int) (any, error) {
	d.i++
	out := []any{}
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return out, nil
	}
	for {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		d.ws()
		if d.i >= len(d.data) {
			return nil, fmt.Errorf("%w: unterminated array", errJSONSyntax)
		}
		switch d.data[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return out, nil
		default:
			return nil, fmt.Errorf("%w: unexpected %q in an array", errJSONSyntax, d.data[d.i])
		}
	}
}

func (d *jsonDecoder) object(depth int) (any, error) {
	d.i++
	out := map[string]any{}
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return out, nil
	}
	for {
		d.ws()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, fmt.Errorf("%w: object key expected", errJSONSyntax)
		}
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		d.ws()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, fmt.Errorf("%w: colon expected", errJSONSyntax)
		}
		d.i++
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		out[key] = v
		d.ws()
		if d.i >= len(d.data) {
			return nil, fmt.Errorf("%w: unterminated object", errJSONSyntax)
		}
		switch d.data[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return out, nil
		default:
			return nil, fmt.Errorf("%w: unexpected %q in an object", errJSONSyntax, d.data[d.i])
		}
	}
}
