package jsonrpcwire

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errRefused stops a scan that found something SplitText leaves to go-sdk.
var errRefused = errors.New("left to go-sdk")

// SplitText returns the items of a tools/call result's "content" when they
// are all plain text items ({"type":"text","text":...}, in either order,
// and nothing else) holding at least minText bytes of text, with result
// minus them ("content": []). It reports false for anything else: a
// result with any other kind of item, any other field in an item, a key
// given twice, an escaped key, a \u escape or invalid UTF-8 in a text, is
// left to go-sdk whole, since decoders may differ there. What it decodes,
// it decodes exactly as go-sdk does (TestSplitText and FuzzSplitText
// compare the two); go-sdk's decoding of rest, with content put back, is
// go-sdk's decoding of result.
//
// content and rest share no memory with result.
func SplitText(result []byte, minText int) (content []mcp.Content, rest []byte, ok bool) {
	s := scanner{data: result}
	start, end := -1, -1
	s.space()
	err := s.members(func(key []byte) error {
		if s.keyEscaped {
			return errRefused
		}
		if string(key) != "content" {
			return s.value()
		}
		if start >= 0 {
			return errRefused // twice
		}
		start = s.pos
		var err error
		content, err = s.textItems()
		end = s.pos
		return err
	})
	if err == nil {
		err = s.end()
	}
	if err != nil || start < 0 {
		return nil, nil, false
	}
	total := 0
	for _, c := range content {
		total += len(c.(*mcp.TextContent).Text)
	}
	if total < minText {
		return nil, nil, false
	}
	rest = make([]byte, 0, len(result)-(end-start)+2)
	rest = append(rest, result[:start]...)
	rest = append(rest, "[]"...)
	rest = append(rest, result[end:]...)
	return content, rest, true
}

// textItems scans an array of one or more text items and decodes them.
func (s *scanner) textItems() ([]mcp.Content, error) {
	var content []mcp.Content
	err := s.elements(func() error {
		text, err := s.textItem()
		if err != nil {
			return err
		}
		content = append(content, &mcp.TextContent{Text: text})
		return nil
	})
	if err == nil && len(content) == 0 {
		err = errRefused
	}
	return content, err
}

// textItem scans one {"type":"text","text":"..."} object and decodes its
// text.
func (s *scanner) textItem() (string, error) {
	var text string
	var sawType, sawText bool
	err := s.members(func(key []byte) error {
		if s.keyEscaped {
			return errRefused
		}
		start := s.pos
		switch string(key) {
		case "type":
			if err := s.value(); err != nil {
				return err
			}
			if sawType || string(s.data[start:s.pos]) != `"text"` {
				return errRefused
			}
			sawType = true
			return nil
		case "text":
			if sawText || s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return errRefused
			}
			if _, err := s.str(); err != nil {
				return err
			}
			var ok bool
			if text, ok = unquoteSimple(s.data[start:s.pos]); !ok {
				return errRefused
			}
			sawText = true
			return nil
		}
		return errRefused // annotations, _meta, ...: go-sdk's job
	})
	if err == nil && !(sawType && sawText) {
		err = errRefused
	}
	return text, err
}

// unquoteSimple decodes a JSON string (valid, with its quotes) that has no
// \u escape and is valid UTF-8; it reports false for any other value.
func unquoteSimple(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	in := v[1 : len(v)-1]
	if !utf8.Valid(in) {
		return "", false // go-sdk replaces invalid bytes: its job
	}
	i := bytes.IndexByte(in, '\\')
	if i < 0 {
		return string(in), true
	}
	var out strings.Builder
	out.Grow(len(in))
	for {
		out.Write(in[:i])
		if i+1 >= len(in) {
			return "", false
		}
		var c byte
		switch in[i+1] {
		case '"', '\\', '/':
			c = in[i+1]
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default:
			return "", false // \u: go-sdk's job
		}
		out.WriteByte(c)
		in = in[i+2:]
		if i = bytes.IndexByte(in, '\\'); i < 0 {
			out.Write(in)
			return out.String(), true
		}
	}
}

// Members scans data as one JSON object (with nothing but white space
// after it), calling fn with each member's key and its raw value, both
// slices of data. A key that holds an escape is refused (an error), as
// decoders may differ there. The first error of fn ends the scan.
func Members(data []byte, fn func(key, value []byte) error) error {
	s := scanner{data: data}
	s.space()
	err := s.members(func(key []byte) error {
		if s.keyEscaped {
			return errRefused
		}
		start := s.pos
		if err := s.value(); err != nil {
			return err
		}
		return fn(key, data[start:s.pos])
	})
	if err != nil {
		return err
	}
	return s.end()
}
