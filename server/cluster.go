package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/cluster/lease"
	"github.com/agentmcp/agentmcp/server/internal/guard"
	"github.com/agentmcp/agentmcp/store"
)

// ClusterOptions make a Server one replica of several that share a
// Postgres store (see package cluster): each agent is awake on one
// replica at a time, and any replica answers any request, forwarding it to
// the agent's owner over the owner's cluster listener (ClusterHandler).
type ClusterOptions struct {
	// Replica is this process's membership (cluster.Join). Required. Its
	// Options.OnUntrusted should call Server.Host().Evict.
	Replica *cluster.Replica

	// Key signs the requests replicas forward to each other (each signed
	// for once, within cluster.Skew: cluster.SignRequest): every replica has
	// the same one, at least 16 bytes. Required.
	Key string

	// WaitForOwner bounds how long a request waits for the owner of its
	// agent when the owner cannot be reached (it died, and its lease has
	// not expired yet): then the agent is woken here. Zero means 15
	// seconds.
	WaitForOwner time.Duration
}

// rehomeOnce is one round of cluster.Replica.Rehome: the keep-awake
// agents no replica owns are woken here.
func (s *Server) rehomeOnce(ctx context.Context) {
	s.opts.Cluster.Replica.RehomeOnce(ctx, s.isDraining, s.wake)
}

// wake wakes the agent ns here, and lets it be.
func (s *Server) wake(ctx context.Context, ns string) {
	class, name, _ := strings.Cut(ns, "/")
	if _, release, err := s.Use(ctx, class, name); err == nil {
		release()
	}
}

// forwardedKey marks the context of a request that came through the
// cluster listener: it is served here or refused, never forwarded again.
type forwardedKey struct{}

func forwarded(r *http.Request) bool { return r.Context().Value(forwardedKey{}) != nil }

// ClusterHandler serves the requests other replicas forward to this one:
// the agent routes, for clients the forwarding replica has already
// authenticated, and StatsPath. Each request must be signed with the
// cluster key (cluster.SignRequest: its method, Host, path and query, body,
// time and signer), within cluster.Skew of this replica's clock, and only
// once: a recorded request sent again, or changed, is refused 401. Serve
// it on an address only the replicas reach (the cluster listener). It is
// nil without Options.Cluster.
func (s *Server) ClusterHandler() http.Handler {
	c := s.opts.Cluster
	if c == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.health(w, r) {
			return
		}
		if aerr := s.checkSigned(w, r); aerr != nil {
			guard.Refuse(w, r, aerr)
			return
		}
		r.Header.Del(cluster.SignatureHeader)
		if r.URL.Path == StatsPath {
			s.runtimeStats(w, r)
			return
		}
		if r.Header.Get("X-Forwarded-Proto") == "https" && r.TLS == nil {
			r = r.WithContext(context.WithValue(r.Context(), forwardedKey{}, "https"))
		} else {
			r = r.WithContext(context.WithValue(r.Context(), forwardedKey{}, "http"))
		}
		s.mux.ServeHTTP(w, r)
	})
}

// ClusterHTTPServer returns an http.Server for the cluster listener: it
// serves ClusterHandler with the connection limits of HTTPServer (a
// request's headers within Options.HeaderTimeout, at most 64 KiB of them; a
// keep-alive connection idle for Options.IdleTimeout closed), so that a
// client without the key cannot hold connections open. It registers
// s.CloseStreams to run on Shutdown. It is nil without Options.Cluster.
func (s *Server) ClusterHTTPServer() *http.Server {
	h := s.ClusterHandler()
	if h == nil {
		return nil
	}
	hs := s.HTTPServer()
	hs.Handler = h
	return hs
}

// checkSigned checks the signature of a request to the cluster listener
// (cluster.Signer), reading its body (at most maxMCPBody, within
// Options.BodyTimeout) to check its hash, and gives the body back to r in
// memory.
func (s *Server) checkSigned(w http.ResponseWriter, r *http.Request) *api.APIError {
	sig, err := s.clusterAuth.Parse(r)
	if err == nil {
		if aerr := guard.ReadBody(w, r, maxMCPBody, s.opts.BodyTimeout); aerr != nil {
			return aerr
		}
		var body []byte
		if guard.HasBody(r) {
			body, _ = io.ReadAll(r.Body) // in memory (readBody)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		err = s.clusterAuth.Check(r, sig, body)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cluster.ErrReplayFull):
		aerr := apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "%v", err)
		aerr.RetryAfter = 1
		return aerr
	}
	return apiErrorf(http.StatusUnauthorized, api.CodeUnauthorized, "%v", err)
}

