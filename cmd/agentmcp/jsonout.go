package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// writeJSON prints v as indented JSON for a terminal: <, > and & as they
// are, and the characters that would change how the terminal shows the
// rest of the text escaped (\u202e): the bidirectional controls (U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the C1 controls
// (U+0080–U+009F). encoding/json already escapes the C0 controls, U+2028
// and U+2029. The output is the same JSON value.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(terminalSafe(buf.Bytes()))
	return err
}

// terminalSafe rewrites the strings of the JSON document b: it undoes the
// \u003c, \u003e and \u0026 escapes that SetEscapeHTML(false) leaves in
// place when they come from a json.Marshaler or json.RawMessage (the MCP
// SDK's content types), and escapes what unsafeRune reports. b must be
// valid JSON, as an Encoder writes it.
func terminalSafe(b []byte) []byte {
	out := make([]byte, 0, len(b))
	in := false // inside a string
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case !in:
			in = c == '"'
			out = append(out, c)
			i++
		case c == '"':
			in = false
			out = append(out, c)
			i++
		case c == '\\':
			n := 2
			if i+1 < len(b) && b[i+1] == 'u' {
				n = 6
			}
			n = min(n, len(b)-i)
			if n == 6 {
				if r, ok := htmlEscape(b[i+2 : i+6]); ok {
					out = append(out, r)
					i += n
					continue
				}
			}
			out = append(out, b[i:i+n]...)
			i += n
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if unsafeRune(r) {
				out = fmt.Appendf(out, `\u%04x`, r)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// htmlEscape returns the character of the \u escape with these four hex
// digits if it is one of those HTML escaping produces.
func htmlEscape(hex []byte) (byte, bool) {
	switch string(bytes.ToLower(hex)) {
	case "003c":
		return '<', true
	case "003e":
		return '>', true
	case "0026":
		return '&', true
	}
	return 0, false
}

// unsafeRune reports whether r would change how a terminal shows the text
// after it: a C1 control or a bidirectional control (the characters
// oneLine drops from text output).
func unsafeRune(r rune) bool {
	return r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r)
}
