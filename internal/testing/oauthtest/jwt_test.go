package oauthtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestJWTAccessTokens: with Options.JWT, access tokens are JWTs whose kid
// is the key published at jwks_uri (named in the metadata), with the
// RFC 9068 claims, and still known to Lookup.
func TestJWTAccessTokens(t *testing.T) {
	for _, alg := range []string{"ES256", "RS256"} {
		t.Run(alg, func(t *testing.T) {
			as := NewServer(t, &Options{JWT: alg, Scopes: []string{"mcp"}})
			c := as.AddClient(Client{ID: "c1"})
			tok := as.IssueTokens(c.ID, "https://rs.example/mcp", "mcp")
			parts := strings.Split(tok.AccessToken, ".")
			if len(parts) != 3 {
				t.Fatalf("access token %q is not a compact JWS", tok.AccessToken)
			}
			var header, claims map[string]any
			for i, v := range []*map[string]any{&header, &claims} {
				b, err := base64.RawURLEncoding.DecodeString(parts[i])
				if err != nil || json.Unmarshal(b, v) != nil {
					t.Fatalf("part %d of the token: %v", i, err)
				}
			}
			if header["alg"] != alg || header["typ"] != "at+jwt" || claims["aud"] != "https://rs.example/mcp" || claims["iss"] != as.Issuer() ||
				claims["scope"] != "mcp" || claims["client_id"] != "c1" {
				t.Errorf("header %v, claims %v", header, claims)
			}
			if _, ok := as.Lookup(tok.AccessToken); !ok {
				t.Error("Lookup does not know the JWT")
			}
			var meta struct {
				JWKSURI string `json:"jwks_uri"`
			}
			getJSON(t, as.MetadataURL(), &meta)
			if meta.JWKSURI != as.JWKSURI() || meta.JWKSURI == "" {
				t.Fatalf("metadata jwks_uri %q, want %q", meta.JWKSURI, as.JWKSURI())
			}
			var jwks struct{ Keys []map[string]any }
			getJSON(t, meta.JWKSURI, &jwks)
			if len(jwks.Keys) != 1 || jwks.Keys[0]["kid"] != header["kid"] || jwks.Keys[0]["alg"] != alg {
				t.Errorf("jwks %v, want the token's key %v", jwks.Keys, header["kid"])
			}
		})
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
