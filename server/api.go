package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// maxBody caps a request body.
const maxBody = 1 << 20

// routes returns the server's routes. Paths are registered without
// methods: agentRoute answers a wrong method with a JSON 405.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.index)
	mux.Handle("/static/", s.static())
	mux.HandleFunc("/agents", s.listAgents)
	// PUT is createAgent, which needs to know whether the agent existed;
	// it is listed here for the Allow header of a 405.
	agentRoot := s.agentRoute(methods{http.MethodGet: s.agentRoot, http.MethodPut: nil})
	mux.HandleFunc("/agents/{class}/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			s.createAgent(w, r)
			return
		}
		agentRoot.ServeHTTP(w, r)
	})
	mux.Handle("/agents/{class}/{name}/events", s.agentRoute(methods{http.MethodGet: s.sse}))
	mux.HandleFunc("/agents/{class}/{name}/hibernate", s.hibernate)
	mux.HandleFunc("/agents/{class}/{name}/busy", s.busy)
	mux.Handle("/agents/{class}/{name}/reload", s.agentRoute(methods{http.MethodPost: s.reload}))
	mux.Handle("/agents/{class}/{name}/servers", s.stdioGate(s.agentRoute(methods{http.MethodGet: s.listServers, http.MethodPost: s.addServer}, http.MethodPost)))
	mux.Handle("/agents/{class}/{name}/servers/{id}", s.agentRoute(methods{http.MethodGet: s.getServer, http.MethodDelete: s.removeServer}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/reconnect", s.agentRoute(methods{http.MethodPost: s.reconnectServer}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/logs", s.agentRoute(methods{http.MethodGet: s.serverLogs}))
	mux.Handle("/agents/{class}/{name}/logs", s.agentRoute(methods{http.MethodGet: s.agentLogs}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/tools/call", s.agentRoute(methods{http.MethodPost: s.callTool}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/resources/read", s.agentRoute(methods{http.MethodPost: s.readResource}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/prompts/get", s.agentRoute(methods{http.MethodPost: s.getPrompt}))
	mux.Handle("/agents/{class}/{name}/tools", s.agentRoute(methods{http.MethodGet: s.listTools}))
	mux.Handle("/agents/{class}/{name}/prompts", s.agentRoute(methods{http.MethodGet: s.listPrompts}))
	mux.Handle("/agents/{class}/{name}/resources", s.agentRoute(methods{http.MethodGet: s.listResources}))
	mux.Handle("/agents/{class}/{name}/resource-templates", s.agentRoute(methods{http.MethodGet: s.listTemplates}))
	mux.Handle("/agents/{class}/{name}/elicitations", s.agentRoute(methods{http.MethodGet: s.listElicitations}))
	mux.Handle("/agents/{class}/{name}/elicitations/{id}", s.agentRoute(methods{http.MethodPost: s.answerElicitation}))
	mux.Handle("/agents/{class}/{name}/stats", s.agentRoute(methods{http.MethodGet: s.stats}))
	mux.HandleFunc("/agents/{class}/{name}/callback", s.callback)
	mux.HandleFunc(mcpRoute, s.mcp)
	s.exposureRoutes(mux)
	s.policyRoutes(mux) // policy.go: .../policy, .../approvals, .../approvals/{approval}
	s.pinRoutes(mux)    // pins.go: .../pins, .../pins/{server}/{tool}
	s.oauthRoutes(mux)
	if s.opts.Metrics != nil {
		mux.Handle("GET /metrics", s.opts.Metrics)
	}
	mux.HandleFunc("/", s.fallback)
	return mux
}

// agentHandler handles a request to one agent.
type agentHandler func(w http.ResponseWriter, r *http.Request, a *agent.Agent)

type methods map[string]agentHandler

// agentRoute opens the agent named by the path and calls the handler of
// the request's method. Only the methods in creating create the agent when
// it does not exist; the others answer unknown_agent (knownEntry).
func (s *Server) agentRoute(m methods, creating ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := m[r.Method]
		if !ok && r.Method == http.MethodHead {
			h, ok = m[http.MethodGet]
		}
		if !ok {
			allow := make([]string, 0, len(m))
			for k := range m {
				allow = append(allow, k)
			}
			slices.Sort(allow)
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, apiErrorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s is not allowed here (allowed: %s)", r.Method, strings.Join(allow, ", ")))
			return
		}
		a, release, handled := s.useOrForward(w, r, slices.Contains(creating, r.Method), false)
		if handled {
			return
		}
		defer release()
		h(w, r, a)
	})
}

// openError maps an agentEntry error to an API error.
func (s *Server) openError(err error) *api.APIError {
	var aerr *api.APIError
	switch {
	case errors.As(err, &aerr):
		return aerr
	case errors.Is(err, store.ErrUnavailable):
		return storeUnavailable(err)
	case errors.Is(err, errClosed):
		return apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the server is shutting down")
	}
	return apiErrorf(http.StatusInternalServerError, api.CodeInternal, "%v", err)
}

func (s *Server) fallback(w http.ResponseWriter, r *http.Request) {
	// An agent may have been added with a custom OAuth callback path.
	if s.host.HandleOAuthCallback(w, r) {
		return
	}
	writeError(w, apiErrorf(http.StatusNotFound, api.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path))
}

// callback is /agents/{class}/{name}/callback, where OAuth providers send
// the user back. It needs no access token (the provider's redirect carries
// none; the agent checks its single-use state instead), so it never
// creates an agent: only one already open, or one with servers in the
// store, can answer (knownEntry). For an agent not awake here, the state
// is checked in the store first (agent.Host.CheckCallback): a callback
// that cannot complete an authorisation of the agent is answered without
// waking it, so that forged callbacks cannot start its servers.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	class, name := r.PathValue("class"), r.PathValue("name")
	if s.checkAgent(class, name) == nil && !s.host.IsAwake(class, name) {
		res, err := s.host.CheckCallback(r.Context(), class, name, r)
		switch {
		case errors.Is(err, agent.ErrNoServers):
			writeError(w, apiErrorf(http.StatusNotFound, api.CodeUnknownAgent, "agent %s/%s has no MCP servers: there is no authorization to complete", class, name))
			return
		case err != nil:
			s.callbackConfig().Respond(w, r, res)
			return
		}
	}
	a, release, handled := s.useOrForward(w, r, false, true)
	if handled {
		return
	}
	defer release()
	a.HandleOAuthCallback(w, r)
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, apiErrorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s is not allowed here (allowed: GET)", r.Method))
		return
	}
	agents, more, err := s.knownAgents(r.Context(), maxAgentsListed)
	if aerr := storeUnavailable(err); aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Agents []api.AgentInfo `json:"agents"`
		// More is set when agents were left out of the list.
		More bool `json:"more,omitempty"`
	}{agents, more})
}

