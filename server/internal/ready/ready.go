// Package ready says whether the HTTP server can serve agents now, and
// why not: it answers the probes (/healthz while the process runs,
// /readyz when it can serve), and turns a request's internal error into
// 503 unavailable, which a client retries, while the server is not ready.
//
// The server is not ready while it shuts down or drains (the server's
// own state), while its replica does not trust its leases (in a cluster:
// cluster.Replica.Gate), and while the store does not answer (asked at
// most once a second: store.Probe). What a probe or a 503 says of the
// store is "database unavailable" or "the store refuses writes", to
// anyone: the store's error, which may name the database, stays in the
// log.
//
// A Checker is safe for concurrent use.
package ready

import (
	"context"
	"errors"
	"net/http"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/server/internal/reply"
	"github.com/agentmcp/agentmcp/store"
)

// Checker answers whether the server is ready.
type Checker struct {
	state func() string               // why the server itself is not ready, or ""
	gate  func() error                // the replica's gate; nil outside a cluster
	store func(context.Context) error // store.Probe.Check
}

// New returns a Checker: state says why the server is not ready of
// itself ("shutting down", "draining") or "", gate (nil outside a
// cluster) whether its replica may serve, and check whether the store
// answers (store.Probe.Check).
func New(state func() string, gate func() error, check func(context.Context) error) *Checker {
	return &Checker{state: state, gate: gate, store: check}
}

// unavailableReason is what /readyz and the API's 503 say when the store
// does not answer, to anyone: the store's error stays in the log.
const unavailableReason = "database unavailable"

// Reason says why the server is not ready, or "".
func (c *Checker) Reason(ctx context.Context) string {
	if reason := c.state(); reason != "" {
		return reason
	}
	if c.gate != nil {
		if err := c.gate(); err != nil {
			return err.Error()
		}
	}
	if err := c.store(ctx); err != nil {
		if errors.Is(err, store.ErrWritesRefused) {
			return "the store refuses writes" // the error is in the log (store.Probe)
		}
		return unavailableReason // the error is in the log (store.Probe)
	}
	return ""
}

// Or is aerr, unless aerr is an internal error and the server is not
// ready (Reason): then 503 unavailable, which a client retries.
func (c *Checker) Or(ctx context.Context, aerr *api.APIError) *api.APIError {
	if aerr.Status != http.StatusInternalServerError {
		return aerr
	}
	if reason := c.Reason(ctx); reason != "" {
		u := reply.Errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the server cannot serve agents now (%s); retry", reason)
		u.RetryAfter = 2
		return u
	}
	return aerr
}

// Serve answers /healthz and /readyz, and reports whether r was one of
// them: /healthz 200 while the process runs; /readyz 200 when the server
// is ready, else 503 with the reason (Reason) and Retry-After.
func (c *Checker) Serve(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/healthz":
		reply.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return true
	case "/readyz":
	default:
		return false
	}
	if reason := c.Reason(r.Context()); reason != "" {
		w.Header().Set("Retry-After", "2")
		reply.JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": reason})
		return true
	}
	reply.JSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return true
}
