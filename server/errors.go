package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/explain"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/store"
)

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
	CodeRequestTimeout       = "request_timeout"        // 408: a body that did not arrive within Options.BodyTimeout
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
)

// errorBody is the JSON of every error response:
// {"error":{"code":"stable_code","message":"...","serverId":"...","agents":[...]}}.
type errorBody struct {
	Error APIError `json:"error"`
}

// APIError is an error response of the JSON API, as the Client returns it.
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
	// dashboard show for the server: explain.Summary) and the whole error,
	// so that a client can say what to do next in its own terms.
	ServerName string `json:"serverName,omitempty"`
	Summary    string `json:"summary,omitempty"`
	Detail     string `json:"detail,omitempty"`
	// Agents lists the agents that exist ("class/name"), with
	// unknown_agent.
	Agents []string `json:"agents,omitempty"`

	retryAfter int // seconds, sent as Retry-After when set
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, e.Status)
}

func apiErrorf(status int, code, format string, args ...any) *APIError {
	return &APIError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// writeError writes e as the response.
func writeError(w http.ResponseWriter, e *APIError) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	e.Message = netguard.Sanitize(e.Message)
	e.ServerName, e.Summary, e.Detail = netguard.Sanitize(e.ServerName), netguard.Sanitize(e.Summary), netguard.Sanitize(e.Detail)
	writeJSON(w, e.Status, errorBody{Error: *e})
}

// writeJSON writes v as the response body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"cannot encode the response"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// storeRetryAfter is the Retry-After, in seconds, of a request the store
// could not serve.
const storeRetryAfter = 2

// storeUnavailable returns the 503 of err when the store could not serve
// it (store.ErrUnavailable: no answer within its deadline, no connection,
// writes refused), nil otherwise. Whatever the route, such an error is
// 503 with Retry-After: nothing was changed, and the client may retry.
func storeUnavailable(err error) *APIError {
	if !errors.Is(err, store.ErrUnavailable) {
		return nil
	}
	e := apiErrorf(http.StatusServiceUnavailable, CodeUnavailable, "the store cannot serve this request now; nothing was changed; retry (%v)", err)
	e.retryAfter = storeRetryAfter
	return e
}

// callError maps the error of a call on server id of a (tool call,
// resource read, prompt), what the call was (`tools/call "echo"`), to an
// API error whose message names the server by its name (serverLabel).
func callError(a *agent.Agent, id, what string, err error) *APIError {
	e := storeUnavailable(err)
	label := serverLabel(a, id)
	var ierr *mcpclient.InterruptedCallError
	switch {
	case e != nil:
	case errors.Is(err, context.DeadlineExceeded):
		e = apiErrorf(http.StatusGatewayTimeout, CodeTimeout, "%s", callMessage(what, id, label, err))
	case errors.Is(err, mcpclient.ErrClosed):
		e = apiErrorf(http.StatusServiceUnavailable, CodeShuttingDown, "the agent is closing")
	case errors.Is(err, mcpclient.ErrNotRegistered):
		e = apiErrorf(http.StatusConflict, CodeNotConnected, "MCP server %s is stored but not registered (see the server log: it could not be restored)", label)
	case errors.Is(err, mcpclient.ErrNotConnected):
		state := "not connected"
		if a != nil {
			if info, ok := a.Manager().Server(id); ok {
				state = string(info.State)
			}
		}
		e = apiErrorf(http.StatusConflict, CodeNotConnected, "MCP server %s is not connected (%s): %s", label, state, explain.Summary(err))
	case errors.As(err, &ierr):
		e = apiErrorf(http.StatusBadGateway, CodeCallInterrupted, "%s", callMessage(what, id, label, err))
	case errors.Is(err, mcpclient.ErrGateClosed):
		// This replica's ownership is in doubt (the store does not
		// answer): the request was not sent, and another try may find the
		// agent's new owner.
		e = apiErrorf(http.StatusServiceUnavailable, CodeUnavailable, "%v", err)
		e.retryAfter = 1
	default:
		e = apiErrorf(http.StatusBadGateway, CodeMCPError, "%s", callMessage(what, id, label, err))
	}
	e.ServerID = id
	return e
}

// callMessage says that call what on server id (label) failed with err.
// The Manager's errors name the server by its id (`tools/call "echo" on
// server "a1b2c3d4": ...`); that part is replaced by the label.
func callMessage(what, id, label string, err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, fmt.Sprintf("%s on server %q: ", what, id)); ok {
		msg = rest
	}
	return fmt.Sprintf("%s on MCP server %s: %s", what, label, msg)
}

// addError maps an AddMCPServer or CheckAdd error to an API error.
func addError(err error) *APIError {
	if e := storeUnavailable(err); e != nil {
		return e
	}
	var named *agent.NameInUseError
	switch {
	case errors.Is(err, netguard.ErrBlockedURL):
		return apiErrorf(http.StatusBadRequest, CodeBlockedURL, "%v", err)
	case errors.Is(err, netguard.ErrUnsupportedScheme):
		return apiErrorf(http.StatusBadRequest, CodeInvalidURL, "%v", err)
	case errors.Is(err, agent.ErrIDInUse):
		return apiErrorf(http.StatusConflict, CodeIDInUse, "%v", err)
	case errors.Is(err, agent.ErrNotMCPEndpoint):
		return apiErrorf(http.StatusBadRequest, CodeNotMCPEndpoint, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return apiErrorf(http.StatusGatewayTimeout, CodeTimeout, "%v", err)
	case errors.Is(err, mcpclient.ErrClosed):
		return apiErrorf(http.StatusServiceUnavailable, CodeShuttingDown, "the agent is closing")
	case errors.Is(err, store.ErrFenced):
		e := apiErrorf(http.StatusServiceUnavailable, CodeOwnerMoved, "the agent moved to another replica meanwhile; nothing was stored; retry")
		e.retryAfter = 1
		return e
	case errors.As(err, &named):
		e := apiErrorf(http.StatusConflict, CodeNameInUse, "%v", err)
		e.ServerID = named.ID
		return e
	case errors.Is(err, agent.ErrStorage):
		return apiErrorf(http.StatusInternalServerError, CodeInternal, "%v", err)
	}
	return apiErrorf(http.StatusBadRequest, CodeInvalidRequest, "%v", err)
}
