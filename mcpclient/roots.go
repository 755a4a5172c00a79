//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient

import (
	"context"

	"github.com/agentmcp/agentmcp/mcpclient/internal/roots"
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
func (m *Manager) ConfigureRoots(list []*mcp.Root) {
	m.hooks.rootsMu.Lock()
	if list == nil {
		m.hooks.roots = nil
	} else {
		m.hooks.roots = roots.Sorted(list)
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
		h.roots.Changed()
	}
}

// currentRoots returns the configured roots.
func (m *Manager) currentRoots() []*mcp.Root {
	m.hooks.rootsMu.Lock()
	defer m.hooks.rootsMu.Unlock()
	return m.hooks.roots
}

// rootsMiddleware answers legacy roots/list requests with the roots
// configured now. (2026-07-28 input requests for roots are answered by
// go-sdk from the client's roots, which the session's roots.Syncer keeps
// current.)
func (h *sessionHooks) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		if h.caps.RootsV2 == nil {
			// The session did not offer roots: a server may not ask.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "roots are not offered to this server"}
		}
		list := roots.Clone(h.c.m.currentRoots())
		h.c.m.logger.Debug("mcp server listed the roots", "server", h.c.ID(), "roots", len(list))
		return &mcp.ListRootsResult{Roots: list}, nil
	}
}
