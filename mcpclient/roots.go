package mcpclient

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConfigureRoots sets the roots (directories, typically file:// URIs) that
// servers may ask for with roots/list, a feature deprecated in 2026-07-28;
// nil clears them. Sessions that start while roots are set (even an empty
// list) advertise the roots capability with listChanged.
//
// Live sessions see the new list at once: legacy sessions that advertised
// roots are sent notifications/roots/list_changed, in the background, so
// that the server asks again. Servers get the roots in URI order.
func (m *Manager) ConfigureRoots(roots []*mcp.Root) {
	m.hooks.rootsMu.Lock()
	if roots == nil {
		m.hooks.roots = nil
	} else {
		// In URI order, as go-sdk answers input requests.
		m.hooks.roots = cloneRoots(roots)
		slices.SortStableFunc(m.hooks.roots, func(a, b *mcp.Root) int { return strings.Compare(a.URI, b.URI) })
	}
	// The installed session, and a newer one being established.
	var clients []*sessionHooks
	for _, c := range m.snapshot() {
		var installed *sessionHooks
		c.mu.Lock()
		if s := c.sess; s != nil {
			installed = s.hooks
		}
		c.mu.Unlock()
		c.hooks.mu.Lock()
		latest := c.hooks.latest
		c.hooks.mu.Unlock()
		if installed != nil {
			clients = append(clients, installed)
		}
		if latest != nil && latest != installed {
			clients = append(clients, latest)
		}
	}
	m.hooks.rootsMu.Unlock()
	for _, h := range clients {
		h.rootsChanged()
	}
}

// currentRoots returns the configured roots.
func (m *Manager) currentRoots() []*mcp.Root {
	m.hooks.rootsMu.Lock()
	defer m.hooks.rootsMu.Unlock()
	return m.hooks.roots
}

// rootsChanged brings the client's roots up to date in the background
// (changing them makes go-sdk notify the server, which is I/O). One
// goroutine per client does it, until no change is left; calls that may
// take roots as input wait for it (waitRoots).
func (h *sessionHooks) rootsChanged() {
	m := h.c.m
	h.mu.Lock()
	if h.rootsIdle != nil {
		h.rootsDirty = true
		h.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	h.rootsIdle = idle
	h.mu.Unlock()
	m.mu.Lock()
	closed := m.closed
	if !closed {
		m.wg.Add(1)
	}
	m.mu.Unlock()
	if closed {
		h.mu.Lock()
		h.rootsIdle = nil
		h.mu.Unlock()
		close(idle)
		return
	}
	go func() {
		defer m.wg.Done()
		for {
			h.syncRoots(m.currentRoots())
			h.mu.Lock()
			if !h.rootsDirty {
				h.rootsIdle = nil
				h.mu.Unlock()
				close(idle)
				return
			}
			h.rootsDirty = false
			h.mu.Unlock()
		}
	}()
}

// waitRoots waits until the client's roots are those configured when it
// was called, or ctx is done.
func (h *sessionHooks) waitRoots(ctx context.Context) error {
	h.mu.Lock()
	idle := h.rootsIdle
	h.mu.Unlock()
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

// rootsMiddleware answers legacy roots/list requests with the roots
// configured now. (2026-07-28 input requests for roots are answered by
// go-sdk from the client's roots, which rootsChanged keeps current.)
func (h *sessionHooks) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		if h.caps.RootsV2 == nil {
			// The session did not offer roots: a server may not ask.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "roots are not offered to this server"}
		}
		roots := cloneRoots(h.c.m.currentRoots())
		h.c.m.logger.Debug("mcp server listed the roots", "server", h.c.ID(), "roots", len(roots))
		return &mcp.ListRootsResult{Roots: roots}, nil
	}
}

// syncRoots makes the client's roots want: it removes the ones that went
// and adds the ones that are new or changed. Each step that changes
// something notifies the server, when the session advertised
// roots.listChanged. Only the syncing goroutine calls it.
func (h *sessionHooks) syncRoots(want []*mcp.Root) {
	h.mu.Lock()
	have := h.roots
	h.mu.Unlock()
	next := rootsByURI(want)
	var gone []string
	for uri := range have {
		if _, ok := next[uri]; !ok {
			gone = append(gone, uri)
		}
	}
	var added []*mcp.Root
	for _, r := range want {
		if old, ok := have[r.URI]; !ok || !sameRoot(old, *r) {
			cp := *r
			added = append(added, &cp)
		}
	}
	h.mu.Lock()
	h.roots = next
	h.mu.Unlock()
	if len(gone) > 0 {
		h.client.RemoveRoots(gone...)
	}
	if len(added) > 0 {
		h.client.AddRoots(added...)
	}
}

func sameRoot(a, b mcp.Root) bool {
	return a.URI == b.URI && a.Name == b.Name && len(a.Meta) == 0 && len(b.Meta) == 0
}

func rootsByURI(roots []*mcp.Root) map[string]mcp.Root {
	out := make(map[string]mcp.Root, len(roots))
	for _, r := range roots {
		out[r.URI] = *r
	}
	return out
}

func cloneRoots(roots []*mcp.Root) []*mcp.Root {
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
