package server

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/oauth/resource"
)

// mcpRoute is an agent's MCP endpoint: the agent as an MCP server
// (package gateway), behind the token like the rest of the API.
const mcpRoute = "/agents/{class}/{name}/mcp"

// maxMCPBody caps an MCP request's body (go-sdk's default).
const maxMCPBody = 4 << 20

// DefaultMCPSessions is Options.MCPSessions's default.
const DefaultMCPSessions = 1000

// gateways are the MCP endpoints of the awake agents: one per agent
// instance, made on its first MCP request and closed with it (a
// hibernation, the server's Close); a wake makes a new one.
type gateways struct {
	// mu guards the fields below.
	mu     sync.Mutex
	m      map[*agent.Agent]*gateway.Gateway
	cap    *gateway.SessionCap // Options.MCPSessions, shared by all; nil for none
	closed bool
}

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
	if sub, ok := s.tokenSubject(r); ok {
		bindSubject(sub, g).ServeHTTP(w, r)
		return
	}
	g.ServeHTTP(w, r)
}

// tokenSubject returns the subject of the request's OAuth access token
// (checked already: security.go), in OAuth mode: its sub claim, else its
// client, else a hash of the token. It is not ok without one (the access
// token of Options.Token, or no OAuth mode).
func (s *Server) tokenSubject(r *http.Request) (string, bool) {
	if s.sec.resource == nil {
		return "", false
	}
	tok := bearerToken(r)
	if tok == "" || (s.sec.token != nil && s.sec.matches(tok)) {
		return "", false
	}
	return resource.Subject(tok), true
}

// bindSubject gives h's requests go-sdk's token info with subject as the
// user: the gateway binds each session to the user who opened it.
func bindSubject(subject string, h http.Handler) http.Handler {
	verified := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: subject}, nil
	}
	// The token was checked (expiry included) before; this only carries
	// the subject.
	return auth.RequireBearerToken(verified, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
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
	if o.Sessions == nil {
		if gws.cap == nil && s.opts.MCPSessions >= 0 {
			gws.cap = gateway.NewSessionCap(cmp.Or(s.opts.MCPSessions, DefaultMCPSessions))
		}
		o.Sessions = gws.cap
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

// busyReasons says what keeps the awake agent class/name from
// hibernating (agent.Busyness), with its MCP clients' questions waiting
// for an answer, or that it is kept awake.
func (s *Server) busyReasons(class, name string) string {
	b := s.host.Busy()[class+"/"+name]
	why := b.String()
	if why == "idle" {
		why = "kept awake (a keep-awake server, or --keep-awake)"
	}
	var waiting int
	gws := &s.gateways
	gws.mu.Lock()
	for a, g := range gws.m {
		if a.Namespace() == class+"/"+name {
			waiting += g.PendingInputs()
		}
	}
	gws.mu.Unlock()
	if waiting > 0 {
		why += fmt.Sprintf(" (%d of them MCP client questions waiting for the client's answer, each cancelled if not answered in time)", waiting)
	}
	return why
}