// maxAgentsListed bounds the agents GET /agents lists.
const maxAgentsListed = 1000

// createAgent is PUT /agents/{class}/{name}, which creates the agent: 201
// when it was created, 200 when it existed. An agent without servers lasts
// while it is awake: once hibernated, only agents with stored servers
// exist.
func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) {
	class, name := r.PathValue("class"), r.PathValue("name")
	status := http.StatusOK
	_, release, err := s.useKnown(r.Context(), class, name, false)
	if err != nil {
		// Unknown: create it. Else (owned by another replica, or an error)
		// useOrForward forwards it or answers the error.
		create := false
		var aerr *api.APIError
		if errors.As(err, &aerr) && aerr.Code == api.CodeUnknownAgent && s.checkAgent(class, name) == nil {
			status, create = http.StatusCreated, true
		}
		var handled bool
		if _, release, handled = s.useOrForward(w, r, create, false); handled {
			return
		}
	}
	release()
	writeJSON(w, status, api.AgentInfo{Class: class, Name: name})
}

// hibernate is POST /agents/{class}/{name}/hibernate: it hibernates the
// agent now (agent.Host.Hibernate), as its idle timeout would. 204 when it
// was hibernated or was asleep already; 409 agent_busy when something keeps
// it awake (a stream, a call, a pending elicitation, an OAuth flow, an MCP
// client's unanswered question, a keep-awake server), its message naming
// what. It never wakes an agent.
func (s *Server) hibernate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, apiErrorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s is not allowed here (allowed: POST)", r.Method))
		return
	}
	class, name := r.PathValue("class"), r.PathValue("name")
	if aerr := s.checkAgent(class, name); aerr != nil {
		writeError(w, aerr)
		return
	}
	if s.host.IsAwake(class, name) && !s.host.Hibernate(r.Context(), class, name) {
		writeError(w, apiErrorf(http.StatusConflict, api.CodeAgentBusy, "agent %s/%s is busy: %s", class, name, s.busyReasons(class, name)))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// reload is POST /agents/{class}/{name}/reload: the agent takes in what
// another process changed in its stored servers (agent.Agent.Reload), as
// agentmcp add --db and import --db on serve's database ask.
func (s *Server) reload(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	added, removed, err := a.Reload(r.Context())
	if err != nil {
		writeError(w, s.unavailableOr(r.Context(), apiErrorf(http.StatusInternalServerError, api.CodeInternal, "%v", err)))
		return
	}
	writeJSON(w, http.StatusOK, api.ReloadResult{Added: orEmpty(added), Removed: orEmpty(removed)})
}

func orEmpty(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// agentRoot is the agent's route: its WebSocket, or its MCPServersState as
// JSON (the seed's getMcpServers).
func (s *Server) agentRoot(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	if httpguts.HeaderValuesContainsToken(r.Header["Connection"], "upgrade") &&
		httpguts.HeaderValuesContainsToken(r.Header["Upgrade"], "websocket") {
		s.websocket(w, r, a)
		return
	}
	writeJSON(w, http.StatusOK, a.MCPServers())
}

// ServerStateOf returns server id of a as GET .../servers/{id} shows it,
// or false when a has no such server.
func ServerStateOf(a *agent.Agent, id string) (api.ServerState, bool) {
	srv, ok := a.Server(id)
	if !ok {
		return api.ServerState{}, false
	}
	st := api.ServerState{ID: id, MCPServer: wireServer(srv), Session: api.SessionNone}
	if info, ok := a.ServerInfo(id); ok {
		switch info.State {
		case mcpclient.StateReady, mcpclient.StateConnected, mcpclient.StateDiscovering:
			st.Session = api.SessionLive
		default:
			if info.Resume != nil {
				st.Session = api.SessionResumable
			}
		}
	}
	st.ToolCount = len(a.ListTools(mcpclient.Filter{ServerID: []string{id}}))
	return st, true
}

// wireServer is srv in the API's shape: its JSON, as api.MCPServer reads
// it.
func wireServer(srv agent.MCPServer) api.MCPServer {
	var out api.MCPServer
	if b, err := json.Marshal(srv); err == nil {
		json.Unmarshal(b, &out)
	}
	return out
}

func (s *Server) listServers(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	st := a.MCPServers()
	writeJSON(w, http.StatusOK, struct {
		Servers map[string]agent.MCPServer `json:"servers"`
		Order   []string                   `json:"order"` // agent.ServerOrder
	}{st.Servers, st.Order})
}

func (s *Server) getServer(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	id := r.PathValue("id")
	st, ok := ServerStateOf(a, id)
	if !ok {
		writeError(w, unknownServer(a, id))
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func unknownServer(a *agent.Agent, id string) *api.APIError {
	err := apiErrorf(http.StatusNotFound, api.CodeUnknownServer, "agent %s has no MCP server %q", a.Namespace(), id)
	err.ServerID = id
	return err
}

// AddOptions turns req into agent.AddOptions, checking what
// agent.Agent.CheckAdd does not (required fields, the URL's form, the
// transport type, header names and values), as POST .../servers does. An
// error is an *api.APIError.
func AddOptions(req *api.AddRequest) (agent.AddOptions, error) {
	o, aerr := addOptions(req)
	if aerr != nil {
		return o, aerr
	}
	return o, nil
}

// isControl reports whether r is a control character (C0, DEL, C1) or a
// bidirectional control (U+202E and the like), which a display name must
// not contain: they rewrite terminals and reorder what the dashboard shows.
func isControl(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

func addOptions(req *api.AddRequest) (agent.AddOptions, *api.APIError) {
	o := agent.AddOptions{ID: req.ID, CallbackHost: req.CallbackHost, CallbackPath: req.CallbackPath, AgentsPrefix: req.AgentsPrefix, KeepAwake: req.KeepAwake,
		IDFromName: true, UniqueName: true, Replace: req.Replace, RemoveIfFailed: true, KeepIfUnreachable: req.KeepIfUnreachable}
	switch {
	case strings.TrimSpace(req.Name) == "":
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "name is required")
	case utf8.RuneCountInString(req.Name) > api.MaxNameLength:
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "name is longer than %d characters", api.MaxNameLength)
	case strings.ContainsFunc(req.Name, isControl):
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "name contains a control character (line breaks, escapes and bidirectional controls are refused)")
	case req.ID != "" && strings.TrimSpace(req.ID) == "":
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "id is blank")
	case req.Command != "":
		return commandOptions(req, o)
	case strings.TrimSpace(req.URL) == "":
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "url is required (or a command, for a stdio server)")
	case len(req.Args) > 0 || len(req.Env) > 0 || req.Cwd != "":
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "args, env and cwd are for a command")
	}
	if u, err := url.Parse(req.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidURL, "url must be an absolute http or https URL")
	}
	if t := req.Transport; t != nil {
		switch mcpclient.TransportType(t.Type) {
		case "", mcpclient.TransportAuto, mcpclient.TransportStreamableHTTP, mcpclient.TransportSSE:
			o.Transport.Type = mcpclient.TransportType(t.Type)
		default:
			return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "transport.type %q: want auto, streamable-http or sse", t.Type)
		}
		if len(t.Headers) > 0 {
			o.Transport.Headers = http.Header{}
			for k, v := range t.Headers {
				if !httpguts.ValidHeaderFieldName(k) {
					return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "transport.headers: %q is not a valid header name", k)
				}
				if !httpguts.ValidHeaderFieldValue(v) {
					// The value is a secret: never quoted.
					return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "transport.headers: the value of %q contains a line break or control character", k)
				}
				o.Transport.Headers.Set(k, v)
			}
		}
	}
	if c := req.Client; c != nil {
		o.Client.ProtocolVersion = c.ProtocolVersion
	}
	if rr := req.Retry; rr != nil {
		o.Retry = &mcpclient.RetryOptions{MaxAttempts: rr.MaxAttempts,
			BaseDelay:          time.Duration(rr.BaseDelayMS) * time.Millisecond,
			MaxDelay:           time.Duration(rr.MaxDelayMS) * time.Millisecond,
			BackgroundMaxDelay: time.Duration(rr.BackgroundMaxDelayMS) * time.Millisecond,
			DisableBackground:  rr.DisableBackground}
	}
	return o, nil
}

