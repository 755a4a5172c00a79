package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/explain"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/server/internal/reply"
	"github.com/agentmcp/agentmcp/store"
)

func apiErrorf(status int, code, format string, args ...any) *api.APIError {
	return reply.Errorf(status, code, format, args...)
}

// writeError writes e as the response (reply.Error).
func writeError(w http.ResponseWriter, e *api.APIError) { reply.Error(w, e) }

// writeJSON writes v as the response body with status (reply.JSON).
func writeJSON(w http.ResponseWriter, status int, v any) { reply.JSON(w, status, v) }

// storeRetryAfter is the Retry-After, in seconds, of a request the store
// could not serve.
const storeRetryAfter = 2

// storeUnavailable returns the 503 of err when the store could not serve
// it (store.ErrUnavailable: no answer within its deadline, no connection,
// writes refused), nil otherwise. Whatever the route, such an error is
// 503 with Retry-After: nothing was changed, and the client may retry.
func storeUnavailable(err error) *api.APIError {
	if !errors.Is(err, store.ErrUnavailable) {
		return nil
	}
	e := apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the store cannot serve this request now; nothing was changed; retry (%v)", err)
	e.RetryAfter = storeRetryAfter
	return e
}

// callError maps the error of a call on server id of a (tool call,
// resource read, prompt), what the call was (`tools/call "echo"`), to an
// API error whose message names the server by its name (serverLabel).
func callError(a *agent.Agent, id, what string, err error) *api.APIError {
	e := storeUnavailable(err)
	label := serverLabel(a, id)
	var ierr *mcpclient.InterruptedCallError
	switch {
	case e != nil:
	case errors.Is(err, context.DeadlineExceeded):
		e = apiErrorf(http.StatusGatewayTimeout, api.CodeTimeout, "%s", callMessage(what, id, label, err))
	case errors.Is(err, mcpclient.ErrClosed):
		e = apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the agent is closing")
	case errors.Is(err, mcpclient.ErrNotRegistered):
		e = apiErrorf(http.StatusConflict, api.CodeNotConnected, "MCP server %s is stored but not registered (see the server log: it could not be restored)", label)
	case errors.Is(err, mcpclient.ErrNotConnected):
		state := "not connected"
		if a != nil {
			if srv, ok := a.Server(id); ok {
				state = srv.State
			}
		}
		e = apiErrorf(http.StatusConflict, api.CodeNotConnected, "MCP server %s is not connected (%s): %s", label, state, explain.Summary(err))
	case errors.As(err, &ierr):
		e = apiErrorf(http.StatusBadGateway, api.CodeCallInterrupted, "%s", callMessage(what, id, label, err))
	case errors.Is(err, mcpclient.ErrGateClosed):
		// This replica's ownership is in doubt (the store does not
		// answer): the request was not sent, and another try may find the
		// agent's new owner.
		e = apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "%v", err)
		e.RetryAfter = 1
	default:
		e = apiErrorf(http.StatusBadGateway, api.CodeMCPError, "%s", callMessage(what, id, label, err))
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
func addError(err error) *api.APIError {
	if e := storeUnavailable(err); e != nil {
		return e
	}
	var named *agent.NameInUseError
	switch {
	case errors.Is(err, netguard.ErrBlockedURL):
		return apiErrorf(http.StatusBadRequest, api.CodeBlockedURL, "%v", err)
	case errors.Is(err, netguard.ErrUnsupportedScheme):
		return apiErrorf(http.StatusBadRequest, api.CodeInvalidURL, "%v", err)
	case errors.Is(err, agent.ErrIDInUse):
		return apiErrorf(http.StatusConflict, api.CodeIDInUse, "%v", err)
	case errors.Is(err, agent.ErrNotMCPEndpoint):
		return apiErrorf(http.StatusBadRequest, api.CodeNotMCPEndpoint, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return apiErrorf(http.StatusGatewayTimeout, api.CodeTimeout, "%v", err)
	case errors.Is(err, mcpclient.ErrClosed):
		return apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the agent is closing")
	case errors.Is(err, store.ErrFenced):
		e := apiErrorf(http.StatusServiceUnavailable, api.CodeOwnerMoved, "the agent moved to another replica meanwhile; nothing was stored; retry")
		e.RetryAfter = 1
		return e
	case errors.As(err, &named):
		e := apiErrorf(http.StatusConflict, api.CodeNameInUse, "%v", err)
		e.ServerID = named.ID
		return e
	case errors.Is(err, agent.ErrStorage):
		return apiErrorf(http.StatusInternalServerError, api.CodeInternal, "%v", err)
	}
	return apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "%v", err)
}
