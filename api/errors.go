package api

import "fmt"

// Error codes of the JSON API. They are stable: clients match on them. The
// message beside a code is for people and may change.
const (
	CodeUnauthorized         = "unauthorized"           // 401: no or wrong access token
	CodeHostNotAllowed       = "host_not_allowed"       // 403: a Host header that is not a loopback name, without a token
	CodeCrossOrigin          = "cross_origin"           // 403: a browser request from another site
	CodeNotFound             = "not_found"              // 404: no such route
	CodeMethodNotAllowed     = "method_not_allowed"     // 405
	CodeUnknownAgent         = "unknown_agent"          // 404: an agent that does not exist (not created, no stored servers), or a class or name the server does not host; Agents lists those that exist
	CodeUnknownServer        = "unknown_server"         // 404: no MCP server with that id in the agent
	CodeUnknownTool          = "unknown_tool"           // 404: the server lists no such tool
	CodeUnknownElicitation   = "unknown_elicitation"    // 404: no pending elicitation with that id
	CodeUnsupportedMediaType = "unsupported_media_type" // 415: a body that is not application/json
	CodeBodyTooLarge         = "body_too_large"         // 413: a body over 1 MiB on the API's POST routes and PUT .../exposure
	CodeRequestTimeout       = "request_timeout"        // 408: a body that did not arrive within the server's body timeout
	CodeInvalidJSON          = "invalid_json"           // 400: malformed JSON, or unknown fields
	CodeInvalidRequest       = "invalid_request"        // 400: a missing or invalid field
	CodeInvalidURL           = "invalid_url"            // 400: not an http(s) URL
	CodeBlockedURL           = "blocked_url"            // 400: the SSRF guard refuses the URL
	CodeIDInUse              = "id_in_use"              // 409: a stable id held by another (name, URL)
	CodeNotConnected         = "not_connected"          // 409: the server has no live session
	CodeConnectFailed        = "connect_failed"         // 502: the first connection failed: stored and retried in the background when serverId is set (keepIfUnreachable), else nothing was saved
	CodeNameInUse            = "name_in_use"            // 409: another server has the name (serverId); add with "replace" to replace it
	CodeNotMCPEndpoint       = "not_mcp_endpoint"       // 400: the URL answered 404, 405 or 501 to every transport: no MCP server there; nothing was saved
	CodeMCPError             = "mcp_error"              // 502: the MCP server answered with an error, or the call failed
	CodeCallInterrupted      = "call_interrupted"       // 502: the session was lost during a call that may have run
	CodeTimeout              = "timeout"                // 504
	CodeAgentBusy            = "agent_busy"             // 409: the agent cannot be hibernated now
	CodeOwnerMoved           = "owner_moved"            // 503: (replicas) the agent moved while the request was forwarded; retry
	CodeOwnerUnavailable     = "owner_unavailable"      // 503: (replicas) the replica holding the agent does not answer; retry
	CodeInterrupted          = "interrupted"            // 502: (replicas) the replica holding the agent went away during the request; not repeated
	CodeShuttingDown         = "shutting_down"          // 503
	CodeOAuthUnavailable     = "oauth_unavailable"      // 404: this build's agents cannot complete OAuth callbacks
	CodeInternal             = "internal"               // 500
	CodeUnavailable          = "unavailable"            // 503: the store does not answer within its deadline, cannot be reached or refuses writes (or, for a replica, its ownership is in doubt); nothing was changed; retry
	// CodeStdioNotAllowed (403) refuses a stdio server add: the server was
	// not started allowing them, has no access token, or the request came
	// from a browser page of another origin.
	CodeStdioNotAllowed = "stdio_not_allowed"
)

// ErrorResponse is the JSON of every error response:
// {"error":{"code":"stable_code","message":"...","serverId":"...","agents":[...]}}.
type ErrorResponse struct {
	Error APIError `json:"error"`
}

// APIError is an error response of the JSON API, as the client returns it.
type APIError struct {
	// Status is the HTTP status code (not part of the JSON body).
	Status int `json:"-"`
	// Code is one of the Code constants.
	Code string `json:"code"`
	// Message says what went wrong, safe to show: no tokens, header values
	// or URL queries.
	Message string `json:"message"`
	// ServerID names the MCP server concerned, when there is one (for
	// connect_failed, the id under which the server was stored).
	ServerID string `json:"serverId,omitempty"`
	// ServerName, Summary and Detail come with connect_failed: the
	// server's name, what failed in a few words (what agentmcp ls and the
	// dashboard show for the server) and the whole error, so that a client
	// can say what to do next in its own terms.
	ServerName string `json:"serverName,omitempty"`
	Summary    string `json:"summary,omitempty"`
	Detail     string `json:"detail,omitempty"`
	// Agents lists the agents that exist ("class/name"), with
	// unknown_agent.
	Agents []string `json:"agents,omitempty"`

	// RetryAfter is the response's Retry-After, in seconds, when the
	// server sends one (not part of the JSON body): set by the server.
	RetryAfter int `json:"-"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, e.Status)
}