// commandOptions is options for a stdio server.
func commandOptions(req *api.AddRequest, o agent.AddOptions) (agent.AddOptions, *api.APIError) {
	switch {
	case req.URL != "":
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "both url and command; a server has one of them")
	case req.Transport != nil && req.Transport.Type != "" && req.Transport.Type != string(mcpclient.TransportStdio):
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "transport.type %q is not for a command", req.Transport.Type)
	case req.Transport != nil && len(req.Transport.Headers) > 0:
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "transport.headers are for a URL; give a command env instead")
	case strings.ContainsRune(req.Command, 0) || strings.ContainsRune(req.Cwd, 0):
		return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "command and cwd must not contain NUL")
	}
	for _, a := range req.Args {
		if strings.ContainsRune(a, 0) {
			return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "args must not contain NUL")
		}
	}
	for k, v := range req.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			// The value is a secret: never quoted.
			return o, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "env: %q is not a valid variable name, or its value contains NUL", k)
		}
	}
	o.Command = &agent.Command{Path: req.Command, Args: req.Args, Env: req.Env, Dir: req.Cwd}
	if rr := req.Retry; rr != nil {
		o.Retry = &mcpclient.RetryOptions{MaxAttempts: rr.MaxAttempts,
			BaseDelay:          time.Duration(rr.BaseDelayMS) * time.Millisecond,
			MaxDelay:           time.Duration(rr.MaxDelayMS) * time.Millisecond,
			BackgroundMaxDelay: time.Duration(rr.BackgroundMaxDelayMS) * time.Millisecond,
			DisableBackground:  rr.DisableBackground}
	}
	if c := req.Client; c != nil {
		o.Client.ProtocolVersion = c.ProtocolVersion
	}
	return o, nil
}

