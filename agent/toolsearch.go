package agent

import (
	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// SearchTools returns up to limit tools of the agent's servers that f
// selects and that match query, best first, with their scores
// (mcpclient.Manager.SearchTools).
func (a *Agent) SearchTools(f mcpclient.Filter, query string, limit int) []aitools.Match {
	return a.m.SearchTools(f, query, limit)
}

// SearchMode returns the agent's tools in search mode: the meta-tools
// search_tools and call_tool, plus the tools opts marks always loaded
// (mcpclient.Manager.SearchMode).
func (a *Agent) SearchMode(f mcpclient.Filter, opts *aitools.SearchModeOptions) *aitools.ToolSet {
	return a.m.SearchMode(f, opts)
}
