package whatwg

import (
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that parsing never panics and that serialisation is
// idempotent: the Href of a parsed URL parses back to the same Href and the
// same fields. Run it with
//
//	go test ./internal/whatwg -run '^$' -fuzz FuzzParse
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"HTTPS://MCP.EXAMPLE.COM/path",
		"https://h:443/a/../mcp?q#f",
		"http://0x7f.1/m cp",
		"http://[::ffff:10.0.0.1]:8080/",
		"https://bücher.example./",
		`https:\\h\a\%2e%2e\b`,
		"https://u:p@h/?a b#c d",
		"foo:/.//x",
		"foo://h/a/..//x",
		"foo:a ?b",
		"web+demo:/path/..//not-a-host/",
		"file:///C|/x/..",
		"file://localhost/x",
		"mailto:x@y",
		"http://1.2.3.4.5/",
		"http://%30x7f.1/",
		"http://xn--53h.example/",
		"ws://[fe80::1%25eth0]/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		u, err := Parse(in)
		if err != nil {
			return
		}
		href := u.Href()
		if !utf8.ValidString(href) {
			t.Fatalf("Href of %q is not valid UTF-8: %q", in, href)
		}
		for i := 0; i < len(href); i++ {
			// Opaque paths may keep spaces; everything else is encoded.
			if c := href[i]; c < 0x20 || c >= 0x7f {
				t.Fatalf("Href of %q has byte %#x outside printable ASCII: %q", in, c, href)
			}
		}
		v, err := Parse(href)
		if err != nil {
			t.Fatalf("Parse(%q) succeeded, but its Href %q fails: %v", in, href, err)
		}
		if again := v.Href(); again != href {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, href, again)
		}
		if *v != *u {
			t.Fatalf("fields of %q differ after a round trip:\n%+v\n%+v", in, *u, *v)
		}
	})
}
