//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

// Package roots keeps the roots of a session's go-sdk client in line with
// the roots configured on package mcpclient's Manager (ConfigureRoots):
// changing a client's roots makes go-sdk notify the server
// (notifications/roots/list_changed), which is I/O, so a [Syncer] does it
// in the background, and the calls that may take roots as input wait for
// it ([Syncer.Wait]).
//
// # Usage
//
// [NewSyncer] gives a new client the roots configured when it is built;
// [Syncer.Changed] brings it up to date after they change. [Sorted] and
// [Clone] copy a list of roots as the Manager keeps and hands them out.
//
// # Concurrency
//
// A Syncer is safe for concurrent use. One goroutine at a time syncs a
// client, started through the function the owner passes to NewSyncer, and
// runs until no change is left.
//
// # Errors
//
// None: go-sdk's AddRoots and RemoveRoots report no error.
package roots

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client is the part of a go-sdk *mcp.Client a Syncer changes. Its
// methods are called from one goroutine at a time.
type Client interface {
	AddRoots(roots ...*mcp.Root)
	RemoveRoots(uris ...string)
}

var _ Client = (*mcp.Client)(nil)

// Syncer brings one client's roots up to date.
type Syncer struct {
	client  Client
	current func() []*mcp.Root
	spawn   func(func()) bool

	// mu guards the fields below. It is never held across I/O.
	mu    sync.Mutex
	have  map[string]mcp.Root // what the client's roots hold, by URI
	idle  chan struct{}       // non-nil while a goroutine syncs; closed when it is done
	dirty bool                // the roots changed while it was at work
}

// NewSyncer adds initial to client's roots (before the client connects,
// this sends nothing) and returns its Syncer. current returns the roots
// configured now; spawn runs its function on a goroutine of the owner's,
// or reports false, running nothing, once the owner is closed.
func NewSyncer(client Client, initial []*mcp.Root, current func() []*mcp.Root, spawn func(func()) bool) *Syncer {
	s := &Syncer{client: client, current: current, spawn: spawn, have: byURI(initial)}
	if len(initial) > 0 {
		client.AddRoots(Clone(initial)...)
	}
	return s
}

// Changed brings the client's roots up to date in the background. One
// goroutine per client does it, until no change is left.
func (s *Syncer) Changed() {
	s.mu.Lock()
	if s.idle != nil {
		s.dirty = true
		s.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	s.idle = idle
	s.mu.Unlock()
	if !s.spawn(func() { s.run(idle) }) {
		s.mu.Lock()
		s.idle = nil
		s.mu.Unlock()
		close(idle)
	}
}

func (s *Syncer) run(idle chan struct{}) {
	for {
		s.sync(s.current())
		s.mu.Lock()
		if !s.dirty {
			s.idle = nil
			s.mu.Unlock()
			close(idle)
			return
		}
		s.dirty = false
		s.mu.Unlock()
	}
}

// Wait waits until the client's roots are those configured when it was
// called, or ctx is done.
func (s *Syncer) Wait(ctx context.Context) error {
	s.mu.Lock()
	idle := s.idle
	s.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sync makes the client's roots want: it removes the ones that went and
// adds the ones that are new or changed. Each step that changes something
// notifies the server, when the session advertised roots.listChanged.
// Only the syncing goroutine calls it.
func (s *Syncer) sync(want []*mcp.Root) {
	s.mu.Lock()
	have := s.have
	s.mu.Unlock()
	next := byURI(want)
	var gone []string
	for uri := range have {
		if _, ok := next[uri]; !ok {
			gone = append(gone, uri)
		}
	}
	var added []*mcp.Root
	for _, r := range want {
		if old, ok := have[r.URI]; !ok || !same(old, *r) {
			cp := *r
			added = append(added, &cp)
		}
	}
	s.mu.Lock()
	s.have = next
	s.mu.Unlock()
	if len(gone) > 0 {
		s.client.RemoveRoots(gone...)
	}
	if len(added) > 0 {
		s.client.AddRoots(added...)
	}
}

func same(a, b mcp.Root) bool {
	return a.URI == b.URI && a.Name == b.Name && len(a.Meta) == 0 && len(b.Meta) == 0
}

func byURI(roots []*mcp.Root) map[string]mcp.Root {
	out := make(map[string]mcp.Root, len(roots))
	for _, r := range roots {
		out[r.URI] = *r
	}
	return out
}

// Clone returns a copy of roots without its nil entries.
func Clone(roots []*mcp.Root) []*mcp.Root {
	out := make([]*mcp.Root, 0, len(roots))
	for _, r := range roots {
		if r == nil {
			continue
		}
		cp := *r
		out = append(out, &cp)
	}
	return out
}

// Sorted returns a copy of roots (Clone) in URI order, as go-sdk answers
// input requests for roots.
func Sorted(roots []*mcp.Root) []*mcp.Root {
	out := Clone(roots)
	slices.SortStableFunc(out, func(a, b *mcp.Root) int { return strings.Compare(a.URI, b.URI) })
	return out
}