func (s *Server) addServer(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	// A blocked URL's error ends with how the operator allows it.
	writeError := func(w http.ResponseWriter, aerr *api.APIError) {
		if aerr.Code == api.CodeBlockedURL {
			aerr.Message += s.opts.BlockedURLHint
		}
		writeError(w, aerr)
	}
	var req api.AddRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.Command != "" {
		if aerr := s.checkStdio(r); aerr != nil {
			writeError(w, aerr)
			return
		}
	}
	opts, aerr := addOptions(&req)
	if aerr != nil {
		// The SSRF guard judges the host before the scheme, as netguard
		// documents: ftp://10.0.0.1/ is a blocked URL, not an unsupported one.
		var blocked *netguard.BlockedError
		if aerr.Code == api.CodeInvalidURL && errors.As(a.CheckURL(req.URL), &blocked) && blocked.Host != "" {
			aerr = addError(blocked)
		}
		writeError(w, aerr)
		return
	}
	if opts.CallbackHost == "" && s.agentO.CallbackHost == "" && opts.Command == nil {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		opts.CallbackHost = scheme + "://" + r.Host
	}
	if err := a.CheckAdd(req.Name, req.URL, &opts); err != nil {
		writeError(w, addError(err))
		return
	}
	before := a.MCPServers().Servers
	start := time.Now()
	sameID, same := storedID(a, &req) // this very server, already there
	res, err := a.AddMCPServer(r.Context(), req.Name, req.URL, &opts)
	if err == nil {
		s.logger.Info("mcp server added", "agent", a.Namespace(), "server", req.Name, "id", res.ID, "state", res.State, "ms", time.Since(start).Milliseconds())
	}
	if err != nil {
		var named *agent.NameInUseError
		switch {
		case errors.Is(err, agent.ErrIDInUse), errors.As(err, &named), errors.Is(err, agent.ErrNotMCPEndpoint):
			writeError(w, addError(err))
			return
		case errors.Is(err, agent.ErrNotSaved):
			writeError(w, notSaved(req.Name, err))
			return
		}
		// The checks passed, so the server was stored: the connection
		// failed. It stays stored and is retried on restart.
		if id, ok := storedID(a, &req); ok {
			s.logger.Warn("mcp server added; connecting it failed", "agent", a.Namespace(), "server", req.Name, "id", id, "ms", time.Since(start).Milliseconds(), "error", err)
			writeError(w, connectFailed(a, id, err, "it is saved and retried in the background"))
			return
		}
		writeError(w, s.unavailableOr(r.Context(), addError(err)))
		return
	}
	status := http.StatusOK
	_, existed := before[res.ID]
	if req.Replace {
		existed = same && sameID == res.ID // not the one it replaced
	}
	if !existed {
		status = http.StatusCreated
	}
	writeJSON(w, status, res)
}

