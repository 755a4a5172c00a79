package ready

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/store"
)

// TestReason: the server's own state comes first, then the replica's
// gate, then the store, whose error is never shown.
func TestReason(t *testing.T) {
	secret := errors.New("dial tcp db.internal:5432: password authentication failed")
	for _, tt := range []struct {
		name  string
		state string
		gate  error
		store error
		want  string
	}{
		{"ready", "", nil, nil, ""},
		{"draining", "draining", errors.New("not trusted"), secret, "draining"},
		{"gate", "", errors.New("not trusted"), secret, "not trusted"},
		{"store", "", nil, secret, "database unavailable"},
		{"writes refused", "", nil, store.ErrWritesRefused, "the store refuses writes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := New(func() string { return tt.state }, func() error { return tt.gate }, func(context.Context) error { return tt.store })
			if got := c.Reason(context.Background()); got != tt.want {
				t.Errorf("Reason = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOr: an internal error is 503 unavailable with Retry-After while
// the server is not ready; other errors, and any error while it is, pass.
func TestOr(t *testing.T) {
	internal := &api.APIError{Status: http.StatusInternalServerError, Code: api.CodeInternal}
	notFound := &api.APIError{Status: http.StatusNotFound, Code: api.CodeNotFound}
	down := New(func() string { return "" }, nil, func(context.Context) error { return errors.New("down") })
	if e := down.Or(context.Background(), internal); e.Status != http.StatusServiceUnavailable || e.Code != api.CodeUnavailable || e.RetryAfter != 2 {
		t.Errorf("internal while not ready: %+v", e)
	}
	if e := down.Or(context.Background(), notFound); e != notFound {
		t.Errorf("not found while not ready: %+v", e)
	}
	up := New(func() string { return "" }, nil, func(context.Context) error { return nil })
	if e := up.Or(context.Background(), internal); e != internal {
		t.Errorf("internal while ready: %+v", e)
	}
}

// TestServe: /healthz is 200 while the process runs, /readyz 503 with
// the reason while not ready; other paths are not the probes'.
func TestServe(t *testing.T) {
	c := New(func() string { return "shutting down" }, nil, func(context.Context) error { return nil })
	for _, tt := range []struct {
		path   string
		served bool
		status int
		want   string
	}{
		{"/healthz", true, http.StatusOK, "ok"},
		{"/readyz", true, http.StatusServiceUnavailable, "unavailable"},
		{"/agents", false, 0, ""},
	} {
		rec := httptest.NewRecorder()
		if served := c.Serve(rec, httptest.NewRequest(http.MethodGet, tt.path, nil)); served != tt.served {
			t.Fatalf("%s served %v", tt.path, served)
		}
		if !tt.served {
			continue
		}
		var body map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != tt.status || body["status"] != tt.want {
			t.Errorf("%s: %d %s", tt.path, rec.Code, rec.Body)
		}
		if tt.path == "/readyz" && (body["reason"] != "shutting down" || rec.Header().Get("Retry-After") != "2") {
			t.Errorf("/readyz: %s, Retry-After %q", rec.Body, rec.Header().Get("Retry-After"))
		}
	}
}
