package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"

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
	var claims struct {
		Sub      string `json:"sub"`
		ClientID string `json:"client_id"`
		Azp      string `json:"azp"`
	}
	if parts := strings.Split(tok, "."); len(parts) == 3 {
		decodeSegment(parts[1], &claims)
	}
	switch {
	case claims.Sub != "":
		return "sub:" + claims.Sub, true
	case claims.ClientID != "":
		return "client:" + claims.ClientID, true
	case claims.Azp != "":
		return "client:" + claims.Azp, true
	}
	sum := sha256.Sum256([]byte(tok))
	return "token:" + hex.EncodeToString(sum[:]), true
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
	return s.busyState(class, name).Reason
}

// BusyState is the answer of GET /agents/{class}/{name}/busy: what keeps
// the agent awake now, what POST .../hibernate's 409 agent_busy names.
type BusyState struct {
	// Awake is false for an agent asleep: the other fields are then zero.
	Awake bool `json:"awake"`
	// The figures of agent.Busyness: requests to the agent in flight
	// (inUse), calls, adds and reconnections in flight (work), open
	// streams (watchers: a dashboard, an SSE or WebSocket client),
	// pending elicitations, an OAuth sign-in in progress (authorizing).
	agent.Busyness
	// Questions counts MCP client questions (of the agent's MCP endpoint)
	// waiting for the client's answer, each cancelled if not answered in
	// time; they are counted in work too.
	Questions int `json:"questions,omitempty"`
	// KeepAwake is set when the agent is kept awake whatever it does (a
	// keep-awake server, or serve --keep-awake).
	KeepAwake bool `json:"keepAwake,omitempty"`
	// Reason says it in words: "asleep", "idle" (the idle timeout will
	// hibernate it), or what keeps it awake.
	Reason string `json:"reason"`
}

// busyState reports what keeps agent class/name awake, without waking it.
func (s *Server) busyState(class, name string) BusyState {
	if !s.host.IsAwake(class, name) {
		return BusyState{Reason: "asleep"}
	}
	st := BusyState{Awake: true, Busyness: s.host.Busy()[class+"/"+name], KeepAwake: s.host.KeptAwake(class, name)}
	gws := &s.gateways
	gws.mu.Lock()
	for a, g := range gws.m {
		if a.Namespace() == class+"/"+name {
			st.Questions += g.PendingInputs()
		}
	}
	gws.mu.Unlock()
	st.Reason = st.Busyness.String()
	switch {
	case st.Reason == "idle" && st.KeepAwake:
		st.Reason = "kept awake (a keep-awake server, or --keep-awake)"
	case st.KeepAwake:
		st.Reason += "; kept awake (a keep-awake server, or --keep-awake)"
	}
	if st.Questions > 0 {
		st.Reason += fmt.Sprintf(" (%d of them MCP client questions waiting for the client's answer, each cancelled if not answered in time)", st.Questions)
	}
	return st
}

// busy is GET /agents/{class}/{name}/busy: what keeps the agent awake
// (BusyState). It never wakes an agent, nor counts as a request to it.
func (s *Server) busy(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, apiErrorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is not allowed here (allowed: GET)", r.Method))
		return
	}
	class, name := r.PathValue("class"), r.PathValue("name")
	if aerr := s.checkAgent(class, name); aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, s.busyState(class, name))
}