// storedID finds the id under which the server of req was stored.
func storedID(a *agent.Agent, req *api.AddRequest) (string, bool) {
	servers := a.MCPServers().Servers
	if req.ID != "" {
		id := agent.NormalizeServerID(req.ID)
		_, ok := servers[id]
		return id, ok
	}
	if req.Command != "" {
		cmd := append([]string{req.Command}, req.Args...)
		for id, srv := range servers {
			if srv.Name == req.Name && slices.Equal(srv.Command, cmd) && srv.Cwd == req.Cwd {
				return id, true
			}
		}
		return "", false
	}
	normalized, err := agent.NormalizeURL(req.URL)
	if err != nil {
		return "", false
	}
	u, err := url.Parse(normalized)
	if err != nil {
		return "", false
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	for id, srv := range servers {
		if srv.Name == req.Name && agent.SameServerURL(srv.ServerURL, u.String()) {
			return id, true
		}
	}
	return "", false
}

func (s *Server) removeServer(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	id := r.PathValue("id")
	srv, ok := a.Server(id)
	if !ok {
		writeError(w, unknownServer(a, id))
		return
	}
	start := time.Now()
	err := a.RemoveMCPServer(r.Context(), id)
	if _, still := a.Server(id); still {
		// The store refused the delete: the server is as it was (stored,
		// connected), as the message says.
		if errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrUnavailable) {
			writeError(w, addError(err)) // owner_moved, unavailable
			return
		}
		writeError(w, s.unavailableOr(r.Context(), apiErrorf(http.StatusInternalServerError, api.CodeInternal, "removing MCP server %s: %v", serverLabel(a, id), err)))
		return
	}
	if err != nil {
		// Removed, but closing its connection reported an error.
		s.logger.Info("mcp server removed; closing its connection failed", "agent", a.Namespace(), "server", id, "error", err)
	}
	s.logger.Info("mcp server removed", "agent", a.Namespace(), "server", srv.Name, "id", id, "ms", time.Since(start).Milliseconds())
	w.WriteHeader(http.StatusNoContent)
}