// StatsPath is where the cluster listener (ClusterHandler) reports the
// process's api.RuntimeStats, to a request with the cluster key: for a
// leak check across failovers, say. They are taken right after a garbage
// collection. With ?closeIdle=1, the replica first closes its idle
// connections to the other replicas and its database connections (they
// are opened again when needed), so that they do not count. With
// ?profile=heap, the answer is the heap profile (runtime/pprof, the live
// heap as of that collection) instead, for a leak's source: its detail
// depends on runtime.MemProfileRate (the GODEBUG setting memprofilerate
// sets it for a process).
const StatsPath = "/cluster/stats"

// runtimeStats answers GET StatsPath.
func (s *Server) runtimeStats(w http.ResponseWriter, r *http.Request) {
	if !methodIs(w, r, http.MethodGet) {
		return
	}
	if r.URL.Query().Get("closeIdle") != "" {
		if t, ok := s.clusterTransport.(interface{ CloseIdleConnections() }); ok {
			t.CloseIdleConnections()
		}
		if st, ok := s.st.(interface{ CloseIdle() }); ok {
			st.CloseIdle()
		}
	}
	runtime.GC()
	if r.URL.Query().Get("profile") == "heap" {
		w.Header().Set("Content-Type", "application/octet-stream")
		if err := pprof.Lookup("heap").WriteTo(w, 0); err != nil {
			s.logger.Warn("heap profile", "error", err)
		}
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	hs := s.host.Stats()
	writeJSON(w, http.StatusOK, api.RuntimeStats{Goroutines: runtime.NumGoroutine(), HeapAlloc: ms.HeapAlloc, HeapObjects: ms.HeapObjects,
		Sys: ms.Sys, NumGC: ms.NumGC, AwakeAgents: hs.Awake, Wakes: hs.Wakes, Hibernations: hs.Hibernations})
}

// scheme is the scheme the client used for r: its own, or the one the
// forwarding replica saw.
func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	if p, ok := r.Context().Value(forwardedKey{}).(string); ok {
		return p
	}
	return "http"
}

// forward answers r, whose agent another replica owns, by sending it to
// the owner: one hop, on the owner's cluster listener. An owner that
// cannot be reached is waited for (ClusterOptions.WaitForOwner) until its
// lease expires, and the agent is then woken here (cluster.Replica.Follow
// decides whom to try and how long to wait); a request sent that got
// no answer is retried only when it is safe to repeat (GET, HEAD),
// otherwise it is answered 502 interrupted. It reports whether it answered
// r (false: the agent is free now, and the caller wakes it here).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, owned *agent.OwnedElsewhereError) bool {
	if forwarded(r) {
		w.Header().Set(movedHeader, "1")
		w.Header().Set("Retry-After", "1")
		writeError(w, apiErrorf(http.StatusServiceUnavailable, api.CodeOwnerMoved, "agent %s has moved to another replica; retry", owned.Namespace))
		return true
	}
	body, err := io.ReadAll(r.Body) // read whole already (readBody)
	if err != nil {
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "reading the body: %v", err))
		return true
	}
	// The request may end up served here after all (its owner died).
	r.Body = io.NopCloser(bytes.NewReader(body))
	// A forwarded stream ends with this server's streams (CloseStreams, on
	// drain or shutdown), and when its owner's lease lapses or moves on
	// (cluster.Replica.WatchLease): its client reconnects, and finds the agent's new owner.
	stream := isStream(r.Pattern, r)
	var endStream context.CancelFunc
	if stream {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.ctx, cancel)()
		r, endStream = r.WithContext(ctx), cancel
	}
	c := s.opts.Cluster
	o := lease.Owner{Namespace: owned.Namespace, Replica: owned.Owner, ClusterURL: owned.URL}
	// Unreachable, or no owner named: Follow waits for its lease to lapse
	// (or the agent to move), then the agent is taken here or followed.
	free, err := c.Replica.Follow(r.Context(), owned.Namespace, o, time.Now().Add(c.WaitForOwner), func(o lease.Owner) bool {
		stopWatch := func() {}
		if stream {
			var wctx context.Context
			wctx, stopWatch = context.WithCancel(r.Context())
			go c.Replica.WatchLease(wctx, endStream, o.Namespace, o.Replica)
		}
		sent, err := s.proxy(w, r, o.ClusterURL, body)
		stopWatch()
		if err == nil {
			return true
		}
		if sent && !repeatable(r) {
			s.logger.Warn("forwarded request interrupted: its agent's replica went away", "agent", o.Namespace, "error", err)
			writeError(w, apiErrorf(http.StatusBadGateway, api.CodeInterrupted,
				"the replica that held agent %s went away during the request; whether it took effect is unknown (it was not repeated)", o.Namespace))
			return true
		}
		return false
	})
	switch {
	case errors.Is(err, cluster.ErrOwnerUnavailable):
		w.Header().Set("Retry-After", "2")
		writeError(w, apiErrorf(http.StatusServiceUnavailable, api.CodeOwnerUnavailable, "the replica that holds agent %s does not answer; retry", owned.Namespace))
	case err != nil && err == r.Context().Err():
		// the client left
	case err != nil:
		writeError(w, apiErrorf(http.StatusServiceUnavailable, api.CodeOwnerUnavailable, "finding the replica of agent %s: %v", owned.Namespace, err))
	}
	return !free
}

