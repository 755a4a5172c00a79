package api

import (
	"encoding/json"
	"time"
)

// MaxCallTimeout is the largest timeoutMs a request may ask for.
const MaxCallTimeout = time.Hour

// MaxNameLength is the longest server name AddRequest takes, in
// characters.
const MaxNameLength = 200

// AgentInfo names one agent (GET /agents, PUT /agents/{class}/{name}).
type AgentInfo struct {
	Class string `json:"class"`
	Name  string `json:"name"`
}

// AgentList is the answer of GET /agents.
type AgentList struct {
	Agents []AgentInfo `json:"agents"`
	// More is set when agents were left out of the list.
	More bool `json:"more,omitempty"`
}

// AddRequest is the body of POST /agents/{class}/{name}/servers: the
// seed's addMcpServer(serverName, url, options). Only name and url (or
// command) are required.
type AddRequest struct {
	// Name is the display name: at most MaxNameLength characters, with no
	// control characters.
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
	// Command, with Args, Env and Cwd, makes the server a stdio server (a
	// program the agent runs) instead of a URL one: url must then be
	// absent. The server refuses it unless it allows stdio servers
	// (CodeStdioNotAllowed). Env values are secrets: stored (encrypted
	// when a key is set) and never sent back; only their names are shown.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// ID is a stable server id (normalised as the agent normalises ids).
	ID string `json:"id,omitempty"`
	// CallbackHost is the origin of the OAuth callback URL. Empty means the
	// agent's default, else the origin the request was sent to.
	CallbackHost string `json:"callbackHost,omitempty"`
	CallbackPath string `json:"callbackPath,omitempty"`
	AgentsPrefix string `json:"agentsPrefix,omitempty"`
	// Transport selects the transport ("auto", "streamable-http", "sse")
	// and the headers sent on every request. Header values are secrets:
	// they are stored (encrypted when a key is set) and never sent back.
	Transport *TransportRequest `json:"transport,omitempty"`
	Client    *ClientRequest    `json:"client,omitempty"`
	Retry     *RetryRequest     `json:"retry,omitempty"`
	// KeepAwake keeps the agent awake while it has this server.
	KeepAwake bool `json:"keepAwake,omitempty"`
	// KeepIfUnreachable keeps a new server whose first connection fails
	// (stored, and retried in the background): without it such an add
	// stores nothing. A URL that answers as no MCP endpoint (404, 405 or
	// 501 to both transports) is refused either way.
	KeepIfUnreachable bool `json:"keepIfUnreachable,omitempty"`
	// Replace replaces the server that has the name with another URL or
	// command (it is removed first, with its OAuth grant); without it such
	// an add is refused (name_in_use).
	Replace bool `json:"replace,omitempty"`
}