// serverLogs is GET .../servers/{id}/logs: the server's last log messages.
func (s *Server) serverLogs(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	id := r.PathValue("id")
	logs, ok := a.ServerLogs(id)
	if !ok {
		writeError(w, unknownServer(a, id))
		return
	}
	writeJSON(w, http.StatusOK, serverLogsOf(id, logs))
}

// agentLogs is GET .../logs: the last log messages of every server of the
// agent, in one answer (the dashboard's log panel: asking server by server
// races a remove into a 404).
func (s *Server) agentLogs(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	byID := a.Logs()
	out := api.Logs{Servers: make([]api.ServerLogs, 0, len(byID))}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out.Servers = append(out.Servers, serverLogsOf(id, byID[id]))
	}
	writeJSON(w, http.StatusOK, out)
}

// serverLogsOf is server id's log messages on the wire.
func serverLogsOf(id string, logs []mcpclient.ServerLog) api.ServerLogs {
	out := api.ServerLogs{ServerID: id, Logs: make([]api.ServerLog, len(logs))}
	for i, l := range logs {
		out.Logs[i] = api.ServerLog(l)
	}
	return out
}

// reconnectServer is POST .../servers/{id}/reconnect: it connects the
// server again at once (agent.Agent.Reconnect), whatever its state, within
// Options.CallTimeout, keeping its OAuth grant. The answer is the
// AddResult (ready, or authenticating with the URL to visit); a server
// still unreachable is connect_failed, and keeps being retried in the
// background.
func (s *Server) reconnectServer(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	id := r.PathValue("id")
	if _, ok := a.Server(id); !ok {
		writeError(w, unknownServer(a, id))
		return
	}
	ctx, cancel, limit, aerr := s.callContext(r, 0)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	defer cancel()
	res, err := a.Reconnect(ctx, id)
	if err != nil {
		var aerr *api.APIError
		switch {
		case context.Cause(ctx) == errCallTimeout:
			aerr = apiErrorf(http.StatusGatewayTimeout, api.CodeTimeout, "reconnecting MCP server %s took longer than %v; it keeps being retried in the background", serverLabel(a, id), limit)
		case errors.Is(err, mcpclient.ErrClosed):
			aerr = apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the agent is closing")
		default:
			aerr = connectFailed(a, id, err, "it keeps being retried in the background")
		}
		aerr.ServerID = id
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// filter parses the seed's filter from the query: serverId, serverName and
// state, each repeatable. It selects only the agent's stored servers; ok
// is false when it selects none.
func filter(q url.Values, stored map[string]agent.MCPServer) (f mcpclient.Filter, ok bool, aerr *api.APIError) {
	for k := range q {
		switch k {
		case "serverId", "serverName", "state":
		default:
			return f, false, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "unknown query parameter %q (want serverId, serverName or state)", k)
		}
	}
	for _, st := range q["state"] {
		switch mcpclient.State(st) {
		case mcpclient.StateAuthenticating, mcpclient.StateConnecting, mcpclient.StateConnected,
			mcpclient.StateDiscovering, mcpclient.StateReady, mcpclient.StateFailed, mcpclient.StateNotConnected:
			f.State = append(f.State, mcpclient.State(st))
		default:
			return f, false, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "unknown state %q", st)
		}
	}
	f.ServerName = q["serverName"]
	ids := q["serverId"]
	if len(ids) == 0 {
		for id := range stored {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if _, ok := stored[id]; ok {
			f.ServerID = append(f.ServerID, id)
		}
	}
	return f, len(f.ServerID) > 0, nil
}

// restoreWait bounds how long a catalog list waits for the servers of an
// agent it woke to connect.
const restoreWait = 10 * time.Second

// listCatalog serves one catalog list under key.
func listCatalog[T any](w http.ResponseWriter, r *http.Request, a *agent.Agent, key string, list func(mcpclient.Filter) []T) {
	f, ok, aerr := filter(r.URL.Query(), a.MCPServers().Servers)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	items := []T{}
	if ok {
		// Right after a wake, the servers' catalogs come back with their
		// first connection: wait for it (bounded) rather than list them
		// empty.
		ctx, cancel := context.WithTimeout(r.Context(), restoreWait)
		a.WaitRestored(ctx, f.ServerID...)
		cancel()
		items = append(items, list(f)...)
	}
	writeJSON(w, http.StatusOK, map[string][]T{key: items})
}

func (s *Server) listTools(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	listCatalog(w, r, a, "tools", a.ListTools)
}

func (s *Server) listPrompts(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	listCatalog(w, r, a, "prompts", a.ListPrompts)
}

func (s *Server) listResources(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	listCatalog(w, r, a, "resources", a.ListResources)
}

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	listCatalog(w, r, a, "resourceTemplates", a.ListResourceTemplates)
}

