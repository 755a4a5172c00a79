package server

import (
	"context"
	"net/http"
	"sync"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
)

// mcpRoute is an agent's MCP endpoint: the agent as an MCP server
// (package gateway), behind the token like the rest of the API.
const mcpRoute = "/agents/{class}/{name}/mcp"

// maxMCPBody caps an MCP request's body (go-sdk's default).
const maxMCPBody = 4 << 20

// gateways are the MCP endpoints of the awake agents: one per agent
// instance, made on its first MCP request and closed with it (a
// hibernation, the server's Close); a wake makes a new one.
type gateways struct {
	// mu guards m and closed.
	mu     sync.Mutex
	m      map[*agent.Agent]*gateway.Gateway
	closed bool
}

// mcp serves an agent's MCP endpoint. The agent is in use for the request
// (a wake, if it sleeps); a 2025-11-25 session keeps it awake until the
// session ends (see gateway).
func (s *Server) mcp(w http.ResponseWriter, r *http.Request) {
	a, release, handled := s.useOrForward(w, r, false, false)
	if handled {
		return
	}
	defer release()
	g := s.gatewayFor(a)
	if g == nil {
		writeError(w, s.openError(errClosed))
		return
	}
	g.ServeHTTP(w, r)
}

// gatewayFor returns the gateway of a, made on first use; nil after
// Close.
func (s *Server) gatewayFor(a *agent.Agent) *gateway.Gateway {
	gws := &s.gateways
	gws.mu.Lock()
	defer gws.mu.Unlock()
	if gws.closed {
		return nil
	}
	if g, ok := gws.m[a]; ok {
		select {
		case <-g.Done():
		default:
			return g
		}
	}
	if gws.m == nil {
		gws.m = map[*agent.Agent]*gateway.Gateway{}
	}
	// Forget the gateways of agents closed since (each closed itself).
	for other, g := range gws.m {
		select {
		case <-g.Done():
			delete(gws.m, other)
		default:
		}
	}
	var o gateway.Options
	if s.opts.Gateway != nil {
		if set := s.opts.Gateway(a); set != nil {
			o = *set
		}
	}
	if o.Logger == nil {
		o.Logger = s.logger
	}
	// The server checks the Host itself (only loopback names and
	// AllowedHosts without a token), and may sit behind a proxy that
	// forwards its public name to 127.0.0.1.
	o.AnyHost = true
	if o.Expose == nil {
		o.Expose = a.Exposes // the agent's stored rules (exposure.go)
	}
	g := gateway.New(a, &o)
	gws.m[a] = g
	return g
}

// closeGateways closes every gateway; later requests get none.
func (s *Server) closeGateways(ctx context.Context) {
	gws := &s.gateways
	gws.mu.Lock()
	gws.closed = true
	all := gws.m
	gws.m = nil
	gws.mu.Unlock()
	for _, g := range all {
		g.Close(ctx)
	}
}