// TransportRequest is AddRequest's transport.
type TransportRequest struct {
	Type    string            `json:"type,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// ClientRequest is AddRequest's client: the MCP client options.
type ClientRequest struct {
	// ProtocolVersion pins the protocol version, e.g. "2025-11-25".
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// RetryRequest is AddRequest's retry; zero fields mean the defaults.
type RetryRequest struct {
	MaxAttempts int   `json:"maxAttempts,omitempty"`
	BaseDelayMS int64 `json:"baseDelayMs,omitempty"`
	MaxDelayMS  int64 `json:"maxDelayMs,omitempty"`
	// BackgroundMaxDelayMS caps the wait between the background attempts
	// that follow the MaxAttempts attempts (zero: 3 minutes).
	BackgroundMaxDelayMS int64 `json:"backgroundMaxDelayMs,omitempty"`
	// DisableBackground turns the background retry off: the server stays
	// failed until a call or a reconnect.
	DisableBackground bool `json:"disableBackground,omitempty"`
}

// AddResult is the answer of an add (POST .../servers) and of POST
// .../servers/{id}/reconnect.
type AddResult struct {
	ID string `json:"id"`
	// State is ready, or authenticating when the user must authorise at
	// AuthURL.
	State   string `json:"state"`
	AuthURL string `json:"authUrl,omitempty"`
}

// ReloadResult is the answer of POST .../reload: the servers the agent
// took in from the store, and those it dropped.
type ReloadResult struct {
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

// CallToolRequest is the body of POST .../servers/{id}/tools/call.
type CallToolRequest struct {
	Name string `json:"name"`
	// Arguments is a JSON object; absent or null means {}.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// TimeoutMS bounds the call, in milliseconds, up to MaxCallTimeout.
	// Zero means the server's default.
	TimeoutMS int64 `json:"timeoutMs,omitempty"`
	// Approval presents the id of an approval (from a 202): the call runs
	// nothing but answers the approval's outcome, waiting for it within
	// TimeoutMS, when its tool and arguments are the approval's (else 409
	// approval_mismatch).
	Approval string `json:"approval,omitempty"`
}

// ReadResourceRequest is the body of POST .../servers/{id}/resources/read.
type ReadResourceRequest struct {
	URI string `json:"uri"`
	// TimeoutMS is as in CallToolRequest.
	TimeoutMS int64 `json:"timeoutMs,omitempty"`
}

// GetPromptRequest is the body of POST .../servers/{id}/prompts/get.
type GetPromptRequest struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	// TimeoutMS is as in CallToolRequest.
	TimeoutMS int64 `json:"timeoutMs,omitempty"`
}

// Exposure is the body of PUT /agents/{class}/{name}/exposure and the
// answer of GET: patterns "SERVER" or "SERVER/TOOL", with * and ?
// wildcards. Deny wins; an empty allow list allows everything. Absent
// lists are empty.
type Exposure struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// ElicitationAnswer is the body of POST .../elicitations/{id}.
type ElicitationAnswer struct {
	// Action is "accept", "decline" or "cancel".
	Action string `json:"action"`
	// Content is the form's content, when accepting in form mode.
	Content map[string]any `json:"content,omitempty"`
}

// Elicitation is a server's pending request for the user's input, as the
// API and the streams show it.
type Elicitation struct {
	// ID identifies the request for POST .../elicitations/{id}.
	ID string `json:"id"`
	// ServerID is the MCP server that asks.
	ServerID string `json:"serverId"`
	// Mode is "form" (answer with content matching RequestedSchema) or
	// "url" (accepting means the user agreed to open URL).
	Mode string `json:"mode"`
	// Message is the server's message, sanitised.
	Message string `json:"message"`
	// RequestedSchema is the form's JSON schema, in form mode.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL is the page to open, in URL mode.
	URL string `json:"url,omitempty"`
	// CallID is the call the request belongs to (a streamed call's
	// CallEvent.CallID), or empty.
	CallID string `json:"callId,omitempty"`
}

// Elicitations is the answer of GET .../elicitations.
type Elicitations struct {
	Elicitations []Elicitation `json:"elicitations"`
}

// ServerLogs is the answer of GET .../servers/{id}/logs.
type ServerLogs struct {
	ServerID string `json:"serverId"`
	// Logs are the last log messages (notifications/message) the server
	// sent since its agent woke, oldest first, at most 50.
	Logs []ServerLog `json:"logs"`
}

// Logs is the answer of GET .../logs: the last log messages of each of
// the agent's servers, in order of server id.
type Logs struct {
	Servers []ServerLogs `json:"servers"`
}

// ServerLog is one log message (notifications/message) of a server.
type ServerLog struct {
	// Time is when it arrived.
	Time time.Time `json:"time"`
	// Level is the server's level for it: debug, info, notice, warning,
	// error, critical, alert or emergency (as the server sent it).
	Level string `json:"level"`
	// Logger is the name of the server's logger, if it gave one.
	Logger string `json:"logger,omitempty"`
	// Data is what it logged: a string as is, anything else as compact
	// JSON; sanitised (one line, no control or bidi characters) and cut to
	// 2,000 characters.
	Data string `json:"data"`
}

// Stats is the answer of GET /agents/{class}/{name}/stats: the figures of
// the tool calls the agent sent to each of its servers, for the
// dashboard. They are not in the state stream, which would otherwise send
// a frame per call.
type Stats struct {
	// WindowSeconds is how far back the windowed figures reach: the
	// current minute and the four before it.
	WindowSeconds int `json:"windowSeconds"`
	// Servers are the agent's stored servers by id.
	Servers map[string]ServerStats `json:"servers"`
}

// ServerStats are one server's figures: calls, errors and latency
// quantiles over the window, and the totals since the server was
// registered in the serving process.
type ServerStats struct {
	Calls  int64 `json:"calls"`
	Errors int64 `json:"errors"`
	// ErrorRate is Errors over Calls, 0 without calls.
	ErrorRate float64 `json:"errorRate"`
	// P50Ms and P95Ms are the latency quantiles in milliseconds (to the
	// microsecond), 0 without calls.
	P50Ms       float64 `json:"p50Ms"`
	P95Ms       float64 `json:"p95Ms"`
	TotalCalls  int64   `json:"totalCalls"`
	TotalErrors int64   `json:"totalErrors"`
}

// RuntimeStats is the answer of the cluster listener's GET /cluster/stats
// (package server's StatsPath), taken right after a garbage collection (so
// HeapAlloc is the live heap).
type RuntimeStats struct {
	// Goroutines is how many goroutines the process runs.
	Goroutines int `json:"goroutines"`
	// HeapAlloc and HeapObjects are the live heap: bytes and objects.
	HeapAlloc   uint64 `json:"heapAlloc"`
	HeapObjects uint64 `json:"heapObjects"`
	// Sys is the memory the Go runtime holds from the operating system.
	Sys uint64 `json:"sys"`
	// NumGC counts the garbage collections so far.
	NumGC uint32 `json:"numGC"`
	// AwakeAgents is how many agents are awake on this replica, and Wakes
	// and Hibernations count those it opened and closed.
	AwakeAgents  int   `json:"awakeAgents"`
	Wakes        int64 `json:"wakes"`
	Hibernations int64 `json:"hibernations"`
}