// errCallTimeout is the cause of a call's context when its bound passed.
var errCallTimeout = errors.New("the call's time limit passed")

// callContext bounds a call on an MCP server by the request's timeoutMs,
// else Options.CallTimeout. The call also ends when the HTTP client goes
// away (the request's context); either way the Manager cancels it on the
// MCP server. It returns the bound (zero for none).
func (s *Server) callContext(r *http.Request, timeoutMS int64) (context.Context, context.CancelFunc, time.Duration, *api.APIError) {
	d := s.opts.CallTimeout
	switch {
	case timeoutMS < 0:
		return nil, nil, 0, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "timeoutMs must not be negative")
	case timeoutMS > api.MaxCallTimeout.Milliseconds():
		return nil, nil, 0, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "timeoutMs is larger than %d (%v)", api.MaxCallTimeout.Milliseconds(), api.MaxCallTimeout)
	case timeoutMS > 0:
		d = time.Duration(timeoutMS) * time.Millisecond
	}
	rctx := agent.WithCaller(r.Context(), policy.API) // the policy's caller
	if d < 0 {
		ctx, cancel := context.WithCancel(rctx)
		return ctx, cancel, 0, nil
	}
	ctx, cancel := context.WithTimeoutCause(rctx, d, errCallTimeout)
	return ctx, cancel, d, nil
}

// callFailed maps the error of a call bounded by callContext.
func (s *Server) callFailed(ctx context.Context, r *http.Request, a *agent.Agent, id, what string, limit time.Duration, err error) *api.APIError {
	switch {
	case context.Cause(ctx) == errCallTimeout:
		aerr := apiErrorf(http.StatusGatewayTimeout, api.CodeTimeout,
			"%s on MCP server %s took longer than %v (timeoutMs, or the server's default); it was cancelled on the MCP server", what, serverLabel(a, id), limit)
		aerr.ServerID = id
		return aerr
	case r.Context().Err() != nil:
		s.logger.Info("call cancelled: its HTTP client went away", "agent", a.Namespace(), "server", id, "call", what)
	}
	return callError(a, id, what, err)
}

