package jsonrpcwire

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxAnyDepth is encoding/json's nesting limit.
const maxAnyDepth = 10000

// DecodeAny is json.Unmarshal of data into an any: the same
// map[string]any, []any, float64, string, bool and nil values (invalid
// UTF-8 and lone surrogates replaced by U+FFFD, the last of duplicate keys
// kept, numbers beyond float64 an error, nesting limited to 10000), and an
// error where it fails (not with its texts). FuzzDecodeAny and
// TestDecodeAny compare the two. Nothing decoded shares data's memory.
func DecodeAny(data []byte) (any, error) {
	d := anyDecoder{scanner{data: data, maxDepth: maxAnyDepth}}
	d.space()
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return v, nil
}

// anyDecoder decodes values on the scanner's grammar.
type anyDecoder struct{ scanner }

func (d *anyDecoder) value() (any, error) {
	if d.pos >= len(d.data) {
		return nil, errMalformed
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		return d.string()
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.float()
	}
	return nil, errMalformed
}

func (d *anyDecoder) object() (any, error) {
	m := map[string]any{}
	err := d.members(func(key []byte) error {
		var k string
		switch {
		case d.keyEscaped: // unescaped by encoding/json
			k = string(key)
		case utf8.Valid(key):
			k = string(key)
		default:
			k = unquote(key)
		}
		v, err := d.value()
		m[k] = v
		return err
	})
	return m, err
}

func (d *anyDecoder) array() (any, error) {
	a := make([]any, 0)
	err := d.elements(func() error {
		v, err := d.value()
		a = append(a, v)
		return err
	})
	return a, err
}

// float decodes a number as strconv.ParseFloat does; one beyond float64's
// range is an error, as in encoding/json.
func (d *anyDecoder) float() (any, error) {
	start := d.pos
	if err := d.number(); err != nil {
		return nil, err
	}
	num := d.data[start:d.pos]
	// Integers of up to 15 digits are exact in a float64: no parse needed.
	if len(num) <= 15 {
		neg := num[0] == '-'
		digits := num
		if neg {
			digits = num[1:]
		}
		var n int64
		plain := true
		for _, c := range digits {
			if c < '0' || c > '9' {
				plain = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if plain {
			if neg {
				return -float64(n), nil
			}
			return float64(n), nil
		}
	}
	return strconv.ParseFloat(string(num), 64)
}

// string decodes the string at d.pos as encoding/json unquotes it.
func (d *anyDecoder) string() (string, error) {
	start := d.pos
	escaped, err := d.str()
	if err != nil {
		return "", err
	}
	inner := d.data[start+1 : d.pos-1]
	if !escaped && utf8.Valid(inner) {
		return string(inner), nil
	}
	return unquote(inner), nil
}

// unquote decodes the inside of a valid JSON string: escapes, each byte of
// invalid UTF-8 as U+FFFD, a \u surrogate that is not the first of a valid
// pair as U+FFFD (the escape after it decoded on its own).
func unquote(s []byte) string {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch e := s[r+1]; e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							r += 6
							continue
						}
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, e)
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b)
}

// hex4 decodes four hexadecimal digits (the scanner checked them).
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
