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
// result must be valid JSON, as DecodeShared returned it: the texts are
// not validated again (FuzzSplitText feeds it only valid JSON).
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
			var err error
			text, err = s.textString()
			sawText = true
			return err
		}
		return errRefused // annotations, _meta, ...: go-sdk's job
	})
	if err == nil && !(sawType && sawText) {
		err = errRefused
	}
	return text, err
}

// textString decodes the JSON string at s.pos (a quote) into a string of
// its exact decoded length, and moves s.pos past it. The string must be
// valid JSON already (SplitText's input is as DecodeShared validated it):
// only its end is looked for, with bytes.IndexByte, where a scan that
// validates would look at every byte. A \u escape or invalid UTF-8 is
// refused: go-sdk's job, as decoders may differ there.
func (s *scanner) textString() (string, error) {
	d := s.data
	start := s.pos + 1
	end := start
	for { // the first quote after an even run of backslashes
		k := bytes.IndexByte(d[end:], '"')
		if k < 0 {
			return "", errMalformed
		}
		end += k
		b := end
		for b > start && d[b-1] == '\\' {
			b--
		}
		if (end-b)%2 == 0 {
			break
		}
		end++
	}
	in := d[start:end]
	s.pos = end + 1
	if !utf8.Valid(in) {
		return "", errRefused // go-sdk replaces invalid bytes: its job
	}
	escapes := bytes.Count(in, []byte(`\`))
	if escapes == 0 {
		return string(in), nil
	}
	// Each escape shortens the text by one, and an escaped backslash is
	// the one pair of backslashes a valid string holds: out is sized for
	// none, and sized again, exactly, at the first one (as rare in text
	// as it is costly to count).
	out := new(strings.Builder)
	out.Grow(len(in) - escapes)
	exact := false
	for {
		i := bytes.IndexByte(in, '\\')
		if i < 0 {
			out.Write(in)
			return out.String(), nil
		}
		if i+1 >= len(in) {
			return "", errMalformed
		}
		out.Write(in[:i])
		var c byte
		switch e := in[i+1]; e {
		case '\\':
			if !exact {
				exact = true
				rest := in[i:]
				again := new(strings.Builder)
				again.Grow(out.Len() + len(rest) - bytes.Count(rest, []byte(`\`)) + bytes.Count(rest, []byte(`\\`)))
				again.WriteString(out.String())
				out = again
			}
			c = e
		case '"', '/':
			c = e
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
		case 'u':
			return "", errRefused
		default:
			return "", errMalformed
		}
		out.WriteByte(c)
		in = in[i+2:]
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