// repeatable reports whether r may be sent again when its outcome is
// unknown: reads, removals, and the API's idempotent actions (adding a
// server that exists returns it; reconnecting twice reconnects once
// more). A tool call may not: it is answered 502 interrupted instead.
func repeatable(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodDelete:
		return true
	case http.MethodPost:
		for _, suffix := range []string{"/servers", "/reconnect", "/resources/read", "/prompts/get", "/hibernate"} {
			if strings.HasSuffix(r.URL.Path, suffix) {
				return true
			}
		}
	}
	return false
}

// place forwards r, for an agent no replica owns, to the replica that
// should wake it instead of this draining one (cluster.Replica.Elsewhere).
// It reports false when there is none.
func (s *Server) place(w http.ResponseWriter, r *http.Request, ns string) bool {
	rep, ok := s.opts.Cluster.Replica.Elsewhere(r.Context())
	if !ok {
		return false
	}
	return s.forward(w, r, &agent.OwnedElsewhereError{Namespace: ns, Owner: rep.ID, URL: rep.ClusterURL})
}

// useOrForward is Use (create) or useKnown for r's agent, forwarding r
// when another replica owns the agent. It reports handled when r was
// answered (forwarded, or with an error) and there is nothing left to do.
func (s *Server) useOrForward(w http.ResponseWriter, r *http.Request, create, callback bool) (a *agent.Agent, release func(), handled bool) {
	class, name := r.PathValue("class"), r.PathValue("name")
	for range 3 {
		var err error
		if create {
			a, release, err = s.Use(r.Context(), class, name)
		} else {
			a, release, err = s.useKnown(r.Context(), class, name, callback)
		}
		var owned *agent.OwnedElsewhereError
		switch {
		case err == nil:
			return a, release, false
		case !errors.As(err, &owned) || s.opts.Cluster == nil:
			writeError(w, s.unavailableOr(r.Context(), s.openError(err)))
			return nil, nil, true
		case owned.URL == "" && s.isDraining() && !forwarded(r):
			if s.place(w, r, owned.Namespace) {
				return nil, nil, true
			}
		}
		if s.forward(w, r, owned) {
			return nil, nil, true
		}
	}
	writeError(w, apiErrorf(http.StatusServiceUnavailable, api.CodeOwnerUnavailable, "agent %s/%s is moving between replicas; retry", class, name))
	return nil, nil, true
}

