package agent

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// The agent's values as agentmcp serve's HTTP API shows them (package
// api's wire types), and an API request to add a server as AddOptions:
// what package server answers and what agentmcp answers without a server
// (--db), the same.

// AddOptionsFor turns req into AddOptions, checking what Agent.CheckAdd
// does not (api.AddRequest.Check: required fields, the URL's form, the
// transport type, header names and values), as POST .../servers does.
func AddOptionsFor(req *api.AddRequest) (AddOptions, *api.APIError) {
	o := AddOptions{ID: req.ID, CallbackHost: req.CallbackHost, CallbackPath: req.CallbackPath, AgentsPrefix: req.AgentsPrefix, KeepAwake: req.KeepAwake,
		IDFromName: true, UniqueName: true, Replace: req.Replace, RemoveIfFailed: true, KeepIfUnreachable: req.KeepIfUnreachable}
	if aerr := req.Check(); aerr != nil {
		return o, aerr
	}
	if req.Command != "" {
		o.Command = &Command{Path: req.Command, Args: req.Args, Env: req.Env, Dir: req.Cwd}
	} else if t := req.Transport; t != nil {
		o.Transport.Type = mcpclient.TransportType(t.Type)
		if len(t.Headers) > 0 {
			o.Transport.Headers = http.Header{}
			for k, v := range t.Headers {
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

// APIFilter parses the API's filter of a catalog list from its query:
// serverId, serverName and state, each repeatable (400 invalid_request for
// anything else). It selects only the agent's stored servers; ok is false
// when it selects none.
func (a *Agent) APIFilter(q url.Values) (f mcpclient.Filter, ok bool, aerr *api.APIError) {
	invalid := func(format string, args ...any) *api.APIError {
		return &api.APIError{Status: http.StatusBadRequest, Code: api.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
	}
	for k := range q {
		switch k {
		case "serverId", "serverName", "state":
		default:
			return f, false, invalid("unknown query parameter %q (want serverId, serverName or state)", k)
		}
	}
	for _, st := range q["state"] {
		switch mcpclient.State(st) {
		case mcpclient.StateAuthenticating, mcpclient.StateConnecting, mcpclient.StateConnected,
			mcpclient.StateDiscovering, mcpclient.StateReady, mcpclient.StateFailed, mcpclient.StateNotConnected:
			f.State = append(f.State, mcpclient.State(st))
		default:
			return f, false, invalid("unknown state %q", st)
		}
	}
	f.ServerName = q["serverName"]
	stored := a.MCPServers().Servers
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

// StoredID finds the id under which the server req adds is stored: its
// id, else a server of the same name and command, or name and URL.
func (a *Agent) StoredID(req *api.AddRequest) (string, bool) {
	servers := a.MCPServers().Servers
	if req.ID != "" {
		id := NormalizeServerID(req.ID)
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
	normalized, err := NormalizeURL(req.URL)
	if err != nil {
		return "", false
	}
	u, err := url.Parse(normalized)
	if err != nil {
		return "", false
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	for id, srv := range servers {
		if srv.Name == req.Name && SameServerURL(srv.ServerURL, u.String()) {
			return id, true
		}
	}
	return "", false
}

// ServerState returns server id as GET .../servers/{id} shows it, or
// false when a has no such server.
func (a *Agent) ServerState(id string) (api.ServerState, bool) {
	srv, ok := a.Server(id)
	if !ok {
		return api.ServerState{}, false
	}
	st := api.ServerState{ID: id, MCPServer: srv.API(), Session: api.SessionNone}
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

// API is srv in the API's shape: its JSON, as api.MCPServer reads it.
func (srv MCPServer) API() api.MCPServer {
	var out api.MCPServer
	if b, err := json.Marshal(srv); err == nil {
		json.Unmarshal(b, &out)
	}
	return out
}

// ServerLogsAPI is server id's log messages on the wire.
func ServerLogsAPI(id string, logs []mcpclient.ServerLog) api.ServerLogs {
	out := api.ServerLogs{ServerID: id, Logs: make([]api.ServerLog, len(logs))}
	for i, l := range logs {
		out.Logs[i] = api.ServerLog(l)
	}
	return out
}

// TaskAPI returns the API's view of a stored task (GET .../tasks); its
// result only when withResult (GET .../tasks/{id}). Messages are
// sanitised: they reach browsers.
func TaskAPI(t store.Task, withResult bool) api.Task {
	out := api.Task{
		ID: api.TaskID(t.ServerID, t.TaskID), ServerID: t.ServerID, TaskID: t.TaskID, Tool: t.Tool,
		Status: t.Status, StatusMessage: netguard.Sanitize(t.StatusMessage), Done: t.Done,
		Error: netguard.Sanitize(t.Error), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
	if !t.ServerCreatedAt.IsZero() {
		sc := t.ServerCreatedAt
		out.ServerCreatedAt = &sc
	}
	if withResult && t.Done && len(t.Result) > 0 {
		out.Result = t.Result
	}
	return out
}

// HandleTaskAPI is the API's view of the task of h, running, for when its
// stored record cannot be read.
func HandleTaskAPI(h *mcpclient.TaskHandle) api.Task {
	t := api.Task{ID: api.TaskID(h.ServerID, h.TaskID), ServerID: h.ServerID, TaskID: h.TaskID, Tool: h.Tool, Status: api.TaskWorking}
	if !h.CreatedAt.IsZero() {
		sc := h.CreatedAt
		t.ServerCreatedAt = &sc
	}
	return t
}

// TaskListAPI returns the list GET .../tasks answers for an agent's
// stored tasks: the running ones, then the ended ones, each most recent
// first, the ended ones cut at api.MaxTasksListed in all.
func TaskListAPI(tasks []store.Task) api.TaskList {
	tasks = slices.Clone(tasks)
	slices.SortStableFunc(tasks, func(x, y store.Task) int {
		if x.Done != y.Done {
			if x.Done {
				return 1
			}
			return -1
		}
		return cmp.Compare(y.CreatedAt.UnixNano(), x.CreatedAt.UnixNano())
	})
	list := api.TaskList{Tasks: []api.Task{}}
	for _, t := range tasks {
		if t.Done && len(list.Tasks) >= api.MaxTasksListed {
			list.More = true
			break
		}
		list.Tasks = append(list.Tasks, TaskAPI(t, false))
	}
	return list
}

// API is the approval on the wire.
func (ap Approval) API() api.Approval {
	out := api.Approval{ID: ap.ID, Server: ap.ServerID, Tool: ap.Tool, Arguments: ap.Arguments, Caller: string(ap.Caller),
		State: ap.State, RequestedAt: ap.RequestedAt, ExpiresAt: ap.ExpiresAt, Reason: ap.Reason, Remember: ap.Remember, Error: ap.Error,
		Code: ap.Code, DecidedBy: ap.DecidedBy}
	if !ap.StartedAt.IsZero() {
		t := ap.StartedAt.UTC().Truncate(time.Microsecond)
		out.StartedAt = &t
	}
	if len(out.Arguments) == 0 {
		out.Arguments = json.RawMessage(`{}`)
	}
	if !ap.DecidedAt.IsZero() {
		t := ap.DecidedAt.UTC().Truncate(time.Microsecond)
		out.DecidedAt = &t
	}
	if ap.Result != nil {
		out.Result, _ = json.Marshal(ap.Result)
	}
	return out
}

// API is the pin on the wire.
func (p ToolPin) API() api.Pin {
	out := api.Pin{Server: p.ServerID, Tool: p.Tool, State: p.State, Blocked: p.Blocked, Fingerprint: p.Fingerprint,
		Definition: p.Definition, SeenFingerprint: p.SeenFingerprint, Seen: p.Seen, PinnedAt: p.PinnedAt, ChangedAt: p.ChangedAt}
	for _, c := range p.Diff {
		out.Diff = append(out.Diff, api.PinChange{Field: c.Field, Old: c.Old, New: c.New})
	}
	return out
}

// PolicyToolsAPI is every tool of the agent's stored servers, those the
// policy denies included (ListTools leaves them out), with the policy's
// decision for each caller (Decide: the stored rules and, for the gateway,
// the exposure rules; not the Go hook).
func (a *Agent) PolicyToolsAPI() api.PolicyToolsResponse {
	tools := listStored(a, mcpclient.Filter{}, a.m.ListTools)
	callers := policy.Callers()
	out := api.PolicyToolsResponse{Tools: make([]api.PolicyTool, 0, len(tools))}
	for _, t := range tools {
		pt := api.PolicyTool{ServerID: t.ServerID, Name: t.Name, Decisions: make(map[string]api.PolicyDecision, len(callers))}
		for _, c := range callers {
			d := a.Decide(t.ServerID, t.Name, c)
			pt.Decisions[string(c)] = api.PolicyDecision{Action: string(d.Action), Rule: d.Rule, Rate: d.Rate.String(), Reason: d.Reason}
		}
		out.Tools = append(out.Tools, pt)
	}
	return out
}
