package agent

import (
	"regexp"
	"strings"
	"testing"
)

// The examples of the reference's normalizeServerId, every one.
func TestNormalizeServerID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"my-supplied-id", "my-supplied-id"},
		{"GitHub", "github"},
		{"GitHub MCP!", "github-mcp"},
		{"foo/bar.baz", "foo-bar-baz"},
		{"a   b", "a-b"},
		{"a@@@b", "a-b"},
		{"foo---bar", "foo-bar"},
		{"foo - - bar", "foo-bar"},
		{"---github---", "github"},
		{"__slack__", "slack"},
		{"-_foo_-", "foo"},
		{"42-things", "id-42-things"},
		{"123", "id-123"},
		{"9", "id-9"},
		{"_underscore_first", "underscore_first"},
		{"_9lives", "id-9lives"},
		{"-leading-hyphen", "leading-hyphen"},
		{"", "id"},
		{"!!!", "id"},
		{"   ", "id"},
		{"-_-", "id"},
		{"日本", "id"},
		{"ID-", "id"},
		{"Ünïcödé", "n-c-d"},
		{"café mcp", "caf-mcp"},
		{"slack_v2", "slack_v2"},
		{"Slack_V2", "slack_v2"},
		{"a--b__c", "a-b__c"},
		{"tool/name:v2", "tool-name-v2"},
		{strings.Repeat("a", 114), strings.Repeat("a", 64)},
		{strings.Repeat("a", 63) + "-tail", strings.Repeat("a", 63)},
		{strings.Repeat("1", 70), "id-" + strings.Repeat("1", 61)},
		{"foo__bar", "foo__bar"},
	}
	valid := regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)
	for _, tt := range tests {
		got := NormalizeServerID(tt.in)
		if got != tt.want {
			t.Errorf("NormalizeServerID(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !valid.MatchString(got) {
			t.Errorf("NormalizeServerID(%q) = %q does not match %s", tt.in, got, valid)
		}
		if again := NormalizeServerID(got); again != got {
			t.Errorf("not idempotent: %q -> %q -> %q", tt.in, got, again)
		}
	}
}

func FuzzNormalizeServerID(f *testing.F) {
	for _, s := range []string{"", "GitHub MCP!", "42", "_9lives", strings.Repeat("x-", 50)} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)
	f.Fuzz(func(t *testing.T, s string) {
		id := NormalizeServerID(s)
		if !valid.MatchString(id) {
			t.Fatalf("NormalizeServerID(%q) = %q is invalid", s, id)
		}
		if NormalizeServerID(id) != id {
			t.Fatalf("not idempotent on %q", s)
		}
	})
}

// URL equivalences of the reference (section 4.2).
func TestNormalizeURL(t *testing.T) {
	same := [][2]string{
		{"HTTPS://MCP.EXAMPLE.COM/path", "https://mcp.example.com/path"},
		{"https://h:443/mcp", "https://h/mcp"},
		{"http://h:80/x", "http://h/x"},
		{"https://MCP.Example.com", "https://mcp.example.com/"},
		{"https://h/a/../mcp", "https://h/mcp"},
		{"https://h\\mcp", "https://h/mcp"},
		{"  https://h/mcp\t", "https://h/mcp"},
		{"https://bücher.example/mcp", "https://xn--bcher-kva.example/mcp"},
		{"http://0x7f.1/mcp", "http://127.0.0.1/mcp"},
		{"http://2130706433/mcp", "http://127.0.0.1/mcp"},
		{"http://[::FFFF:127.0.0.1]/", "http://[::ffff:7f00:1]/"},
	}
	for _, p := range same {
		a, err1 := NormalizeURL(p[0])
		b, err2 := NormalizeURL(p[1])
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("%q and %q: %q (%v), %q (%v); want equal", p[0], p[1], a, err1, b, err2)
		}
	}
	different := [][2]string{
		{"https://h/MCP", "https://h/mcp"},
		{"https://h/mcp", "https://h/mcp/"},
		{"https://h/%7E", "https://h/~"},
		{"https://example.com./mcp", "https://example.com/mcp"},
		{"https://h/mcp?a=1&b=2", "https://h/mcp?b=2&a=1"},
	}
	for _, p := range different {
		a, _ := NormalizeURL(p[0])
		b, _ := NormalizeURL(p[1])
		if a == b {
			t.Errorf("%q and %q both normalise to %q; want different", p[0], p[1], a)
		}
	}
	if _, err := NormalizeURL("not a url"); err == nil {
		t.Errorf("garbage normalised")
	}
}

func TestKebab(t *testing.T) {
	for in, want := range map[string]string{
		"TestOAuthAgent": "test-o-auth-agent",
		"MyAgent":        "my-agent",
		"ChatAgent":      "chat-agent",
		"MCP":            "mcp",
		"MY_AGENT":       "my-agent",
		"my_agent":       "my-agent",
		"agent":          "agent",
	} {
		if got := kebab(in); got != want {
			t.Errorf("kebab(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewServerID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newServerID()
		if !regexp.MustCompile(`^[a-z][a-z0-9]{7}$`).MatchString(id) || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		if NormalizeServerID(id) != id {
			t.Fatalf("generated id %q is not in normal form (%q)", id, NormalizeServerID(id))
		}
		seen[id] = true
	}
}
