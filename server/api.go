package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/server/internal/failure"
	"github.com/agentmcp/agentmcp/server/internal/pages"
	"github.com/agentmcp/agentmcp/server/internal/reply"
	"github.com/agentmcp/agentmcp/store"
)

// maxBody caps a request body.
const maxBody = 1 << 20

// routes returns the server's routes. Paths are registered without
// methods: agentRoute answers a wrong method with a JSON 405.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.index)
	mux.Handle("/static/", pages.Static())
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
	mux.Handle("/agents/{class}/{name}/reload", s.agentRoute(methods{http.MethodPost: handle(s, s.reload)}))
	mux.Handle("/agents/{class}/{name}/servers", s.stdioGate(s.agentRoute(methods{http.MethodGet: handle(s, s.listServers), http.MethodPost: s.addServer}, http.MethodPost)))
	mux.Handle("/agents/{class}/{name}/servers/{id}", s.agentRoute(methods{http.MethodGet: handle(s, s.getServer), http.MethodDelete: handle(s, s.removeServer)}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/reconnect", s.agentRoute(methods{http.MethodPost: handle(s, s.reconnectServer)}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/logs", s.agentRoute(methods{http.MethodGet: handle(s, s.serverLogs)}))
	mux.Handle("/agents/{class}/{name}/logs", s.agentRoute(methods{http.MethodGet: handle(s, s.agentLogs)}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/tools/call", s.agentRoute(methods{http.MethodPost: s.callTool}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/resources/read", s.agentRoute(methods{http.MethodPost: handle(s, s.readResource)}))
	mux.Handle("/agents/{class}/{name}/servers/{id}/prompts/get", s.agentRoute(methods{http.MethodPost: handle(s, s.getPrompt)}))
	mux.Handle("/agents/{class}/{name}/tools", s.agentRoute(methods{http.MethodGet: s.listTools}))
	mux.Handle("/agents/{class}/{name}/prompts", s.agentRoute(methods{http.MethodGet: catalog("prompts", (*agent.Agent).ListPrompts)}))
	mux.Handle("/agents/{class}/{name}/resources", s.agentRoute(methods{http.MethodGet: catalog("resources", (*agent.Agent).ListResources)}))
	mux.Handle("/agents/{class}/{name}/resource-templates", s.agentRoute(methods{http.MethodGet: catalog("resourceTemplates", (*agent.Agent).ListResourceTemplates)}))
	mux.Handle("/agents/{class}/{name}/elicitations", s.agentRoute(methods{http.MethodGet: handle(s, s.listElicitations)}))
	mux.Handle("/agents/{class}/{name}/elicitations/{id}", s.agentRoute(methods{http.MethodPost: handle(s, s.answerElicitation)}))
	mux.Handle("/agents/{class}/{name}/stats", s.agentRoute(methods{http.MethodGet: handle(s, s.stats)}))
	mux.Handle("/agents/{class}/{name}/tasks", s.agentRoute(methods{http.MethodGet: handle(s, s.listTasks)}))
	mux.Handle("/agents/{class}/{name}/tasks/{id}", s.agentRoute(methods{http.MethodGet: handle(s, s.getTask)}))
	mux.Handle("/agents/{class}/{name}/tasks/{id}/cancel", s.agentRoute(methods{http.MethodPost: handle(s, s.cancelTask)}))
	mux.HandleFunc("/agents/{class}/{name}/callback", s.callback)
	mux.HandleFunc(mcpRoute, s.mcp)
	s.exposureRoutes(mux)
	s.policyRoutes(mux)      // policy.go: .../policy, .../approvals, .../approvals/{approval}
	s.pinRoutes(mux)         // pins.go: .../pins, .../pins/{server}/{tool}
	s.policyToolsRoutes(mux) // policytools.go: .../policy/tools, .../policy/presets/{preset}
	s.appsRoutes(mux)        // apps.go: .../servers/{id}/view
	s.auditRoutes(mux)       // audit.go: .../audit
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

// noBody is the request of a route that takes no body (handle).
type noBody struct{}

// noContent is the answer of a route that answers 204 with no body
// (handle).
type noContent struct{}

// handle is the skeleton of an agent's JSON route: the request's body
// decoded into a Req (decodeBody; none for noBody), fn's answer written as
// JSON with 200 (204 for noContent), its error as the *api.APIError it is,
// or else as internal (apiError). A new route is its fn:
//
//	func (s *Server) thing(r *http.Request, a *agent.Agent, req *api.ThingRequest) (api.Thing, error)
//
// registered as methods{http.MethodPost: handle(s, s.thing)}.
func handle[Req, Res any](s *Server, fn func(r *http.Request, a *agent.Agent, req *Req) (Res, error)) agentHandler {
	return func(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
		var req Req
		if _, none := any(&req).(*noBody); !none {
			if aerr := decodeBody(w, r, &req); aerr != nil {
				writeError(w, aerr)
				return
			}
		}
		res, err := fn(r, a, &req)
		if err != nil {
			writeError(w, s.apiError(r.Context(), err))
			return
		}
		if _, none := any(res).(noContent); none {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
}

// apiError is err as an API error: the *api.APIError it is, else 500
// internal (503 unavailable when the server is not ready: unavailableOr).
func (s *Server) apiError(ctx context.Context, err error) *api.APIError {
	var aerr *api.APIError
	if errors.As(err, &aerr) {
		return aerr
	}
	return s.unavailableOr(ctx, apiErrorf(http.StatusInternalServerError, api.CodeInternal, "%v", err))
}

// methodIs reports whether r's method is method (GET takes HEAD too), and
// answers 405 when it is not.
func methodIs(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, apiErrorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s is not allowed here (allowed: %s)", r.Method, method))
	return false
}

// openError maps an agentEntry error to an API error.
func (s *Server) openError(err error) *api.APIError {
	var aerr *api.APIError
	switch {
	case errors.As(err, &aerr):
		return aerr
	case errors.Is(err, store.ErrUnavailable):
		return failure.Store(err)
	case errors.Is(err, errClosed):
		return apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the server is shutting down")
	}
	return apiErrorf(http.StatusInternalServerError, api.CodeInternal, "%v", err)
}

// index serves the dashboard page at / (package pages).
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	s.pages.Index(w, r, s.sec, pages.IndexData{DefaultAgent: s.opts.DefaultAgent, AllowStdioServers: s.opts.AllowStdioServers && s.sec.HasToken()})
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
	if !methodIs(w, r, http.MethodGet) {
		return
	}
	agents, more, err := s.knownAgents(r.Context(), maxAgentsListed)
	if aerr := failure.Store(err); aerr != nil {
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
	if !methodIs(w, r, http.MethodPost) {
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
func (s *Server) reload(r *http.Request, a *agent.Agent, _ *noBody) (api.ReloadResult, error) {
	added, removed, err := a.Reload(r.Context())
	return api.ReloadResult{Added: orEmpty(added), Removed: orEmpty(removed)}, err
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

// serverList is GET .../servers.
type serverList struct {
	Servers map[string]agent.MCPServer `json:"servers"`
	Order   []string                   `json:"order"` // agent.ServerOrder
}

func (s *Server) listServers(r *http.Request, a *agent.Agent, _ *noBody) (serverList, error) {
	st := a.MCPServers()
	return serverList{st.Servers, st.Order}, nil
}

func (s *Server) getServer(r *http.Request, a *agent.Agent, _ *noBody) (api.ServerState, error) {
	id := r.PathValue("id")
	st, ok := a.ServerState(id)
	if !ok {
		return st, unknownServer(a, id)
	}
	return st, nil
}

func unknownServer(a *agent.Agent, id string) *api.APIError {
	err := apiErrorf(http.StatusNotFound, api.CodeUnknownServer, "agent %s has no MCP server %q", a.Namespace(), id)
	err.ServerID = id
	return err
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
	opts, aerr := agent.AddOptionsFor(&req)
	if aerr != nil {
		// The SSRF guard judges the host before the scheme, as netguard
		// documents: ftp://10.0.0.1/ is a blocked URL, not an unsupported one.
		var blocked *netguard.BlockedError
		if aerr.Code == api.CodeInvalidURL && errors.As(a.CheckURL(req.URL), &blocked) && blocked.Host != "" {
			aerr = failure.Add(blocked)
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
		writeError(w, failure.Add(err))
		return
	}
	before := a.MCPServers().Servers
	start := time.Now()
	sameID, same := a.StoredID(&req) // this very server, already there
	res, err := a.AddMCPServer(r.Context(), req.Name, req.URL, &opts)
	if err == nil {
		s.logger.Info("mcp server added", "agent", a.Namespace(), "server", req.Name, "id", res.ID, "state", res.State, "ms", time.Since(start).Milliseconds())
	}
	if err != nil {
		var named *agent.NameInUseError
		switch {
		case errors.Is(err, agent.ErrIDInUse), errors.As(err, &named), errors.Is(err, agent.ErrNotMCPEndpoint):
			writeError(w, failure.Add(err))
			return
		case errors.Is(err, agent.ErrNotSaved):
			writeError(w, failure.NotSaved(req.Name, err))
			return
		}
		// The checks passed, so the server was stored: the connection
		// failed. It stays stored and is retried on restart.
		if id, ok := a.StoredID(&req); ok {
			s.logger.Warn("mcp server added; connecting it failed", "agent", a.Namespace(), "server", req.Name, "id", id, "ms", time.Since(start).Milliseconds(), "error", err)
			writeError(w, failure.Connect(a, id, err, "it is saved and retried in the background"))
			return
		}
		writeError(w, s.unavailableOr(r.Context(), failure.Add(err)))
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

func (s *Server) removeServer(r *http.Request, a *agent.Agent, _ *noBody) (noContent, error) {
	id := r.PathValue("id")
	srv, ok := a.Server(id)
	if !ok {
		return noContent{}, unknownServer(a, id)
	}
	start := time.Now()
	err := a.RemoveMCPServer(r.Context(), id)
	if _, still := a.Server(id); still {
		// The store refused the delete: the server is as it was (stored,
		// connected), as the message says.
		if errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrUnavailable) {
			return noContent{}, failure.Add(err) // owner_moved, unavailable
		}
		return noContent{}, s.unavailableOr(r.Context(), apiErrorf(http.StatusInternalServerError, api.CodeInternal, "removing MCP server %s: %v", failure.Label(a, id), err))
	}
	if err != nil {
		// Removed, but closing its connection reported an error.
		s.logger.Info("mcp server removed; closing its connection failed", "agent", a.Namespace(), "server", id, "error", err)
	}
	s.logger.Info("mcp server removed", "agent", a.Namespace(), "server", srv.Name, "id", id, "ms", time.Since(start).Milliseconds())
	return noContent{}, nil
}

// serverLogs is GET .../servers/{id}/logs: the server's last log messages.
func (s *Server) serverLogs(r *http.Request, a *agent.Agent, _ *noBody) (api.ServerLogs, error) {
	id := r.PathValue("id")
	logs, ok := a.ServerLogs(id)
	if !ok {
		return api.ServerLogs{}, unknownServer(a, id)
	}
	return agent.ServerLogsAPI(id, logs), nil
}

// agentLogs is GET .../logs: the last log messages of every server of the
// agent, in one answer (the dashboard's log panel: asking server by server
// races a remove into a 404).
func (s *Server) agentLogs(r *http.Request, a *agent.Agent, _ *noBody) (api.Logs, error) {
	byID := a.Logs()
	out := api.Logs{Servers: make([]api.ServerLogs, 0, len(byID))}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out.Servers = append(out.Servers, agent.ServerLogsAPI(id, byID[id]))
	}
	return out, nil
}

// reconnectServer is POST .../servers/{id}/reconnect: it connects the
// server again at once (agent.Agent.Reconnect), whatever its state, within
// Options.CallTimeout, keeping its OAuth grant. The answer is the
// AddResult (ready, or authenticating with the URL to visit); a server
// still unreachable is connect_failed, and keeps being retried in the
// background.
func (s *Server) reconnectServer(r *http.Request, a *agent.Agent, _ *noBody) (agent.AddResult, error) {
	return callServer(s, r, a, "", 0, func(ctx context.Context, id string, limit time.Duration) (agent.AddResult, error) {
		res, err := a.Reconnect(ctx, id)
		if err == nil {
			return res, nil
		}
		var aerr *api.APIError
		switch {
		case context.Cause(ctx) == errCallTimeout:
			aerr = apiErrorf(http.StatusGatewayTimeout, api.CodeTimeout, "reconnecting MCP server %s took longer than %v; it keeps being retried in the background", failure.Label(a, id), limit)
		case errors.Is(err, mcpclient.ErrClosed):
			aerr = apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the agent is closing")
		default:
			aerr = failure.Connect(a, id, err, "it keeps being retried in the background")
		}
		aerr.ServerID = id
		return res, aerr
	})
}

// restoreWait bounds how long a catalog list waits for the servers of an
// agent it woke to connect.
const restoreWait = 10 * time.Second

// catalog is the route of one catalog list, answered under key.
func catalog[T any](key string, list func(*agent.Agent, mcpclient.Filter) []T) agentHandler {
	return func(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
		f, ok, aerr := a.APIFilter(r.URL.Query())
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		items := []T{}
		if ok {
			// Right after a wake, a server's catalog is its stored one (stale)
			// or, without one, comes back with its first connection: wait for
			// that (bounded) rather than list it empty.
			ctx, cancel := context.WithTimeout(r.Context(), restoreWait)
			a.WaitCatalogs(ctx, f.ServerID...)
			cancel()
			items = append(items, list(a, f)...)
		}
		writeJSON(w, http.StatusOK, map[string][]T{key: items})
	}
}

// listTools is GET .../tools: the catalog, or a search with ?q=
// (toolsearch.go).
func (s *Server) listTools(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	if r.URL.Query().Has("q") {
		s.searchTools(w, r, a)
		return
	}
	catalog("tools", (*agent.Agent).ListTools)(w, r, a)
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
	if aerr := pendingError(err); aerr != nil { // policy.go
		return aerr
	}
	switch {
	case context.Cause(ctx) == errCallTimeout:
		aerr := apiErrorf(http.StatusGatewayTimeout, api.CodeTimeout,
			"%s on MCP server %s took longer than %v (timeoutMs, or the server's default); it was cancelled on the MCP server", what, failure.Label(a, id), limit)
		aerr.ServerID = id
		return aerr
	case r.Context().Err() != nil:
		s.logger.Info("call cancelled: its HTTP client went away", "agent", a.Namespace(), "server", id, "call", what)
	}
	return failure.Call(a, id, what, err)
}

// callServer is the skeleton of a call on server {id} of a (a tool call,
// a resource read, a prompt get): the server known, call bounded by the
// request's timeoutMS (callContext), its error mapped by callFailed, which
// names the call what, unless it is an *api.APIError already.
func callServer[Res any](s *Server, r *http.Request, a *agent.Agent, what string, timeoutMS int64, call func(ctx context.Context, id string, limit time.Duration) (Res, error)) (res Res, err error) {
	id := r.PathValue("id")
	if _, ok := a.Server(id); !ok {
		return res, unknownServer(a, id)
	}
	ctx, cancel, limit, aerr := s.callContext(r, timeoutMS)
	if aerr != nil {
		return res, aerr
	}
	defer cancel()
	res, err = call(ctx, id, limit)
	if err != nil && !errors.As(err, &aerr) {
		return res, s.callFailed(ctx, r, a, id, what, limit, err)
	}
	return res, err
}

func (s *Server) callTool(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	var req api.CallToolRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.Name == "" {
		writeError(w, required("name"))
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
	// Once the call has begun, streamCall and answerToolCall (tasks.go:
	// a call that becomes a task may outlive the request) write the answer.
	answered := false
	_, err := callServer(s, r, a, fmt.Sprintf("tools/call %q", req.Name), req.TimeoutMS, func(ctx context.Context, id string, limit time.Duration) (*mcp.CallToolResult, error) {
		if req.Approval == "" && policyRefused(w, r, a, id, req.Name, args) { // policy.go
			answered = true
			return nil, nil
		}
		if pinRefused(w, r, a, id, req.Name, args) { // pins.go
			answered = true
			return nil, nil
		}
		if aerr := knownTool(a, id, req.Name); aerr != nil {
			return nil, aerr
		}
		if req.Approval != "" {
			ctx = agent.WithApproval(ctx, req.Approval)
		}
		answered = true
		if wantsEvents(r) {
			s.streamCall(ctx, w, r, a, id, req.Name, args, limit)
		} else {
			s.answerToolCall(ctx, w, r, a, id, req.Name, args, limit)
		}
		return nil, nil
	})
	if !answered && err != nil {
		writeError(w, s.apiError(r.Context(), err))
	}
}

// knownTool refuses a tool that the ready server id of a does not list. A
// server that is not ready is left to the Manager, which reconnects it or
// says why it cannot.
func knownTool(a *agent.Agent, id, name string) *api.APIError {
	if srv, _ := a.Server(id); srv.State != string(mcpclient.StateReady) {
		return nil
	}
	var names []string
	for _, t := range a.ListTools(mcpclient.Filter{ServerID: []string{id}}) {
		if t.Name == name {
			return nil
		}
		names = append(names, t.Name)
	}
	aerr := apiErrorf(http.StatusNotFound, api.CodeUnknownTool, "MCP server %s has no tool %q (it has: %s)", failure.Label(a, id), name, list(names))
	aerr.ServerID = id
	return aerr
}

// required is the error of a request without the field name.
func required(name string) *api.APIError {
	return apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "%s is required", name)
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

func (s *Server) readResource(r *http.Request, a *agent.Agent, req *api.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if req.URI == "" {
		return nil, required("uri")
	}
	return callServer(s, r, a, fmt.Sprintf("resources/read %q", req.URI), req.TimeoutMS, func(ctx context.Context, id string, _ time.Duration) (*mcp.ReadResourceResult, error) {
		return a.ReadResource(ctx, id, req.URI)
	})
}

func (s *Server) getPrompt(r *http.Request, a *agent.Agent, req *api.GetPromptRequest) (*mcp.GetPromptResult, error) {
	if req.Name == "" {
		return nil, required("name")
	}
	return callServer(s, r, a, fmt.Sprintf("prompts/get %q", req.Name), req.TimeoutMS, func(ctx context.Context, id string, _ time.Duration) (*mcp.GetPromptResult, error) {
		return a.GetPrompt(ctx, id, req.Name, req.Arguments)
	})
}

// decodeBody reads a JSON request body of at most maxBody bytes into v
// (reply.Decode).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) *api.APIError {
	return reply.Decode(w, r, v, maxBody)
}
