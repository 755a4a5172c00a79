package server

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/cluster/lease"
	"github.com/agentmcp/agentmcp/server/internal/forward"
	"github.com/agentmcp/agentmcp/server/internal/guard"
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
		if s.ready.Serve(w, r) {
			return
		}
		fr, aerr := s.fwd.Receive(w, r, maxMCPBody, s.opts.BodyTimeout)
		if aerr != nil {
			guard.Refuse(w, r, aerr)
			return
		}
		r = fr
		if r.URL.Path == StatsPath {
			s.runtimeStats(w, r)
			return
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
		s.fwd.CloseIdleConnections()
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

// forward answers r, whose agent another replica owns, by sending it to
// the owner (package forward). It reports whether it answered r (false:
// the agent is free now, and the caller wakes it here).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, owned *agent.OwnedElsewhereError) bool {
	o := lease.Owner{Namespace: owned.Namespace, Replica: owned.Owner, ClusterURL: owned.URL}
	return s.fwd.Forward(w, r, o, isStream(r.Pattern, r))
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
		case owned.URL == "" && s.isDraining() && !forward.Forwarded(r):
			if s.fwd.Place(w, r, owned.Namespace, isStream(r.Pattern, r)) {
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

// unavailableOr is aerr, unless aerr is an internal error and the server is
// not ready: then 503 unavailable, which a client retries (ready.Checker.Or).
func (s *Server) unavailableOr(ctx context.Context, aerr *api.APIError) *api.APIError {
	return s.ready.Or(ctx, aerr)
}

// notReady says why the server itself is not ready (package ready asks
// the replica and the store), or "".
func (s *Server) notReady() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return "shutting down"
	case s.draining:
		return "draining"
	}
	return ""
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
