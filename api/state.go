package api

import (
	"encoding/json"
	"time"
)

// MCPServersState is an agent's state (the seed's MCPServersState): every
// stored server by id, and the catalogs of the connected ones, each item
// tagged with its server id. It is the answer of GET
// /agents/{class}/{name} and what the streams send on every change.
type MCPServersState struct {
	Servers map[string]MCPServer `json:"servers"`
	// Order lists the ids of Servers in the order every view shows them
	// (the CLI, the API, the dashboard).
	Order             []string           `json:"order"`
	Tools             []Tool             `json:"tools"`
	Prompts           []Prompt           `json:"prompts"`
	Resources         []Resource         `json:"resources"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	// Pins are the tools whose pins need a look (changed, new, rejected
	// or removed); absent when none does (pins.go).
	Pins []Pin `json:"pins,omitempty"`
}

// MCPServer is one server in MCPServersState, in the seed's shape. Nothing
// in it is secret: the URL has no query or userinfo, headers are absent,
// and text from servers is sanitised.
type MCPServer struct {
	Name      string  `json:"name"`
	ServerURL string  `json:"server_url"`
	AuthURL   *string `json:"auth_url"`
	// State is connecting, authenticating, connected, discovering, ready,
	// failed or not-connected.
	State string `json:"state"`
	// Error is the full detail of the last failure (the whole error
	// chain, sanitised); ErrorSummary says in a few words what failed.
	// Both are set together.
	Error        *string `json:"error"`
	ErrorSummary *string `json:"error_summary,omitempty"`
	Instructions *string `json:"instructions"`
	// Capabilities are the server's MCP capabilities (its handshake's
	// ServerCapabilities), null before its first handshake.
	Capabilities json.RawMessage `json:"capabilities"`
	// Transport and ProtocolVersion say how the agent reaches the server.
	Transport       string `json:"transport,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// SessionID is the current (or last) streamable HTTP session's id
	// (2025-11-25 and older; 2026-07-28 has no sessions), and ServerInfo
	// the implementation the server named in its handshake.
	SessionID  string          `json:"sessionId,omitempty"`
	ServerInfo *Implementation `json:"serverInfo,omitempty"`
	// NextRetryAt is when the next connection attempt of a failed server
	// is due; nil when none waits.
	NextRetryAt *time.Time `json:"nextRetryAt,omitempty"`
	// KeepAwake is set for a server added with keepAwake: its agent is
	// never hibernated.
	KeepAwake bool `json:"keepAwake,omitempty"`
	// CatalogStale is set while the server's lists are those stored
	// before the agent slept, which the server has not listed again yet.
	CatalogStale bool `json:"catalogStale,omitempty"`
	// ToolBytes is the size of the JSON of the server's tool definitions,
	// and ToolTokens its estimate in tokens (a quarter of the bytes): what
	// offering all its tools costs a model's context on every turn.
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

// Implementation is the name and version an MCP server gave in its
// handshake (MCP's Implementation).
type Implementation struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Version     string          `json:"version"`
	WebsiteURL  string          `json:"websiteUrl,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
}

// ServerState is one MCP server as GET .../servers/{id} shows it: its id,
// its MCPServer fields, and what the one-server views show besides.
type ServerState struct {
	ID string `json:"id"`
	MCPServer
	// Session is SessionLive, SessionResumable or SessionNone.
	Session string `json:"session,omitempty"`
	// ToolCount is how many tools the server lists.
	ToolCount int `json:"toolCount"`
}

// Session states of ServerState: "live" (connected), "resumable" (not
// connected, with a session to resume without a handshake at the next
// connection), or "none".
const (
	SessionLive      = "live"
	SessionResumable = "resumable"
	SessionNone      = "none"
)

// Tool is a tool of one of the agent's servers: MCP's Tool, with the
// server's id. The MCP parts the API passes on as the server sent them
// (schemas, annotations, icons, _meta) are kept as JSON.
type Tool struct {
	Meta         json.RawMessage `json:"_meta,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	Name         string          `json:"name"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Title        string          `json:"title,omitempty"`
	Icons        json.RawMessage `json:"icons,omitempty"`
	ServerID     string          `json:"serverId"`
	// Stale marks an entry stored before the agent slept that its server
	// has not listed again yet (calling it connects first).
	Stale bool `json:"stale,omitempty"`
}

