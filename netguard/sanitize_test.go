package netguard

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "invalid_grant: code expired", "invalid_grant: code expired"},
		{"tab, LF and CR kept", "a\tb\nc\r\nd", "a\tb\nc\r\nd"},
		{"C0 removed", "a\x00b\x07c\x1b[31md", "abc[31md"},
		{"DEL removed", "a\x7fb", "ab"},
		{"C1 removed", "a\u0080b\u009bc\u009fd", "abcd"},
		{"bidi controls removed", "a\u202eb\u2066c\u2069d\u200fe\u061cf", "abcdef"},
		{"above C1 kept", "a\u00a0b é ☕", "a\u00a0b é ☕"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"empty", "", ""},
		{"exactly 500", strings.Repeat("x", 500), strings.Repeat("x", 500)},
		{"501", strings.Repeat("x", 501), strings.Repeat("x", 500) + "..."},
		{"500 runes of 3 bytes", strings.Repeat("☕", 500), strings.Repeat("☕", 500)},
		{"runes, not bytes", strings.Repeat("☕", 600), strings.Repeat("☕", 500) + "..."},
		{"controls do not count", strings.Repeat("x\x01", 500), strings.Repeat("x", 500)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("a\x00b\u0085c")
	f.Add(strings.Repeat("é", 501))
	f.Fuzz(func(t *testing.T, s string) {
		got := Sanitize(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Sanitize(%q) = %q, invalid UTF-8", s, got)
		}
		body := strings.TrimSuffix(got, "...")
		if n := utf8.RuneCountInString(body); n > maxTextRunes {
			t.Fatalf("Sanitize(%q) keeps %d runes", s, n)
		}
		for _, r := range body {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || 0x7f <= r && r <= 0x9f {
				t.Fatalf("Sanitize(%q) = %q keeps control %U", s, got, r)
			}
		}
	})
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"https://alice:hunter2@mcp.example.com/mcp?token=s3cret#frag", "https://mcp.example.com/mcp"},
		{"HTTPS://MCP.EXAMPLE.COM:443/a/../mcp?", "https://mcp.example.com/mcp"},
		{"http://0x0a000001/", "http://10.0.0.1/"},
		{"https://h/path@with-at", "https://h/path@with-at"},
		// Unparseable input is redacted lexically.
		{"not a url", "not a url"},
		{"http://user:pw@exa mple.com/x?token=s3cret", "http://exa mple.com/x"},
		{"//user:pw@h x/y?z#f", "//h x/y"},
		// A scheme without "//" has an opaque path and no userinfo.
		{"user:pw@h", "user:pw@h"},
		{"bad\x00url?q", "badurl"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
