package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// SessionCap caps the 2025-11-25 sessions of several Gateways together
// (Options.Sessions): agentmcp serve shares one among the gateways of all
// its agents. It is safe for concurrent use.
type SessionCap struct {
	max int
	seq atomic.Int64 // orders the uses of the sessions of all the gateways

	// mu guards live.
	mu   sync.Mutex
	live map[*liveSession]struct{}
}

// NewSessionCap returns a cap of max sessions in all; max <= 0 means
// none.
func NewSessionCap(max int) *SessionCap {
	return &SessionCap{max: max, live: map[*liveSession]struct{}{}}
}

func (c *SessionCap) add(ls *liveSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live[ls] = struct{}{}
}

func (c *SessionCap) remove(ls *liveSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.live, ls)
}

func (c *SessionCap) list() []*liveSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Keys(c.live))
}

// useSeq is the counter that orders the uses of the gateway's sessions:
// its SessionCap's when it shares one, so that the session idle the
// longest among all the gateways is found.
func (g *Gateway) useSeq() *atomic.Int64 {
	if c := g.opts.Sessions; c != nil {
		return &c.seq
	}
	return &g.seq
}

// admit makes room for the session a sessionless POST would open (an
// initialize), ending the sessions idle the longest past the caps; it
// reports false when the caps are reached by sessions that all have a
// request in flight.
func (g *Gateway) admit(r *http.Request) bool {
	body := peekBody(r)
	if body == nil {
		return true
	}
	if m, ok := decodeMessage(body); !ok || m.method != "initialize" {
		return true // go-sdk answers it (no session comes of it)
	}
	if max := g.opts.MaxSessions; max > 0 {
		g.mu.Lock()
		local := slices.Collect(maps.Values(g.sessions))
		g.mu.Unlock()
		if !makeRoom(local, max-1, nil, g.logger, "per agent") {
			return false
		}
	}
	if c := g.opts.Sessions; c != nil && c.max > 0 {
		if !makeRoom(c.list(), c.max-1, nil, g.logger, "total") {
			return false
		}
	}
	return true
}

// trim ends the sessions idle the longest while the caps are exceeded
// (handshakes that passed admit together), never the new session ls.
func (g *Gateway) trim(ls *liveSession) {
	if max := g.opts.MaxSessions; max > 0 {
		g.mu.Lock()
		local := slices.Collect(maps.Values(g.sessions))
		g.mu.Unlock()
		makeRoom(local, max, ls, g.logger, "per agent")
	}
	if c := g.opts.Sessions; c != nil && c.max > 0 {
		makeRoom(c.list(), c.max, ls, g.logger, "total")
	}
}

// makeRoom ends the idle sessions of list that were used the longest ago
// (never keep) until at most max of them are left; it reports whether it
// got there.
func makeRoom(list []*liveSession, max int, keep *liveSession, logger *slog.Logger, why string) bool {
	n := 0
	for _, ls := range list {
		if ls.counts() {
			n++
		}
	}
	for n > max {
		var victim *liveSession
		var oldest int64
		for _, ls := range list {
			if ls == keep {
				continue
			}
			if used, idle := ls.idleSince(); idle && (victim == nil || used < oldest) {
				victim, oldest = ls, used
			}
		}
		if victim == nil {
			return false
		}
		victim.evict(logger, why)
		n--
	}
	return true
}

// subjectOf returns the user a request is authenticated as: the UserID of
// its auth.TokenInfo (go-sdk's auth.RequireBearerToken puts it in the
// request's context), "" for none.
func subjectOf(ctx context.Context) string {
	if ti := auth.TokenInfoFromContext(ctx); ti != nil {
		return ti.UserID
	}
	return ""
}

// hashID is what the logs say of a session id: a hash that tells sessions
// apart without giving anyone the id.
func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:6])
}

// hashSessionIDs is a log handler that writes the hash of a "session_id"
// attribute (go-sdk's) instead of the id, as "session".
type hashSessionIDs struct{ h slog.Handler }

func (x hashSessionIDs) Enabled(ctx context.Context, l slog.Level) bool { return x.h.Enabled(ctx, l) }

func (x hashSessionIDs) Handle(ctx context.Context, r slog.Record) error {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == "session_id"
		return !found
	})
	if !found {
		return x.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(hashAttr(a))
		return true
	})
	return x.h.Handle(ctx, out)
}

func (x hashSessionIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = hashAttr(a)
	}
	return hashSessionIDs{x.h.WithAttrs(out)}
}

func (x hashSessionIDs) WithGroup(name string) slog.Handler {
	return hashSessionIDs{x.h.WithGroup(name)}
}

func hashAttr(a slog.Attr) slog.Attr {
	if a.Key == "session_id" {
		return slog.String("session", hashID(a.Value.String()))
	}
	return a
}
