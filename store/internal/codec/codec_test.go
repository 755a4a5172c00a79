package codec

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/agentmcp/agentmcp/store"
)

func TestPublicURL(t *testing.T) {
	for _, tt := range []struct {
		in, public string
		secret     bool
	}{
		{"https://x.example/mcp", "https://x.example/mcp", false},
		{"https://x.example/@user/mcp", "https://x.example/@user/mcp", false},
		{"https://u:p@x.example/mcp", "https://x.example/mcp", true},
		{"https://u@x.example:8443/mcp", "https://x.example:8443/mcp", true},
		{"https://x.example/mcp?key=v", "https://x.example/mcp", true},
		{"https://x.example/mcp?", "https://x.example/mcp", true},
		{"https://x.example/mcp#f", "https://x.example/mcp", true},
		{"https://x.example/mcp#", "https://x.example/mcp", true},
		{"https://x.example/a%20b?k", "https://x.example/a%20b", true},
		{"http://[::1]:80%zz/?k", "", true},
	} {
		public, secret := PublicURL(tt.in)
		if public != tt.public || secret != tt.secret {
			t.Errorf("PublicURL(%q) = %q, %v; want %q, %v", tt.in, public, secret, tt.public, tt.secret)
		}
	}
}

// TestSealServer: the URL's secret parts are sealed with the options, and
// a row of an earlier version (the whole URL in the column) opens the same.
func TestSealServer(t *testing.T) {
	key := make([]byte, store.KeySize)
	rand.Read(key)
	c, err := store.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "a/b"
	full := "https://user:pw-SECRET@x.example/mcp?k=q-SECRET"
	o := store.ServerOptions{SessionID: "s"}
	for _, c := range []*store.Cipher{c, nil} {
		column, sealed, err := SealServer(c, ns, full, o)
		if err != nil {
			t.Fatal(err)
		}
		if column != "https://x.example/mcp" {
			t.Errorf("url column %q", column)
		}
		if c != nil && bytes.Contains(sealed, []byte("SECRET")) {
			t.Errorf("sealed options hold the URL in plaintext")
		}
		u, got, err := OpenServer(c, ns, column, sealed)
		if err != nil || u != full || got.SessionID != "s" {
			t.Errorf("OpenServer = %q, %+v, %v", u, got, err)
		}
		// Earlier versions: options without a URL, the whole URL in the column.
		_, old, _ := SealServer(c, ns, "https://x.example/mcp", o)
		if u, _, err := OpenServer(c, ns, full, old); err != nil || u != full {
			t.Errorf("legacy row: OpenServer = %q, %v", u, err)
		}
	}
}
