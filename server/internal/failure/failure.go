package failure

import (
	"context"
	"errors"
	"fmt"
	"math"
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

// storeRetryAfter is the Retry-After, in seconds, of a request the store
// could not serve.
const storeRetryAfter = 2

// Store returns the 503 of err when the store could not serve
// it (store.ErrUnavailable: no answer within its deadline, no connection,
// writes refused), nil otherwise. Whatever the route, such an error is
// 503 with Retry-After: nothing was changed, and the client may retry.
func Store(err error) *api.APIError {
	if !errors.Is(err, store.ErrUnavailable) {
		return nil
	}
	e := reply.Errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the store cannot serve this request now; nothing was changed; retry (%v)", err)
	e.RetryAfter = storeRetryAfter
	return e
}

// Call maps the error of a call on server id of a (tool call,
// resource read, prompt), what the call was (`tools/call "echo"`), to an
// API error whose message names the server by its name (Label).
func Call(a *agent.Agent, id, what string, err error) *api.APIError {
	e := Store(err)
	label := Label(a, id)
	var ierr *mcpclient.InterruptedCallError
	switch {
	case e != nil:
	case Policy(err) != nil:
		e = Policy(err)
	case errors.Is(err, context.DeadlineExceeded):
		e = reply.Errorf(http.StatusGatewayTimeout, api.CodeTimeout, "%s", callMessage(what, id, label, err))
	case errors.Is(err, mcpclient.ErrClosed):
		e = reply.Errorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the agent is closing")
	case errors.Is(err, mcpclient.ErrNotRegistered):
		e = reply.Errorf(http.StatusConflict, api.CodeNotConnected, "MCP server %s is stored but not registered (see the server log: it could not be restored)", label)
	case errors.Is(err, mcpclient.ErrNotConnected):
		state := "not connected"
		if a != nil {
			if srv, ok := a.Server(id); ok {
				state = srv.State
			}
		}
		e = reply.Errorf(http.StatusConflict, api.CodeNotConnected, "MCP server %s is not connected (%s): %s", label, state, explain.Summary(err))
	case errors.As(err, &ierr):
		e = reply.Errorf(http.StatusBadGateway, api.CodeCallInterrupted, "%s", callMessage(what, id, label, err))
	case errors.Is(err, mcpclient.ErrGateClosed):
		// This replica's ownership is in doubt (the store does not
		// answer): the request was not sent, and another try may find the
		// agent's new owner.
		e = reply.Errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "%v", err)
		e.RetryAfter = 1
	default:
		e = reply.Errorf(http.StatusBadGateway, api.CodeMCPError, "%s", callMessage(what, id, label, err))
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

// Add maps an AddMCPServer or CheckAdd error to an API error.
func Add(err error) *api.APIError {
	if e := Store(err); e != nil {
		return e
	}
	var named *agent.NameInUseError
	switch {
	case errors.Is(err, netguard.ErrBlockedURL):
		return reply.Errorf(http.StatusBadRequest, api.CodeBlockedURL, "%v", err)
	case errors.Is(err, netguard.ErrUnsupportedScheme):
		return reply.Errorf(http.StatusBadRequest, api.CodeInvalidURL, "%v", err)
	case errors.Is(err, agent.ErrIDInUse):
		return reply.Errorf(http.StatusConflict, api.CodeIDInUse, "%v", err)
	case errors.Is(err, agent.ErrNotMCPEndpoint):
		return reply.Errorf(http.StatusBadRequest, api.CodeNotMCPEndpoint, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return reply.Errorf(http.StatusGatewayTimeout, api.CodeTimeout, "%v", err)
	case errors.Is(err, mcpclient.ErrClosed):
		return reply.Errorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the agent is closing")
	case errors.Is(err, store.ErrFenced):
		e := reply.Errorf(http.StatusServiceUnavailable, api.CodeOwnerMoved, "the agent moved to another replica meanwhile; nothing was stored; retry")
		e.RetryAfter = 1
		return e
	case errors.As(err, &named):
		e := reply.Errorf(http.StatusConflict, api.CodeNameInUse, "%v", err)
		e.ServerID = named.ID
		return e
	case errors.Is(err, agent.ErrStorage):
		return reply.Errorf(http.StatusInternalServerError, api.CodeInternal, "%v", err)
	}
	return reply.Errorf(http.StatusBadRequest, api.CodeInvalidRequest, "%v", err)
}

// Connect is the connect_failed error of server id, whose
// connection failed with err: the server by name, what failed in short,
// and note (what happens next, in terms of the server itself rather than
// of any route); ServerName, Summary and Detail let a client say it in
// its own terms.
func Connect(a *agent.Agent, id string, err error, note string) *api.APIError {
	name := Name(a, id)
	summary := explain.Summary(err)
	e := reply.Errorf(http.StatusBadGateway, api.CodeConnectFailed, "MCP server %s: %s; %s", Label(a, id), summary, note)
	e.ServerID, e.ServerName, e.Summary, e.Detail = id, name, summary, err.Error()
	return e
}

// NotSaved is the connect_failed error of a new server named name whose
// first connection failed with err and that was not kept (no
// keepIfUnreachable): no ServerID, since nothing was saved; Summary and
// Detail as Connect's.
func NotSaved(name string, err error) *api.APIError {
	summary := explain.Summary(err)
	e := reply.Errorf(http.StatusBadGateway, api.CodeConnectFailed, "MCP server %q: %s; nothing was saved", name, summary)
	e.ServerName, e.Summary, e.Detail = name, summary, err.Error()
	return e
}

// Name is the name of server id, or its id when it has none (or
// there is no agent).
func Name(a *agent.Agent, id string) string {
	if a == nil {
		return id
	}
	if s, ok := a.Server(id); ok && s.Name != "" {
		return s.Name
	}
	return id
}

// Label names server id in a message: "docs" (its name, quoted),
// with its id when that differs: "docs" (id docs-2).
func Label(a *agent.Agent, id string) string {
	name := Name(a, id)
	if name == id {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q (id %s)", name, id)
}

// Policy maps the errors of a call the policy refused or a person
// answered, nil for any other.
func Policy(err error) *api.APIError {
	var (
		limited *agent.RateLimitedError
		denied  *agent.ApprovalDeniedError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &limited):
		e := reply.Errorf(http.StatusTooManyRequests, api.CodeRateLimited, "%v", err)
		e.RetryAfter = int(math.Ceil(limited.Wait.Seconds()))
		e.ServerID = limited.ServerID
		return e
	case errors.Is(err, agent.ErrToolDenied):
		return reply.Errorf(http.StatusForbidden, api.CodeToolDenied, "%v", err)
	case errors.Is(err, agent.ErrToolChanged): // pinned tool definitions
		return reply.Errorf(http.StatusConflict, api.CodeToolChanged, "%v", err)
	case errors.As(err, &denied):
		return reply.Errorf(http.StatusForbidden, api.CodeApprovalDenied, "%v", err)
	case errors.Is(err, agent.ErrApprovalExpired):
		return reply.Errorf(http.StatusConflict, api.CodeApprovalExpired, "%v", err)
	case errors.Is(err, agent.ErrApprovalMismatch):
		return reply.Errorf(http.StatusConflict, api.CodeApprovalMismatch, "%v", err)
	case errors.Is(err, agent.ErrUnknownApproval):
		return reply.Errorf(http.StatusNotFound, api.CodeUnknownApproval, "%v", err)
	}
	return nil
}
