package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The canonical form of a JSON value, as pins keep it: what decoding it
// with encoding/json (numbers as json.Number) into an any and encoding
// that again yields: objects' members sorted by key (the last of
// duplicate keys kept), no insignificant whitespace, strings escaped as
// encoding/json escapes them, numbers as written. canonical writes it in
// one pass over the bytes, without building the maps (fingerprinting a
// tool is on the path of a woken agent's first tool list).

// maxCanonicalDepth is encoding/json's nesting limit: a deeper value is
// an error there, and so here.
const maxCanonicalDepth = 10000

var errCanonicalSyntax = errors.New("invalid JSON")

// canonical is one canonicalisation: the input and its read position.
type canonical struct {
	data []byte
	i    int
	// tmp holds an object's members while they are sorted.
	tmp []byte
}

// appendCanonical appends the canonical form of the JSON value data to
// dst; keep, when not nil, selects the members of a top-level object.
func appendCanonical(dst, data []byte, keep func(key string) bool) ([]byte, error) {
	c := &canonical{data: data}
	out, err := c.value(dst, 0, keep)
	if err != nil {
		return nil, err
	}
	if c.ws(); c.i != len(c.data) {
		return nil, fmt.Errorf("%w: data after the value", errCanonicalSyntax)
	}
	return out, nil
}

func (c *canonical) ws() {
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *canonical) value(dst []byte, depth int, keep func(string) bool) ([]byte, error) {
	c.ws()
	if c.i >= len(c.data) {
		return nil, fmt.Errorf("%w: unexpected end", errCanonicalSyntax)
	}
	switch b := c.data[c.i]; {
	case b == '{':
		if depth >= maxCanonicalDepth {
			return nil, fmt.Errorf("%w: nested too deeply", errCanonicalSyntax)
		}
		return c.object(dst, depth+1, keep)
	case b == '[':
		if depth >= maxCanonicalDepth {
			return nil, fmt.Errorf("%w: nested too deeply", errCanonicalSyntax)
		}
		return c.array(dst, depth+1)
	case b == '"':
		out, _, err := c.str(dst)
		return out, err
	case b == '-' || ('0' <= b && b <= '9'):
		return c.number(dst)
	case b == 't':
		return c.literal(dst, "true")
	case b == 'f':
		return c.literal(dst, "false")
	case b == 'n':
		return c.literal(dst, "null")
	}
	return nil, fmt.Errorf("%w: unexpected %q", errCanonicalSyntax, c.data[c.i])
}

func (c *canonical) literal(dst []byte, lit string) ([]byte, error) {
	if !strings.HasPrefix(string(c.data[c.i:]), lit) {
		return nil, fmt.Errorf("%w: bad literal", errCanonicalSyntax)
	}
	c.i += len(lit)
	return append(dst, lit...), nil
}

// number copies a number as written (json.Number keeps it so), once its
// syntax is checked.
func (c *canonical) number(dst []byte) ([]byte, error) {
	start := c.i
	d := c.data
	if c.i < len(d) && d[c.i] == '-' {
		c.i++
	}
	digits := func() int {
		n := 0
		for c.i < len(d) && '0' <= d[c.i] && d[c.i] <= '9' {
			c.i++
			n++
		}
		return n
	}
	switch {
	case c.i < len(d) && d[c.i] == '0':
		c.i++
	case digits() == 0:
		return nil, fmt.Errorf("%w: bad number", errCanonicalSyntax)
	}
	if c.i < len(d) && d[c.i] == '.' {
		c.i++
		if digits() == 0 {
			return nil, fmt.Errorf("%w: bad number", errCanonicalSyntax)
		}
	}
	if c.i < len(d) && (d[c.i] == 'e' || d[c.i] == 'E') {
		c.i++
		if c.i < len(d) && (d[c.i] == '+' || d[c.i] == '-') {
			c.i++
		}
		if digits() == 0 {
			return nil, fmt.Errorf("%w: bad number", errCanonicalSyntax)
		}
	}
	return append(dst, d[start:c.i]...), nil
}

