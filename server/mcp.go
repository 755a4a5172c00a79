package server

import (
	"net/http"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
)

// mcpRoute is an agent's MCP endpoint: the agent as an MCP server
// (package gateway), behind the token like the rest of the API.
const mcpRoute = "/agents/{class}/{name}/mcp"

// maxMCPBody caps an MCP request's body (go-sdk's default).
const maxMCPBody = 4 << 20

// DefaultMCPSessions is Options.MCPSessions's default.
const DefaultMCPSessions = 1000

// mcp serves an agent's MCP endpoint. The agent is in use for the request
// (a wake, if it sleeps), but for a stream that only waits for what the
// agent may send (a 2025-11-25 session's GET, a 2026-07-28
// subscriptions/listen): an idle client does not keep its agent awake,
// and a hibernation ends its session and streams (see gateway). In OAuth
// mode a session is bound to the token's subject.
func (s *Server) mcp(w http.ResponseWriter, r *http.Request) {
	a, release, handled := s.useOrForward(w, r, false, false)
	if handled {
		return
	}
	g := s.gatewayFor(a)
	if r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen" {
		release()
	} else {
		defer release()
	}
	if g == nil {
		writeError(w, s.openError(errClosed))
		return
	}
	s.sec.Bind(r, g).ServeHTTP(w, r) // in OAuth mode, the session's user
}

// gatewayKey is the key of an agent's gateway among its attachments.
type gatewayKey struct{}

// gatewayFor returns the gateway of a: one per agent, made on its first
// MCP request and closed with it (agent.Agent.Attach: a hibernation, the
// server's Close); a wake makes a new one. It is nil once a is closing.
func (s *Server) gatewayFor(a *agent.Agent) *gateway.Gateway {
	g, _ := a.Attach(gatewayKey{}, func(a *agent.Agent) agent.Attachment { return s.newGateway(a) }).(*gateway.Gateway)
	return g
}

// newGateway makes the gateway of a with Options.Gateway's options: the
// server's logger, its session cap shared by all the agents
// (Options.MCPSessions), the agent's exposure rules, and the agent's own
// handlers of its servers' requests for input as the fallback of those no
// MCP client takes.
func (s *Server) newGateway(a *agent.Agent) *gateway.Gateway {
	var o gateway.Options
	if s.opts.Gateway != nil {
		if set := s.opts.Gateway(a); set != nil {
			o = *set
		}
	}
	if o.Logger == nil {
		o.Logger = s.logger
	}
	if o.Sessions == nil {
		o.Sessions = s.mcpSessions
	}
	// The server checks the Host itself (only loopback names and
	// AllowedHosts without a token), and may sit behind a proxy that
	// forwards its public name to 127.0.0.1.
	o.AnyHost = true
	if o.Expose == nil {
		o.Expose = a.Exposes // the agent's stored rules (exposure.go)
	}
	if o.Elicitation == nil {
		o.Elicitation = a.ElicitationHandlers()
	}
	if o.Sampling == nil {
		o.Sampling = a.SamplingHandler()
	}
	return gateway.New(a, &o)
}
