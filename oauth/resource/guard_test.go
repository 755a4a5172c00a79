package resource

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/netguard"
)

// TestJWKSGuarded: the default client that reads the
// authorization server's keys passes the SSRF guard: the issuer's own host
// is reached, but a jwks_uri its metadata points at a cloud metadata
// endpoint, a private address or a blocked name is refused before any
// connection.
func TestJWKSGuarded(t *testing.T) {
	for _, jwks := range []string{
		"http://169.254.169.254/latest/meta-data/jwks",
		"http://10.1.2.3/jwks",
		"http://metadata.google.internal/jwks",
		"http://[fd00::1]/jwks",
	} {
		t.Run(jwks, func(t *testing.T) {
			var issuer string
			var metaRequests atomic.Int32
			as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/.well-known/oauth-authorization-server" {
					http.NotFound(w, r)
					return
				}
				metaRequests.Add(1)
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{
					"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
					"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
					"jwks_uri": jwks,
				})
			}))
			defer as.Close()
			issuer = as.URL
			_, err := New(&Options{Issuer: issuer}).fetchKeys(t.Context())
			var blocked *netguard.BlockedError
			if !errors.As(err, &blocked) {
				t.Fatalf("fetchKeys with jwks_uri %s: %v, want the guard's refusal", jwks, err)
			}
			if metaRequests.Load() == 0 {
				t.Fatal("the issuer's metadata was never read: the guard refused the issuer itself")
			}
		})
	}
}
