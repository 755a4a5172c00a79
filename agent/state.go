package agent

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/explain"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPServersState is the seed's MCPServersState: every stored server by id,
// and the catalogs of the connected ones, each item tagged with its server
// id. It is what dashboards receive on every change (onMcpUpdate).
type MCPServersState struct {
	Servers map[string]MCPServer `json:"servers"`
	// Order lists the ids of Servers in the order every view shows them
	// (the CLI, the API, the dashboard): see [ServerOrder].
	Order             []string                     `json:"order"`
	Tools             []mcpclient.Tool             `json:"tools"`
	Prompts           []mcpclient.Prompt           `json:"prompts"`
	Resources         []mcpclient.Resource         `json:"resources"`
	ResourceTemplates []mcpclient.ResourceTemplate `json:"resourceTemplates"`
	// Pins are the tools whose pins need a look (changed, new, rejected
	// or removed), as Agent.Pins lists them; absent when none does.
	Pins []ToolPin `json:"pins,omitempty"`
}

// MCPServer is one server in MCPServersState, in the seed's shape. Nothing
// in it is secret: the URL has no query or userinfo, headers are absent,
// and text from servers is sanitised.
type MCPServer struct {
	Name      string  `json:"name"`
	ServerURL string  `json:"server_url"`
	AuthURL   *string `json:"auth_url"`
	State     string  `json:"state"`
	// Error is the full detail of the last failure (the whole error
	// chain, sanitised); ErrorSummary says in a few words what failed
	// (see [explain.Summary]). Both are set together.
	Error        *string                 `json:"error"`
	ErrorSummary *string                 `json:"error_summary,omitempty"`
	Instructions *string                 `json:"instructions"`
	Capabilities *mcp.ServerCapabilities `json:"capabilities"`
	// Transport and ProtocolVersion say how the agent reaches the server.
	Transport       string `json:"transport,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// SessionID is the current (or last) streamable HTTP session's id
	// (2025-11-25 and older; 2026-07-28 has no sessions), and ServerInfo
	// the implementation the server named in its handshake.
	SessionID  string              `json:"sessionId,omitempty"`
	ServerInfo *mcp.Implementation `json:"serverInfo,omitempty"`
	// NextRetryAt is when the next connection attempt of a failed server
	// is due (mcpclient.ServerInfo.NextRetryAt); nil when none waits.
	NextRetryAt *time.Time `json:"nextRetryAt,omitempty"`
	// KeepAwake is set for a server added with AddOptions.KeepAwake: its
	// agent is never hibernated.
	KeepAwake bool `json:"keepAwake,omitempty"`
	// CatalogStale is set while the server's lists are those stored
	// before the agent slept, which the server has not listed again yet.
	CatalogStale bool `json:"catalogStale,omitempty"`
	// ToolBytes is the size of the JSON of the server's tool definitions
	// (mcpclient.Manager.ToolsSize), and ToolTokens its estimate in tokens
	// (aitools.EstimateTokens): what offering all its tools costs a model's
	// context on every turn.
	ToolBytes  int `json:"toolBytes"`
	ToolTokens int `json:"toolTokens"`
	// Command is a stdio server's program and arguments (ServerURL is
	// then ""), Cwd its working directory, and EnvNames the names of the
	// environment variables it is given, sorted; their values are never
	// shown.
	Command  []string `json:"command,omitempty"`
	Cwd      string   `json:"cwd,omitempty"`
	EnvNames []string `json:"env_names,omitempty"`
}

// MCPServers returns the state of the agent's servers (the seed's
// getMcpServers). A stored server without a connection shows
// authenticating when an authorisation is pending, else not-connected.
func (a *Agent) MCPServers() MCPServersState {
	a.mu.Lock()
	ids := append([]string(nil), a.order...)
	rows := make(map[string]MCPServer, len(ids))
	for _, id := range ids {
		rows[id] = storedServer(a.rows[id])
	}
	dormant := maps.Clone(a.dormant)
	a.mu.Unlock()
	for _, info := range a.m.Servers() {
		if s, ok := rows[info.ID]; ok && !dormant[info.ID] { // else registered with the Manager directly, or dormant
			rows[info.ID] = withInfo(s, info)
		}
	}
	for id, s := range rows {
		rows[id] = a.withSize(id, s)
	}
	all := mcpclient.Filter{}
	return MCPServersState{
		Servers:           rows,
		Order:             ServerOrder(rows),
		Tools:             a.ListTools(all),
		Prompts:           a.ListPrompts(all),
		Resources:         a.ListResources(all),
		ResourceTemplates: a.ListResourceTemplates(all),
		Pins:              a.pinAlerts(),
	}
}

// Server returns one stored server as MCPServers shows it, without
// listing any catalog.
func (a *Agent) Server(id string) (MCPServer, bool) {
	a.mu.Lock()
	row, ok := a.rows[id]
	dormant := a.dormant[id]
	a.mu.Unlock()
	if !ok {
		return MCPServer{}, false
	}
	s := storedServer(row)
	if info, live := a.m.Server(id); live && !dormant {
		s = withInfo(s, info)
	}
	return a.withSize(id, s), true
}

// withSize adds the size of the server's tool definitions.
func (a *Agent) withSize(id string, s MCPServer) MCPServer {
	if n, ok := a.m.ToolsSize(id); ok {
		s.ToolBytes, s.ToolTokens = n, aitools.EstimateTokens(n)
	}
	return s
}

// storedServer is a server as its row alone describes it.
func storedServer(row store.Server) MCPServer {
	s := MCPServer{Name: row.Name, State: string(mcpclient.StateNotConnected), KeepAwake: row.KeepAwake}
	if c := row.Options.Command; c != nil {
		s.Command = append([]string{c.Path}, c.Args...)
		s.Cwd = c.Dir
		s.EnvNames = slices.Sorted(maps.Keys(c.Env))
	} else {
		s.ServerURL = redact(row.URL)
	}
	if row.AuthURL != "" {
		s.AuthURL = ptr(row.AuthURL)
		s.State = string(mcpclient.StateAuthenticating)
	}
	return s
}

// withInfo adds what the Manager knows of a server's connection.
func withInfo(s MCPServer, info mcpclient.ServerInfo) MCPServer {
	s.State = string(info.State)
	s.Transport = string(info.Transport)
	s.ProtocolVersion = info.ProtocolVersion
	if info.AuthURL != "" {
		s.AuthURL = ptr(info.AuthURL)
	}
	if info.Error != nil {
		s.Error = ptr(netguard.Sanitize(info.Error.Error()))
		s.ErrorSummary = ptr(netguard.Sanitize(explain.Summary(info.Error)))
	}
	if info.Instructions != "" {
		s.Instructions = ptr(netguard.Sanitize(info.Instructions))
	}
	s.Capabilities = info.Capabilities
	s.SessionID = netguard.Sanitize(info.SessionID)
	if si := info.ServerInfo; si != nil {
		s.ServerInfo = &mcp.Implementation{Name: netguard.Sanitize(si.Name), Title: netguard.Sanitize(si.Title), Version: netguard.Sanitize(si.Version)}
	}
	if !info.NextRetryAt.IsZero() {
		t := info.NextRetryAt.UTC()
		s.NextRetryAt = &t
	}
	s.CatalogStale = info.CatalogStale
	return s
}

// ServerOrder returns the ids of servers in the one order that the CLI,
// the API and the dashboard show them in: by name without regard to case,
// then by name, then by id (byte-wise comparisons, so that every language
// sorts alike).
func ServerOrder(servers map[string]MCPServer) []string {
	ids := make([]string, 0, len(servers))
	for id := range servers {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		na, nb := servers[a].Name, servers[b].Name
		return cmp.Or(
			strings.Compare(strings.ToLower(na), strings.ToLower(nb)),
			strings.Compare(na, nb),
			strings.Compare(a, b),
		)
	})
	return ids
}

func ptr(s string) *string { return &s }

// orEmpty makes nil lists encode as [].
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