func (s *Server) callTool(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	id := r.PathValue("id")
	var req api.CallToolRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.Name == "" {
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "name is required"))
		return
	}
	args := json.RawMessage(`{}`)
	if len(req.Arguments) > 0 && string(req.Arguments) != "null" {
		var obj map[string]any
		if json.Unmarshal(req.Arguments, &obj) != nil {
			writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "arguments must be a JSON object"))
			return
		}
		args = req.Arguments
	}
	srv, ok := a.Server(id)
	if !ok {
		writeError(w, unknownServer(a, id))
		return
	}
	if req.Approval == "" && policyRefused(w, a, id, req.Name) { // policy.go
		return
	}
	if pinRefused(w, r, a, id, req.Name) { // pins.go
		return
	}
	ctx, cancel, limit, aerr := s.callContext(r, req.TimeoutMS)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	defer cancel()
	if req.Approval != "" {
		ctx = agent.WithApproval(ctx, req.Approval)
	}
	// A ready server's catalog is known: a tool it does not list is
	// refused here. Any other server is left to the Manager, which
	// reconnects it or says why it cannot.
	if srv.State == string(mcpclient.StateReady) {
		var names []string
		found := false
		for _, t := range a.ListTools(mcpclient.Filter{ServerID: []string{id}}) {
			names = append(names, t.Name)
			found = found || t.Name == req.Name
		}
		if !found {
			aerr := apiErrorf(http.StatusNotFound, api.CodeUnknownTool, "MCP server %s has no tool %q (it has: %s)", serverLabel(a, id), req.Name, list(names))
			aerr.ServerID = id
			writeError(w, aerr)
			return
		}
	}
	if wantsEvents(r) {
		s.streamCall(ctx, w, r, a, id, req.Name, args, limit)
		return
	}
	res, err := a.CallTool(ctx, id, req.Name, args, nil)
	if approvalAccepted(w, err) { // 202: it waits for approval (policy.go)
		return
	}
	if err != nil {
		writeError(w, s.callFailed(ctx, r, a, id, fmt.Sprintf("tools/call %q", req.Name), limit, err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// list shows at most 20 names.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	const maxNames = 20
	s := strings.Join(names[:min(len(names), maxNames)], ", ")
	if len(names) > maxNames {
		s += fmt.Sprintf(", and %d more", len(names)-maxNames)
	}
	return s
}

func (s *Server) readResource(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	id := r.PathValue("id")
	var req api.ReadResourceRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.URI == "" {
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "uri is required"))
		return
	}
	if _, ok := a.Server(id); !ok {
		writeError(w, unknownServer(a, id))
		return
	}
	ctx, cancel, limit, aerr := s.callContext(r, req.TimeoutMS)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	defer cancel()
	res, err := a.ReadResource(ctx, id, req.URI)
	if err != nil {
		writeError(w, s.callFailed(ctx, r, a, id, fmt.Sprintf("resources/read %q", req.URI), limit, err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) getPrompt(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	id := r.PathValue("id")
	var req api.GetPromptRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.Name == "" {
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "name is required"))
		return
	}
	if _, ok := a.Server(id); !ok {
		writeError(w, unknownServer(a, id))
		return
	}
	ctx, cancel, limit, aerr := s.callContext(r, req.TimeoutMS)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	defer cancel()
	res, err := a.GetPrompt(ctx, id, req.Name, req.Arguments)
	if err != nil {
		writeError(w, s.callFailed(ctx, r, a, id, fmt.Sprintf("prompts/get %q", req.Name), limit, err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// decodeBody reads a JSON request body into v: application/json, at most
// maxBody bytes, one value, no unknown fields.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) *api.APIError {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return apiErrorf(http.StatusUnsupportedMediaType, api.CodeUnsupportedMediaType, "the body must be JSON, with Content-Type: application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return apiErrorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "the body is larger than %d bytes", maxBody)
		}
		if errors.Is(err, io.EOF) {
			return apiErrorf(http.StatusBadRequest, api.CodeInvalidJSON, "the body is empty; want a JSON object")
		}
		return apiErrorf(http.StatusBadRequest, api.CodeInvalidJSON, "invalid JSON body: %v", err)
	}
	if dec.More() {
		return apiErrorf(http.StatusBadRequest, api.CodeInvalidJSON, "invalid JSON body: more than one value")
	}
	return nil
}