func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// proxy sends r to the cluster listener at base and copies the answer to
// w. It reports an error only when nothing was written to w; sent says
// whether r may have reached the owner (it got past connecting).
func (s *Server) proxy(w http.ResponseWriter, r *http.Request, base string, body []byte) (sent bool, err error) {
	target, err := url.Parse(base)
	if err != nil {
		return false, err
	}
	var failure error
	bodySum := sha256.Sum256(body)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host // the client's: callback URLs are built from it
			pr.Out.Header.Set("X-Forwarded-Proto", scheme(pr.In))
			pr.Out.Header.Del("Authorization") // checked here; the owner trusts the signature
			pr.Out.Header.Del("Cookie")
			pr.Out.Body = io.NopCloser(bytes.NewReader(body))
			pr.Out.ContentLength = int64(len(body))
			// Signed last, each attempt anew: good once, for this request.
			s.clusterAuth.Sign(pr.Out, s.opts.Cluster.Replica.ID(), time.Now(), bodySum)
		},
		Transport:     s.clusterTransport,
		FlushInterval: -1, // streams
		ModifyResponse: func(resp *http.Response) error {
			if resp.Header.Get(movedHeader) != "" {
				// The agent moved on while the request was on its way; the
				// owner did not run it: find where it is now.
				resp.Body.Close()
				return errMoved
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			failure = err
		},
	}
	rp.ServeHTTP(w, r)
	if failure == nil {
		return true, nil
	}
	var op *net.OpError
	notRun := errors.Is(failure, errMoved) || (errors.As(failure, &op) && op.Op == "dial")
	return !notRun, failure
}

// movedHeader marks an owner_moved answer, which the forwarding replica
// does not pass on: it follows the agent.
const movedHeader = "Agentmcp-Owner-Moved"

var errMoved = errors.New("the agent moved to another replica")

// unavailableOr is aerr, unless aerr is an internal error and the server is
// not ready (the store does not answer, or the replica does not trust its
// leases): then 503 unavailable, which a client retries.
func (s *Server) unavailableOr(ctx context.Context, aerr *api.APIError) *api.APIError {
	if aerr.Status != http.StatusInternalServerError {
		return aerr
	}
	if reason := s.notReady(ctx); reason != "" {
		u := apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the server cannot serve agents now (%s); retry", reason)
		u.RetryAfter = 2
		return u
	}
	return aerr
}

// notReady says why the server is not ready, or "".
func (s *Server) notReady(ctx context.Context) string {
	s.mu.Lock()
	closed, draining := s.closed, s.draining
	s.mu.Unlock()
	switch {
	case closed:
		return "shutting down"
	case draining:
		return "draining"
	}
	if s.opts.Cluster != nil {
		if err := s.opts.Cluster.Replica.Gate(); err != nil {
			return err.Error()
		}
	}
	if err := s.probe.Check(ctx); err != nil {
		if errors.Is(err, store.ErrWritesRefused) {
			return "the store refuses writes" // the error is in the log (store.Probe)
		}
		return unavailableReason // the error is in the log (store.Probe)
	}
	return ""
}

// unavailableReason is what /readyz and the API's 503 say when the store
// does not answer, to anyone: the store's error stays in the log.
const unavailableReason = "database unavailable"

// health answers /healthz and /readyz, and reports whether r was one of
// them: /healthz 200 while the process runs; /readyz 200 when the store
// answers (asked at most once a second: store.Probe), the server is not
// closing or draining, and (in a cluster) the replica trusts its leases,
// else 503 with the reason ("database unavailable" when the store does not
// answer: its error, which may name the database, goes to the log).
func (s *Server) health(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/healthz":
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return true
	case "/readyz":
	default:
		return false
	}
	if reason := s.notReady(r.Context()); reason != "" {
		w.Header().Set("Retry-After", "2")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": reason})
		return true
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return true
}

// Drain prepares the server's exit without failing requests: /readyz turns
// 503 (load balancers stop sending), the streams end (their clients
// reconnect, elsewhere), in a cluster the replica takes no more agents,
// and the awake agents are hibernated as soon as nothing keeps them awake,
// until none is left or ctx ends. Close then closes what is left. Requests
// that arrive meanwhile are still served (forwarded, in a cluster).
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	s.CloseStreams()
	if c := s.opts.Cluster; c != nil {
		if err := c.Replica.Drain(ctx); err != nil {
			s.logger.Warn("marking the replica draining", "error", err)
		}
	}
	for s.host.HibernateIdle(ctx) > 0 {
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	return nil
}
