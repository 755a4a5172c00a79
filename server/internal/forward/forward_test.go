package forward

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/cluster"
)

// TestRepeatable: what may be sent again when its outcome is unknown:
// reads, removals and the API's idempotent actions, never a tool call.
func TestRepeatable(t *testing.T) {
	for _, tt := range []struct {
		method, path string
		want         bool
	}{
		{http.MethodGet, "/agents/c/n/servers", true},
		{http.MethodHead, "/agents/c/n", true},
		{http.MethodDelete, "/agents/c/n/servers/one", true},
		{http.MethodPost, "/agents/c/n/servers", true},
		{http.MethodPost, "/agents/c/n/servers/one/reconnect", true},
		{http.MethodPost, "/agents/c/n/servers/one/resources/read", true},
		{http.MethodPost, "/agents/c/n/servers/one/prompts/get", true},
		{http.MethodPost, "/agents/c/n/hibernate", true},
		{http.MethodPost, "/agents/c/n/servers/one/tools/call", false},
		{http.MethodPost, "/agents/c/n/elicitations/e1", false},
		{http.MethodPut, "/agents/c/n/exposure", false},
	} {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		if got := repeatable(r); got != tt.want {
			t.Errorf("repeatable(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

// TestReceive: the cluster listener takes a request signed with the key
// once, marked as forwarded with the client's scheme and without its
// signature; an unsigned one, one signed with another key, and the same
// one again are refused 401.
func TestReceive(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	f := New(&Options{Key: key})
	signed := func(k string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/agents/c/n/servers", strings.NewReader(`{"url":"x"}`))
		r.Host = "owner"
		r.Header.Set("X-Forwarded-Proto", "https")
		if err := cluster.SignRequest(r, k, "replica-a", []byte(`{"url":"x"}`)); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := signed(key)
	replay := r.Clone(r.Context())
	replay.Body = io.NopCloser(strings.NewReader(`{"url":"x"}`))
	got, aerr := f.Receive(httptest.NewRecorder(), r, 1<<20, 0)
	if aerr != nil {
		t.Fatalf("a signed request: %v", aerr)
	}
	if !Forwarded(got) || scheme(got) != "https" || got.Header.Get(cluster.SignatureHeader) != "" {
		t.Errorf("received: forwarded %v, scheme %q, signature %q", Forwarded(got), scheme(got), got.Header.Get(cluster.SignatureHeader))
	}
	for name, r := range map[string]*http.Request{
		"unsigned":    httptest.NewRequest(http.MethodGet, "/agents/c/n", nil),
		"another key": signed("fedcba9876543210fedcba9876543210"),
		"replayed":    replay,
	} {
		if _, aerr := f.Receive(httptest.NewRecorder(), r, 1<<20, 0); aerr == nil || aerr.Code != api.CodeUnauthorized {
			t.Errorf("%s: %v, want %s", name, aerr, api.CodeUnauthorized)
		}
	}
}
