package whatwg

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expected serialisations below come from the algorithms of the WHATWG
// URL Standard (living standard as of July 2026) and from the examples of
// the reference behaviour (section 4.2 of the cloudflare-agents notes).
func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		// Reference section 4.2.
		{"scheme and host lower-cased", "HTTPS://MCP.EXAMPLE.COM/path", "https://mcp.example.com/path"},
		{"path case kept", "https://h/MCP", "https://h/MCP"},
		{"https default port", "https://h:443/mcp", "https://h/mcp"},
		{"http default port", "http://h:80/x", "http://h/x"},
		{"empty path", "https://MCP.Example.com", "https://mcp.example.com/"},
		{"trailing slash kept", "https://h/mcp/", "https://h/mcp/"},
		{"dot segments", "https://h/a/../mcp", "https://h/mcp"},
		{"backslashes", `https:\\h\a\b`, "https://h/a/b"},
		{"outer whitespace and C0", "\x00 \t https://h/x \n\x1f", "https://h/x"},
		{"inner tab and newline", "ht\ttps://h/\nx\r", "https://h/x"},
		{"space in path", "https://h/m cp", "https://h/m%20cp"},
		{"escape kept verbatim", "https://h/%7E~%7e", "https://h/%7E~%7e"},
		{"IDN", "https://bücher.example/", "https://xn--bcher-kva.example/"},
		{"IDN upper case", "https://BÜCHER.example/", "https://xn--bcher-kva.example/"},
		{"IPv4 hex and shorthand", "http://0x7f.1/", "http://127.0.0.1/"},
		{"IPv4 decimal", "http://2130706433/", "http://127.0.0.1/"},
		{"IPv4 octal", "http://0177.0.0.1/", "http://127.0.0.1/"},
		{"IPv4 two parts", "http://10.1/", "http://10.0.0.1/"},
		{"IPv6 compressed and lower-cased", "http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/"},
		{"IPv4-mapped in hex", "http://[::ffff:10.0.0.1]/", "http://[::ffff:a00:1]/"},
		{"trailing dot kept", "https://example.com./", "https://example.com./"},
		{"userinfo query fragment kept", "https://u:p@h/p?b=2&a=1#f", "https://u:p@h/p?b=2&a=1#f"},

		// Schemes and authorities.
		{"ws default port", "ws://h:80/", "ws://h/"},
		{"wss default port", "WSS://h:443", "wss://h/"},
		{"ftp default port", "ftp://h:21/", "ftp://h/"},
		{"other scheme's default port kept", "http://h:443/", "http://h:443/"},
		{"port leading zeros", "http://h:00080/", "http://h/"},
		{"empty port", "http://h:/", "http://h/"},
		{"largest port", "http://h:65535/", "http://h:65535/"},
		{"missing slashes", "http:example.com", "http://example.com/"},
		{"one slash", "http:/example.com/", "http://example.com/"},
		{"extra slashes", "https:////h//x", "https://h//x"},
		{"empty credentials dropped", "https://:@h/", "https://h/"},
		{"empty username dropped", "https://@h/", "https://h/"},
		{"password only", "https://:pw@h/", "https://:pw@h/"},
		{"userinfo encoded", "https://us er:p@ss@h/", "https://us%20er:p%40ss@h/"},
		{"userinfo colon in password", "http://a:b:c@h/", "http://a:b%3Ac@h/"},

		// Paths.
		{"encoded dot segments", "https://h/a/%2e%2E/b/%2e/mcp", "https://h/b/mcp"},
		{"mixed dot segments", "https://h/a/.%2e/b/%2e./c", "https://h/c"},
		{"dot-dot above root", "https://h/../../x", "https://h/x"},
		{"trailing dot-dot", "https://h/a/b/..", "https://h/a/"},
		{"trailing dot", "https://h/a/.", "https://h/a/"},
		{"triple dot is a name", "https://h/.../x", "https://h/.../x"},
		{"non-ASCII path", "https://h/ü", "https://h/%C3%BC"},
		{"path encode set", "https://h/\"<>`{}^", "https://h/%22%3C%3E%60%7B%7D%5E"},
		{"stray percent kept", "https://h/%zz%", "https://h/%zz%"},
		{"C0 control in path", "https://h/a\x01b", "https://h/a%01b"},
		{"invalid UTF-8", "https://h/\xff", "https://h/%EF%BF%BD"},

		// Query and fragment.
		{"space in query", "https://h/?a b", "https://h/?a%20b"},
		{"apostrophe in special query", "https://h/?'", "https://h/?%27"},
		{"apostrophe in other query", "foo://h/?'", "foo://h/?'"},
		{"empty query kept", "https://h/?", "https://h/?"},
		{"empty fragment kept", "https://h/#", "https://h/#"},
		{"fragment encode set", "https://h/#a b\"<>`", "https://h/#a%20b%22%3C%3E%60"},
		{"question mark in fragment", "https://h/#?x", "https://h/#?x"},

		// Hosts.
		{"percent-encoded host", "http://exa%2Emple/", "http://exa.mple/"},
		{"emoji IDN", "https://☕.example/", "https://xn--53h.example/"},
		{"fullwidth host", "https://ｅｘａｍｐｌｅ.com/", "https://example.com/"},
		{"ASCII punycode only lower-cased", "https://XN--BCHER-KVA.example/", "https://xn--bcher-kva.example/"},
		{"underscore allowed", "https://a_b.example/", "https://a_b.example/"},
		{"zero", "http://0/", "http://0.0.0.0/"},
		{"bare 0x", "http://0x/", "http://0.0.0.0/"},
		{"IPv4 trailing dot", "http://1.2.3.4./", "http://1.2.3.4/"},
		{"IPv4 max", "http://4294967295/", "http://255.255.255.255/"},
		{"IPv4 three parts", "http://1.2.65535/", "http://1.2.255.255/"},
		{"IPv4 hex parts", "http://0xA.0X0.0x00.0x1/", "http://10.0.0.1/"},
		{"IPv4 percent-encoded", "http://%30x7f.1/", "http://127.0.0.1/"},
		{"IPv4 fullwidth digits", "http://１２７.０.０.１/", "http://127.0.0.1/"},
		{"number not last is a name", "http://1.foo/", "http://1.foo/"},
		{"IPv6 unspecified", "http://[0::0]/", "http://[::]/"},
		{"IPv6 upper case", "http://[FE80::1]/", "http://[fe80::1]/"},
		{"IPv6 longest zero run", "http://[1:0:0:2:0:0:0:3]/", "http://[1:0:0:2::3]/"},
		{"IPv6 first of equal runs", "http://[1:0:0:2:0:0:3:4]/", "http://[1::2:0:0:3:4]/"},
		{"IPv6 single zero not compressed", "http://[1:2:3:4:5:6:0:8]/", "http://[1:2:3:4:5:6:0:8]/"},
		{"IPv6 trailing compression", "http://[1:0::]/", "http://[1::]/"},
		{"IPv6 with IPv4 tail", "http://[::127.0.0.1]/", "http://[::7f00:1]/"},

		// Non-special schemes.
		{"opaque path", "mailto:User@Example.COM", "mailto:User@Example.COM"},
		{"opaque path space before query", "foo:a ?q", "foo:a%20?q"},
		{"opaque path inner space", "foo:a b", "foo:a b"},
		{"opaque host case kept", "foo://H%41/", "foo://H%41/"},
		{"opaque host non-ASCII", "foo://ü/", "foo://%C3%BC/"},
		{"empty host", "foo://", "foo://"},
		{"no host, slash path", "foo:/x", "foo:/x"},
		{"path that looks like a host", "foo:/.//x", "foo:/.//x"},
		{"dot-dot exposing double slash", "foo:/a/..//x", "foo:/.//x"},
		{"non-special dot segments", "foo://h/a/../b", "foo://h/b"},
		{"non-special backslash is data", `foo://h/a\b`, `foo://h/a\b`},
		{"scheme characters", "A+b-C.d:x", "a+b-c.d:x"},

		// file.
		{"file drive letter", "file:///C|/x", "file:///C:/x"},
		{"file drive letter as host", "file://c:/x", "file:///c:/x"},
		{"file keeps drive letter", "file:///C:/..", "file:///C:/"},
		{"file localhost", "file://localhost/x", "file:///x"},
		{"file host", "FILE://HOST/x", "file://host/x"},
		{"file no slashes", "file:x", "file:///x"},
		{"file backslashes", `file:\\h\x`, "file://h/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Normalize(tt.in)
			if err != nil {
				t.Fatalf("Normalize(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// Canonical forms are fixed points.
			again, err := Normalize(got)
			if err != nil || again != got {
				t.Errorf("Normalize(%q) = %q, %v; want it unchanged", got, again, err)
			}
		})
	}
}

func TestParseFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"blank", " \t\n"},
		{"not a URL", "not a url"},
		{"relative path", "/mcp"},
		{"scheme-relative", "//h/mcp"},
		{"no scheme", "example.com/mcp"},
		{"leading digit", "1http://h/"},
		{"missing host", "http:///"},
		{"special without authority", "http:"},
		{"credentials without host", "https://user@/"},
		{"empty host before port", "http://:80/"},
		{"non-special empty host before port", "foo://:80/"},
		{"port out of range", "http://h:65536/"},
		{"huge port", "http://h:99999999999999999999/"},
		{"port not a number", "http://h:8a/"},
		{"port with space", "http://h: 80/"},
		{"space in host", "http://a b/"},
		{"forbidden host code point", "http://a<b/"},
		{"caret in host", "http://a^b/"},
		{"pipe in host", "http://a|b/"},
		{"encoded space in host", "http://a%20b/"},
		{"encoded percent in host", "http://a%25b/"},
		{"encoded slash in host", "http://a%2Fb/"},
		{"control in host", "http://a%01b/"},
		{"DEL in host", "http://a\x7fb/"},
		{"invalid UTF-8 in host", "http://a%FFb/"},
		{"invalid IDN", "http://a\u0300b.\u0645x/"}, // mixes Bidi directions
		{"disallowed code point", "http://a\uFFFDb/"},
		{"IPv4 too large", "http://4294967296/"},
		{"IPv4 part too large", "http://256.0.0.1/"},
		{"IPv4 last part too large", "http://1.2.3.256/"},
		{"IPv4 three parts too large", "http://1.2.65536/"},
		{"IPv4 five parts", "http://1.2.3.4.5/"},
		{"IPv4 bad octal", "http://09/"},
		{"IPv4 empty part", "http://1..2/"},
		{"IPv4 hex overflow", "http://0x100000000/"},
		{"IPv4 huge", "http://999999999999999999999999999999/"},
		{"name ending in 0x", "http://foo.0x/"},
		{"name ending in number", "http://foo.1/"},
		{"name ending in hex", "http://foo.0x1f./"},
		{"IPv6 unclosed", "http://[::1/"},
		{"IPv6 zone", "http://[fe80::1%25eth0]/"},
		{"IPv6 raw zone", "http://[fe80::1%eth0]/"},
		{"IPv6 too many pieces", "http://[1:2:3:4:5:6:7:8:9]/"},
		{"IPv6 two compressions", "http://[1::2::3]/"},
		{"IPv6 single leading colon", "http://[:1]/"},
		{"IPv6 trailing colon", "http://[1:2:3:4:5:6:7:]/"},
		{"IPv6 too few pieces", "http://[1:2:3]/"},
		{"IPv6 bad IPv4 tail", "http://[::1.2.3]/"},
		{"IPv6 IPv4 leading zero", "http://[::1.2.3.04]/"},
		{"IPv6 IPv4 tail too late", "http://[1:2:3:4:5:6:7:1.2.3.4]/"},
		{"IPv6 non-hex", "http://[::g]/"},
		{"IPv6 empty", "http://[]/"},
		{"text after IPv6", "http://[::1]x/"},
		{"file host with port", "file://h:80/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want an error", tt.in, u.Href())
			}
			if !errors.Is(err, ErrInvalidURL) {
				t.Errorf("Parse(%q) error %v does not wrap ErrInvalidURL", tt.in, err)
			}
		})
	}
}