// Prompt is a prompt of one of the agent's servers: MCP's Prompt, with the
// server's id.
type Prompt struct {
	Meta        json.RawMessage `json:"_meta,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Description string          `json:"description,omitempty"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	ServerID    string          `json:"serverId"`
	Stale       bool            `json:"stale,omitempty"` // as Tool.Stale
}

// Resource is a resource of one of the agent's servers: MCP's Resource,
// with the server's id.
type Resource struct {
	Meta        json.RawMessage `json:"_meta,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Description string          `json:"description,omitempty"`
	MIMEType    string          `json:"mimeType,omitempty"`
	Name        string          `json:"name"`
	Size        int64           `json:"size,omitempty"`
	Title       string          `json:"title,omitempty"`
	URI         string          `json:"uri"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	ServerID    string          `json:"serverId"`
	Stale       bool            `json:"stale,omitempty"` // as Tool.Stale
}

// ResourceTemplate is a resource template of one of the agent's servers:
// MCP's ResourceTemplate, with the server's id.
type ResourceTemplate struct {
	Meta        json.RawMessage `json:"_meta,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Description string          `json:"description,omitempty"`
	MIMEType    string          `json:"mimeType,omitempty"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	URITemplate string          `json:"uriTemplate"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	ServerID    string          `json:"serverId"`
	Stale       bool            `json:"stale,omitempty"` // as Tool.Stale
}

// FrameType is the type of the frames that carry an agent's MCP state, as
// in the seed: {"type":"cf_agent_mcp_servers","mcp":MCPServersState}.
const FrameType = "cf_agent_mcp_servers"

// Frame is a message of the WebSocket and SSE streams.
type Frame struct {
	Type string          `json:"type"`
	MCP  MCPServersState `json:"mcp"`
}

// ElicitationsFrameType is the type of the stream frames that carry an
// agent's pending elicitations: {"type":"agentmcp_elicitations",
// "elicitations":[...]}. One is sent on connect when some are pending, and
// after every change.
const ElicitationsFrameType = "agentmcp_elicitations"

// ElicitationsFrame is the frame of ElicitationsFrameType.
type ElicitationsFrame struct {
	Type         string        `json:"type"`
	Elicitations []Elicitation `json:"elicitations"`
}

// The events of a tool call made with Accept: text/event-stream (see the
// package documentation, "Calls"): each is a server-sent event named after
// its type, with a JSON object of that type as its data.
const (
	// CallEventStart opens the stream: {"type":"call","callId","serverId","tool"}.
	CallEventStart = "call"
	// CallEventProgress is a progress notification of the server:
	// {"type":"progress","progress","total"?,"message"?}.
	CallEventProgress = "progress"
	// CallEventElicitation is a request for the user's input that the call's
	// server made and that waits for its answer (POST .../elicitations/{id}):
	// {"type":"elicitation","elicitation":Elicitation}.
	CallEventElicitation = "elicitation"
	// CallEventElicitationEnded says that a request announced by
	// CallEventElicitation no longer waits (answered, here or elsewhere, or
	// given up): {"type":"elicitation_ended","id"}.
	CallEventElicitationEnded = "elicitation_ended"
	// CallEventResult ends the stream with the CallToolResult:
	// {"type":"result","result":CallToolResult}.
	CallEventResult = "result"
	// CallEventError ends the stream with the error the JSON answer would
	// have had: {"type":"error","status",...,"error":{code,message,serverId?}}.
	CallEventError = "error"
)

// CallEvent is one event of a streamed tool call; Type says which fields
// are set.
type CallEvent struct {
	Type string `json:"type"`
	// CallID, ServerID and Tool are set in the start event. CallID is the
	// callId of the call's elicitations.
	CallID   string `json:"callId,omitempty"`
	ServerID string `json:"serverId,omitempty"`
	Tool     string `json:"tool,omitempty"`
	// Progress, Total and Message are set in a progress event (Total is
	// zero when the server gave none).
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
	// Elicitation is set in an elicitation event.
	Elicitation *Elicitation `json:"elicitation,omitempty"`
	// ID is the elicitation's id in an elicitation_ended event.
	ID string `json:"id,omitempty"`
	// Result is set in the result event: the MCP CallToolResult, as the
	// MCP server's answer was decoded and encoded again.
	Result json.RawMessage `json:"result,omitempty"`
	// Task is set in the task and task_running events (tasks.go).
	Task *Task `json:"task,omitempty"`
	// Status (the HTTP status the JSON answer would have had) and Error
	// are set in the error event.
	Status int       `json:"status,omitempty"`
	Error  *APIError `json:"error,omitempty"`
}
