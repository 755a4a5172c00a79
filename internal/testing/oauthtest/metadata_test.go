package oauthtest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// getJSON GETs url and decodes a JSON object, returning the status.
func getJSON(t testing.TB, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return resp.StatusCode, body
}

func TestMetadata(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{
		Scopes:                  []string{"mcp:read"},
		OfflineAccess:           true,
		Iss:                     oauthtest.IssOn,
		ClientMetadataDocuments: true,
		AuthMethods:             []string{"none", "client_secret_post"},
	})
	if as.MetadataURL() != as.URL+"/.well-known/oauth-authorization-server" || as.Issuer() != as.URL {
		t.Errorf("MetadataURL %s, Issuer %s", as.MetadataURL(), as.Issuer())
	}
	status, m := getJSON(t, as.MetadataURL())
	if status != http.StatusOK {
		t.Fatalf("metadata: %d", status)
	}
	want := map[string]any{
		"issuer":                                         as.URL,
		"authorization_endpoint":                         as.URL + "/authorize",
		"token_endpoint":                                 as.URL + "/token",
		"registration_endpoint":                          as.URL + "/register",
		"scopes_supported":                               []any{"mcp:read", "offline_access"},
		"response_types_supported":                       []any{"code"},
		"response_modes_supported":                       []any{"query"},
		"grant_types_supported":                          []any{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []any{"none", "client_secret_post"},
		"code_challenge_methods_supported":               []any{"S256"},
		"authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported":          true,
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if as.Counts.Metadata.Load() != 1 {
		t.Errorf("Counts.Metadata = %d", as.Counts.Metadata.Load())
	}
}

// TestDiscoveryPaths checks where metadata is, and is not, for each
// discovery mode, with and without an issuer path.
func TestDiscoveryPaths(t *testing.T) {
	t.Parallel()
	all := []string{
		"/.well-known/oauth-authorization-server",
		"/.well-known/oauth-authorization-server/tenant1",
		"/.well-known/openid-configuration",
		"/.well-known/openid-configuration/tenant1",
		"/tenant1/.well-known/openid-configuration",
		"/tenant1/.well-known/oauth-authorization-server",
	}
	tests := []struct {
		name      string
		opts      oauthtest.Options
		found     []string
		endpoints string // path prefix of the endpoints
	}{
		{"oauth", oauthtest.Options{}, []string{"/.well-known/oauth-authorization-server"}, ""},
		{"oauth with path", oauthtest.Options{IssuerPath: "/tenant1"}, []string{"/.well-known/oauth-authorization-server/tenant1"}, "/tenant1"},
		{"oidc", oauthtest.Options{Discovery: oauthtest.DiscoveryOIDC}, []string{"/.well-known/openid-configuration"}, ""},
		{"oidc with path", oauthtest.Options{Discovery: oauthtest.DiscoveryOIDC, IssuerPath: "/tenant1"},
			[]string{"/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration"}, "/tenant1"},
		{"none", oauthtest.Options{Discovery: oauthtest.DiscoveryNone, IssuerPath: "/tenant1"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			as := oauthtest.NewServer(t, &tt.opts)
			var found []string
			for _, p := range all {
				status, m := getJSON(t, as.URL+p)
				if status == http.StatusOK {
					found = append(found, p)
					if m["issuer"] != as.Issuer() || m["token_endpoint"] != as.URL+tt.endpoints+"/token" {
						t.Errorf("%s: issuer %v, token endpoint %v", p, m["issuer"], m["token_endpoint"])
					}
					if tt.opts.Discovery == oauthtest.DiscoveryOIDC && m["jwks_uri"] == nil {
						t.Errorf("%s: OpenID metadata without jwks_uri", p)
					}
				} else if status != http.StatusNotFound {
					t.Errorf("%s: status %d", p, status)
				}
			}
			if diff := cmp.Diff(tt.found, found); diff != "" {
				t.Errorf("metadata found at (-want +got):\n%s", diff)
			}
			if got := as.TokenEndpoint(); got != as.URL+tt.endpoints+"/token" {
				t.Errorf("TokenEndpoint = %s", got)
			}
			// The endpoints answer where the metadata says.
			if status, body := postToken(t, as, nil, "", ""); status != http.StatusUnauthorized || body["error"] != "invalid_client" {
				t.Errorf("token endpoint: %d %v", status, body)
			}
		})
	}
}

func TestMetadataQuirks(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{
		MetadataIssuer:      "https://evil.example.com",
		OmitPKCEMethods:     true,
		DisableRegistration: true,
	})
	_, m := getJSON(t, as.MetadataURL())
	if m["issuer"] != "https://evil.example.com" || m["code_challenge_methods_supported"] != nil || m["registration_endpoint"] != nil {
		t.Errorf("metadata = %v", m)
	}
	if as.RegistrationEndpoint() != "" {
		t.Errorf("RegistrationEndpoint = %q with registration disabled", as.RegistrationEndpoint())
	}
	resp, err := http.Post(as.URL+"/register", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /register with registration disabled: %d", resp.StatusCode)
	}
	var paths []string
	for _, r := range as.Requests() {
		paths = append(paths, r.Method+" "+r.Path)
	}
	if diff := cmp.Diff([]string{"GET /.well-known/oauth-authorization-server", "POST /register"}, paths); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
}