// TestParseErrorHidesInput checks that error messages do not repeat the
// input, which may hold secrets.
func TestParseErrorHidesInput(t *testing.T) {
	t.Parallel()
	_, err := Parse("https://user:hunter2@exa mple.com/?token=s3cret")
	if err == nil {
		t.Fatal("Parse succeeded, want an error")
	}
	for _, secret := range []string{"hunter2", "s3cret", "user"} {
		if msg := err.Error(); contains(msg, secret) {
			t.Errorf("error %q contains %q", msg, secret)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestParseFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want URL
	}{
		{"HTTPS://User:P%40ss@MCP.Example.COM:8443/a/../b?q=1#frag", URL{
			Scheme: "https", Username: "User", Password: "P%40ss", Host: "mcp.example.com",
			Port: "8443", Path: "/b", Query: "q=1", Fragment: "frag",
		}},
		{"http://[::1]/?#", URL{
			Scheme: "http", Host: "[::1]", Path: "/", ForceQuery: true, ForceFragment: true,
		}},
		{"mailto:x@y", URL{Scheme: "mailto", Path: "x@y", OmitHost: true}},
		{"foo:///x", URL{Scheme: "foo", Path: "/x"}},
		{"file:///tmp", URL{Scheme: "file", Path: "/tmp"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestHostnameAndIP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		hostname string
		ip       string // "" means no IP
	}{
		{"http://example.com/", "example.com", ""},
		{"http://0x0a000001/", "10.0.0.1", "10.0.0.1"},
		{"http://167772161/", "10.0.0.1", "10.0.0.1"},
		{"https://[::ffff:10.0.0.1]:8443/", "::ffff:a00:1", "::ffff:10.0.0.1"},
		{"ws://[fe80::1]/", "fe80::1", "fe80::1"},
		{"foo://1.2.3.4/", "1.2.3.4", ""}, // opaque host
		{"foo://[::1]/", "::1", "::1"},
		{"mailto:a@b", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := u.Hostname(); got != tt.hostname {
				t.Errorf("Hostname() = %q, want %q", got, tt.hostname)
			}
			ip, ok := u.IP()
			switch {
			case tt.ip == "" && ok:
				t.Errorf("IP() = %v, true; want none", ip)
			case tt.ip != "" && (!ok || ip != netip.MustParseAddr(tt.ip)):
				t.Errorf("IP() = %v, %v; want %s", ip, ok, tt.ip)
			}
		})
	}
}

func TestParseHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Example.COM", "example.com", true},
		{"0x7f.1", "127.0.0.1", true},
		{"bücher.example", "xn--bcher-kva.example", true},
		{"[::FFFF:10.0.0.1]", "[::ffff:a00:1]", true},
		{"metadata.google.internal.", "metadata.google.internal.", true},
		{"", "", false},
		{"::1", "", false}, // IPv6 needs brackets
		{"a b", "", false},
		{"h:80", "", false},
	}
	for _, tt := range tests {
		got, err := ParseHost(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseHost(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
