package server

import (
	"fmt"
	"net/http"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient/explain"
)

// connectFailed is the connect_failed error of server id, whose
// connection failed with err: the server by name, what failed in short,
// and note (what happens next, in terms of the server itself rather than
// of any route); ServerName, Summary and Detail let a client say it in
// its own terms.
func connectFailed(a *agent.Agent, id string, err error, note string) *api.APIError {
	name := serverName(a, id)
	summary := explain.Summary(err)
	e := apiErrorf(http.StatusBadGateway, api.CodeConnectFailed, "MCP server %s: %s; %s", serverLabel(a, id), summary, note)
	e.ServerID, e.ServerName, e.Summary, e.Detail = id, name, summary, err.Error()
	return e
}

// notSaved is the connect_failed error of a new server named name whose
// first connection failed with err and that was not kept (no
// keepIfUnreachable): no ServerID, since nothing was saved; Summary and
// Detail as connectFailed's.
func notSaved(name string, err error) *api.APIError {
	summary := explain.Summary(err)
	e := apiErrorf(http.StatusBadGateway, api.CodeConnectFailed, "MCP server %q: %s; nothing was saved", name, summary)
	e.ServerName, e.Summary, e.Detail = name, summary, err.Error()
	return e
}

// serverName is the name of server id, or its id when it has none (or
// there is no agent).
func serverName(a *agent.Agent, id string) string {
	if a == nil {
		return id
	}
	if s, ok := a.Server(id); ok && s.Name != "" {
		return s.Name
	}
	return id
}

// serverLabel names server id in a message: "docs" (its name, quoted),
// with its id when that differs: "docs" (id docs-2).
func serverLabel(a *agent.Agent, id string) string {
	name := serverName(a, id)
	if name == id {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q (id %s)", name, id)
}