// str appends the canonical form of the string at c.i, and returns its
// text. A string that encoding/json would write as it is written (no
// escape, nothing it escapes) is copied; any other is decoded and
// encoded again by encoding/json.
func (c *canonical) str(dst []byte) ([]byte, string, error) {
	d := c.data
	start := c.i
	c.i++ // the opening quote
	plain := true
	for {
		if c.i >= len(d) {
			return nil, "", fmt.Errorf("%w: unterminated string", errCanonicalSyntax)
		}
		b := d[c.i]
		switch {
		case b == '"':
			c.i++
			raw := d[start:c.i]
			if plain {
				return append(dst, raw...), string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, "", err
			}
			enc, err := json.Marshal(s)
			if err != nil {
				return nil, "", err
			}
			return append(dst, enc...), s, nil
		case b == '\\':
			plain = false
			c.i += 2 // the escaped byte is never the closing quote
		case b < 0x20:
			return nil, "", fmt.Errorf("%w: control character in a string", errCanonicalSyntax)
		case b == '<' || b == '>' || b == '&':
			plain = false // encoding/json escapes them
			c.i++
		case b < utf8.RuneSelf:
			c.i++
		default:
			r, size := utf8.DecodeRune(d[c.i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				plain = false // replaced, or escaped, by encoding/json
			}
			c.i += size
		}
	}
}

func (c *canonical) array(dst []byte, depth int) ([]byte, error) {
	c.i++ // [
	dst = append(dst, '[')
	c.ws()
	if c.i < len(c.data) && c.data[c.i] == ']' {
		c.i++
		return append(dst, ']'), nil
	}
	for {
		var err error
		if dst, err = c.value(dst, depth, nil); err != nil {
			return nil, err
		}
		c.ws()
		if c.i >= len(c.data) {
			return nil, fmt.Errorf("%w: unterminated array", errCanonicalSyntax)
		}
		switch c.data[c.i] {
		case ',':
			c.i++
			dst = append(dst, ',')
		case ']':
			c.i++
			return append(dst, ']'), nil
		default:
			return nil, fmt.Errorf("%w: unexpected %q in an array", errCanonicalSyntax, c.data[c.i])
		}
	}
}

// member is an object's member as written to dst: its key's text, and
// where "key":value lies.
type member struct {
	key        string
	start, end int
}

// object writes each member ("key":value, canonical) after dst, then
// moves them into key order.
func (c *canonical) object(dst []byte, depth int, keep func(string) bool) ([]byte, error) {
	c.i++ // {
	base := len(dst)
	var members []member
	c.ws()
	if c.i < len(c.data) && c.data[c.i] == '}' {
		c.i++
		return append(dst, '{', '}'), nil
	}
	for {
		c.ws()
		if c.i >= len(c.data) || c.data[c.i] != '"' {
			return nil, fmt.Errorf("%w: object key expected", errCanonicalSyntax)
		}
		start := len(dst)
		var (
			key string
			err error
		)
		if dst, key, err = c.str(dst); err != nil {
			return nil, err
		}
		c.ws()
		if c.i >= len(c.data) || c.data[c.i] != ':' {
			return nil, fmt.Errorf("%w: colon expected", errCanonicalSyntax)
		}
		c.i++
		dst = append(dst, ':')
		if dst, err = c.value(dst, depth, nil); err != nil {
			return nil, err
		}
		if keep == nil || keep(key) {
			members = append(members, member{key: key, start: start, end: len(dst)})
		} else {
			dst = dst[:start]
		}
		c.ws()
		if c.i >= len(c.data) {
			return nil, fmt.Errorf("%w: unterminated object", errCanonicalSyntax)
		}
		if c.data[c.i] == '}' {
			c.i++
			break
		}
		if c.data[c.i] != ',' {
			return nil, fmt.Errorf("%w: unexpected %q in an object", errCanonicalSyntax, c.data[c.i])
		}
		c.i++
	}
	// Sort by key, the last of equal keys first, and keep the first of
	// each key: encoding/json decodes duplicates into one map entry, the
	// last one's value.
	for j := range members {
		members[j].start -= base
		members[j].end -= base
	}
	slices.SortStableFunc(members, func(x, y member) int {
		if n := strings.Compare(x.key, y.key); n != 0 {
			return n
		}
		return y.start - x.start
	})
	c.tmp = append(c.tmp[:0], dst[base:]...)
	tmp := c.tmp
	dst = append(dst[:base], '{')
	for j, m := range members {
		if j > 0 && members[j-1].key == m.key {
			continue
		}
		if len(dst) > base+1 {
			dst = append(dst, ',')
		}
		dst = append(dst, tmp[m.start:m.end]...)
	}
	return append(dst, '}'), nil
}
