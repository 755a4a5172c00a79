package resource

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestVerify: a token signed by the issuer's key, for the audience, with
// the scopes, in its validity is accepted; each check refuses its own
// fault with ErrInvalidToken and a reason; the audience's own error is
// returned as is, after the signature is checked.
func TestVerify(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	var hs *httptest.Server
	hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{
				"issuer": hs.URL, "jwks_uri": hs.URL + "/jwks",
				"authorization_endpoint": hs.URL + "/authorize", "token_endpoint": hs.URL + "/token",
				"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			})
		case "/jwks":
			json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
				"kty": "RSA", "kid": "k1", "use": "sig", "n": enc(key.N.Bytes()), "e": enc(big.NewInt(int64(key.E)).Bytes()),
			}}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer hs.Close()
	now := time.Unix(1_800_000_000, 0)
	sign := func(kid string, claims map[string]any) string {
		h, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": kid, "typ": "at+jwt"})
		c, _ := json.Marshal(claims)
		msg := enc(h) + "." + enc(c)
		sum := sha256.Sum256([]byte(msg))
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return msg + "." + enc(sig)
	}
	good := func() map[string]any {
		return map[string]any{"iss": hs.URL, "aud": "https://mcp.example/mcp", "exp": now.Add(time.Minute).Unix(), "scope": "mcp other", "sub": "ada"}
	}
	with := func(k string, v any) map[string]any {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	v := New(&Options{Issuer: hs.URL, Scopes: []string{"mcp"}, HTTPClient: hs.Client(), Now: func() time.Time { return now }})
	audience := func() (string, error) { return "https://mcp.example/mcp", nil }
	for _, tt := range []struct {
		name, tok, reason string
	}{
		{"valid", sign("k1", good()), ""},
		{"audience in a list", sign("k1", with("aud", []string{"x", "https://mcp.example/mcp"})), ""},
		{"not a JWT", "abc", "not a JWT"},
		{"unknown key", sign("k2", good()), "unknown signing key"},
		{"tampered", sign("k1", good())[:20] + "x" + sign("k1", good())[21:], ""},
		{"another issuer", sign("k1", with("iss", "https://other.example")), "issued by another authorization server"},
		{"another audience", sign("k1", with("aud", "https://other.example/mcp")), "another audience"},
		{"no expiry", sign("k1", with("exp", nil)), "no expiry"},
		{"expired", sign("k1", with("exp", now.Add(-time.Minute).Unix())), "expired"},
		{"not valid yet", sign("k1", with("nbf", now.Add(time.Minute).Unix())), "not valid yet"},
		{"scope missing", sign("k1", with("scope", "other")), `scope "mcp" is missing`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Verify(t.Context(), tt.tok, audience)
			switch {
			case tt.name == "valid" || tt.name == "audience in a list":
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case !errors.Is(err, ErrInvalidToken):
				t.Fatalf("err %v, want ErrInvalidToken", err)
			case !strings.Contains(err.Error(), tt.reason):
				t.Fatalf("err %v, want %q", err, tt.reason)
			}
		})
	}
	errHost := errors.New("host not served")
	if err := v.Verify(t.Context(), sign("k1", good()), func() (string, error) { return "", errHost }); err != errHost {
		t.Errorf("audience's error: %v", err)
	}
	if got := Subject(sign("k1", good())); got != "sub:ada" {
		t.Errorf("Subject: %q", got)
	}
	if got := Subject(sign("k1", with("sub", nil))); !strings.HasPrefix(got, "token:") {
		t.Errorf("Subject without sub or client: %q", got)
	}
}
