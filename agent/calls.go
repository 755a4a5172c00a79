package agent

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/oauth"
)

// The agent's calls and catalogs: what an API or a model adapter needs,
// without reaching for the Manager. Each call keeps the agent awake while
// it runs (see Host).

// CallTool calls a tool on one of the agent's servers (see
// mcpclient.Manager.CallTool: a tool failure is a result with IsError,
// an error means the call did not complete). A server still connecting,
// after a restart or a wake, is waited for; the others are not.
func (a *Agent) CallTool(ctx context.Context, serverID, name string, args any, opts *mcpclient.CallOptions) (*mcp.CallToolResult, error) {
	defer a.hold()()
	return a.m.CallTool(ctx, serverID, name, args, opts)
}

// ReadResource reads a resource from one of the agent's servers.
func (a *Agent) ReadResource(ctx context.Context, serverID, uri string) (*mcp.ReadResourceResult, error) {
	defer a.hold()()
	return a.m.ReadResource(ctx, serverID, uri)
}

// GetPrompt gets a prompt from one of the agent's servers.
func (a *Agent) GetPrompt(ctx context.Context, serverID, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	defer a.hold()()
	return a.m.GetPrompt(ctx, serverID, name, args)
}

// ListTools returns the tools of the agent's stored servers that f
// selects (an empty f.ServerID means all of them), each tagged with its
// server id.
func (a *Agent) ListTools(f mcpclient.Filter) []mcpclient.Tool {
	return listStored(a, f, a.m.ListTools)
}

// ListPrompts is ListTools for prompts.
func (a *Agent) ListPrompts(f mcpclient.Filter) []mcpclient.Prompt {
	return listStored(a, f, a.m.ListPrompts)
}

// ListResources is ListTools for resources.
func (a *Agent) ListResources(f mcpclient.Filter) []mcpclient.Resource {
	return listStored(a, f, a.m.ListResources)
}

// ListResourceTemplates is ListTools for resource templates.
func (a *Agent) ListResourceTemplates(f mcpclient.Filter) []mcpclient.ResourceTemplate {
	return listStored(a, f, a.m.ListResourceTemplates)
}

// Servers returns a snapshot of each server registered with the agent's
// Manager, in the order they were registered: its id, its name, its live
// state and what its handshake said (mcpclient.Manager.Servers). For the
// stored servers as an API shows them, see MCPServers.
func (a *Agent) Servers() []mcpclient.ServerInfo { return a.m.Servers() }

// AITools returns the tools of the agent's servers that f selects as LLM
// tools, with keys unique over all of them (mcpclient.Manager.AITools):
// what a model adapter, or a layer that exposes the agent's tools under
// those keys (package gateway), needs.
func (a *Agent) AITools(f mcpclient.Filter) *aitools.ToolSet { return a.m.AITools(f) }

// CheckURL reports why the agent's SSRF guard would refuse a server URL,
// or nil (see mcpclient.Manager.CheckURL).
func (a *Agent) CheckURL(url string) error { return a.m.CheckURL(url) }

// listStored lists with list the catalog items of the stored servers f
// selects ([] when none).
func listStored[T any](a *Agent, f mcpclient.Filter, list func(mcpclient.Filter) []T) []T {
	f, ok := a.stored(f)
	if !ok {
		return []T{}
	}
	return orEmpty(list(f))
}

// stored narrows f to the agent's stored servers; false when none is
// left.
func (a *Agent) stored(f mcpclient.Filter) (mcpclient.Filter, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(f.ServerID) == 0 {
		f.ServerID = append([]string(nil), a.order...)
	} else {
		f.ServerID = slices.DeleteFunc(slices.Clone(f.ServerID), func(id string) bool {
			_, ok := a.rows[id]
			return !ok
		})
	}
	return f, len(f.ServerID) > 0
}

// hold counts work in flight that keeps the agent awake; call the result
// when it ends.
func (a *Agent) hold() (release func()) {
	a.busyN.Add(1)
	return func() { a.busyN.Add(-1) }
}

// Done is closed when the agent is closed (Close, or hibernated by its
// Host): for what lives as long as the agent.
func (a *Agent) Done() <-chan struct{} { return a.quit }

// Hold keeps the agent Busy, so that its Host does not hibernate it,
// until release is called: for work the agent does not see, such as a
// client's session on an endpoint that fronts the agent (package
// gateway). Calling release more than once releases once.
func (a *Agent) Hold() (release func()) {
	var once sync.Once
	r := a.hold()
	return func() { once.Do(r) }
}

// noteAuthorization notes that an OAuth flow started: the agent stays
// awake while its state can still be redeemed, so that the callback finds
// it (one with a custom callback path could not wake it).
func (a *Agent) noteAuthorization() {
	until := a.now().Add(oauth.StateLifetime).UnixNano()
	for {
		old := a.authUntil.Load()
		if old >= until || a.authUntil.CompareAndSwap(old, until) {
			return
		}
	}
}

// Busy reports whether something keeps the agent awake: a call, add or
// reconnection in flight, an open watch, a pending elicitation, or an
// OAuth flow in progress (a server waiting for authorisation, less than
// oauth.StateLifetime after the flow started). A Host does not hibernate a
// busy agent.
func (a *Agent) Busy() bool {
	return a.working() || a.pending.count() > 0 || a.authorizing()
}

// working reports whether a call, add or reconnection is in flight or a
// watch is open: what even a process about to exit waits for.
func (a *Agent) working() bool {
	return a.busyN.Load() > 0 || a.updates.watching() > 0
}

// authorizing reports whether an OAuth flow may still complete here: one
// started less than oauth.StateLifetime ago, and a server still waiting
// for it.
func (a *Agent) authorizing() bool {
	if a.now().UnixNano() >= a.authUntil.Load() {
		return false
	}
	for _, info := range a.m.Servers() {
		if info.State == mcpclient.StateAuthenticating {
			return true
		}
	}
	return false
}

// now is the agent's clock (the Manager's, which tests replace).
func (a *Agent) now() time.Time { return a.clock() }
