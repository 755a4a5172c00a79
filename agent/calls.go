package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/oauth"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// The agent's calls and catalogs: what an API or a model adapter needs,
// without reaching for the Manager. Each call keeps the agent awake while
// it runs (see Host).

// CallTool calls a tool on one of the agent's servers (see
// mcpclient.Manager.CallTool: a tool failure is a result with IsError,
// an error means the call did not complete). A server still connecting,
// after a restart or a wake, is waited for; the others are not.
//
// The agent's policy decides first, for the caller ctx carries
// (WithCaller; none is policy.API): a call it denies gets an error
// wrapping ErrToolDenied, one over its rate ErrRateLimited; a call it
// asks about is stored as an approval and waits for a person's answer
// while ctx lasts (approvals.go): the approved call's result, an error
// wrapping ErrApprovalDenied (with the reason) or ErrApprovalExpired, or,
// when ctx ends first, an *ApprovalPendingError (the approval stays
// pending; WithApproval gets its outcome later).
func (a *Agent) CallTool(ctx context.Context, serverID, name string, args any, opts *mcpclient.CallOptions) (*mcp.CallToolResult, error) {
	defer a.hold()()
	return a.policedCall(ctx, serverID, name, args, opts)
}

// policedCall is CallTool without its hold on the agent (StartTaskCall
// holds it as long as the call is the request's): the policy's decision,
// then the call.
func (a *Agent) policedCall(ctx context.Context, serverID, name string, args any, opts *mcpclient.CallOptions) (*mcp.CallToolResult, error) {
	if id, ok := ctx.Value(approvalKey{}).(string); ok && id != "" {
		return a.replay(ctx, id, serverID, name, args)
	}
	d, err := a.admit(ctx, serverID, name, args)
	if err != nil {
		a.auditRefused(ctx, serverID, name, args, err) // audit.go
		return nil, err
	}
	if d.Action == policy.Ask {
		return a.ask(ctx, serverID, name, args)
	}
	return a.callTool(ctx, serverID, name, args, opts)
}

// callTool is the call once the policy let it through.
func (a *Agent) callTool(ctx context.Context, serverID, name string, args any, opts *mcpclient.CallOptions) (*mcp.CallToolResult, error) {
	start := time.Now()
	opts, tc := a.taskOptions(ctx, serverID, opts) // tasks.go
	res, err := a.m.CallTool(ctx, serverID, name, args, opts)
	tc.ended(res, err)
	a.callFailed(ctx, serverID, "tools/call", name, start, err)
	a.auditCalled(ctx, serverID, name, args, start, res, err) // audit.go
	return res, err
}

// ReadResource reads a resource from one of the agent's servers.
func (a *Agent) ReadResource(ctx context.Context, serverID, uri string) (*mcp.ReadResourceResult, error) {
	defer a.hold()()
	start := time.Now()
	res, err := a.m.ReadResource(ctx, serverID, uri)
	a.callFailed(ctx, serverID, "resources/read", safetext.RawURL(uri), start, err)
	return res, err
}

// GetPrompt gets a prompt from one of the agent's servers.
func (a *Agent) GetPrompt(ctx context.Context, serverID, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	defer a.hold()()
	start := time.Now()
	res, err := a.m.GetPrompt(ctx, serverID, name, args)
	a.callFailed(ctx, serverID, "prompts/get", name, start, err)
	return res, err
}

// ListTools returns the tools of the agent's stored servers that f
// selects (an empty f.ServerID means all of them), each tagged with its
// server id, but those the agent's policy denies to the API caller (the
// default caller: see WithCaller).
func (a *Agent) ListTools(f mcpclient.Filter) []mcpclient.Tool {
	tools := listStored(a, f, a.m.ListTools)
	open := a.pol.cur.Load().IsOpen()
	return slices.DeleteFunc(tools, func(t mcpclient.Tool) bool {
		if _, blocked := a.pinBlocked(t.ServerID, &t.Tool, fingerprintOf); blocked { // pins.go
			return true
		}
		return !open && !a.visible(policy.API, t.ServerID, t.Name, t.Annotations)
	})
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

// ServerInfo returns the snapshot of one server registered with the
// agent's Manager (mcpclient.Manager.Server): its live state, its session
// and what it advertised. ok is false for a server not registered.
func (a *Agent) ServerInfo(id string) (mcpclient.ServerInfo, bool) { return a.m.Server(id) }

// AITools returns the tools of the agent's servers that f selects as LLM
// tools, with keys unique over all of them (mcpclient.Manager.AITools):
// what a model adapter needs. It is ToolSet(policy.LLM, f): the tools the
// agent's policy denies the model are left out, and each call goes
// through CallTool as the model's, so that the policy holds when it runs.
func (a *Agent) AITools(f mcpclient.Filter) *aitools.ToolSet { return a.ToolSet(policy.LLM, f) }

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

// TrackedCall is a call whose caller follows the requests for input its
// server makes while it runs (TrackCall): what an API that streams a
// call's progress and questions to its client needs.
type TrackedCall struct {
	// ID identifies the call: the CallID of its elicitations.
	ID       string
	serverID string
	a        *Agent
	changed  chan struct{} // capacity 1
	once     sync.Once
}

// trackedCalls are an agent's tracked calls in flight.
type trackedCalls struct {
	// mu guards byServer.
	mu       sync.Mutex
	byServer map[string][]*TrackedCall
}

type trackedKey struct{}

// TrackCall starts following a call on server serverID: make the call with
// the context it returns, and call End when it returns. The elicitations
// the server makes during the call carry the call's ID (Elicitation.CallID)
// when the agent can tell which call they belong to: the request arrived
// within the call (2026-07-28), or this is the only tracked call in flight
// on that server (a legacy server request carries no call). Changed tells
// when the agent's pending elicitations changed.
func (a *Agent) TrackCall(ctx context.Context, serverID string) (context.Context, *TrackedCall) {
	c := &TrackedCall{ID: rand.Text()[:16], serverID: serverID, a: a, changed: make(chan struct{}, 1)}
	a.tracked.mu.Lock()
	if a.tracked.byServer == nil {
		a.tracked.byServer = map[string][]*TrackedCall{}
	}
	a.tracked.byServer[serverID] = append(a.tracked.byServer[serverID], c)
	a.tracked.mu.Unlock()
	return context.WithValue(ctx, trackedKey{}, c), c
}

// End stops following the call. It is idempotent.
func (c *TrackedCall) End() {
	c.once.Do(func() {
		t := &c.a.tracked
		t.mu.Lock()
		defer t.mu.Unlock()
		calls := slices.DeleteFunc(t.byServer[c.serverID], func(x *TrackedCall) bool { return x == c })
		if len(calls) == 0 {
			delete(t.byServer, c.serverID)
		} else {
			t.byServer[c.serverID] = calls
		}
	})
}

// Changed receives a value after the agent's pending elicitations changed
// (coalesced: one value may stand for several changes).
func (c *TrackedCall) Changed() <-chan struct{} { return c.changed }

// Elicitations returns the pending elicitations of the call, oldest
// first.
func (c *TrackedCall) Elicitations() []Elicitation {
	return slices.DeleteFunc(c.a.pending.list(), func(e Elicitation) bool { return e.CallID != c.ID })
}

// callOf returns the ID of the tracked call an elicitation of serverID,
// asked in ctx, belongs to, or "" when it cannot tell.
func (t *trackedCalls) callOf(ctx context.Context, serverID string) string {
	if c, ok := ctx.Value(trackedKey{}).(*TrackedCall); ok && c.serverID == serverID {
		return c.ID
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if calls := t.byServer[serverID]; len(calls) == 1 {
		return calls[0].ID
	}
	return ""
}

// poke tells every tracked call that the pending elicitations changed.
func (t *trackedCalls) poke() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, calls := range t.byServer {
		for _, c := range calls {
			select {
			case c.changed <- struct{}{}:
			default:
			}
		}
	}
}

// Reload takes in what another process changed in the agent's stored
// servers while it was awake (agentmcp add --db, or import, on the
// database of a running serve): a server stored since is registered and
// connected in the background, as a wake restores it; one deleted since
// is closed and dropped. The servers it knows keep their connections. It
// returns the ids added and removed.
func (a *Agent) Reload(ctx context.Context) (added, removed []string, err error) {
	rows, err := a.st.ListServers(ctx, a.ns)
	if err != nil {
		return nil, nil, fmt.Errorf("reload agent %s: %w: %w", a.ns, ErrStorage, err)
	}
	a.add.Lock()
	defer a.add.Unlock()
	stored := map[string]bool{}
	var fresh []store.Server
	a.mu.Lock()
	for _, row := range rows {
		stored[row.ID] = true
		if _, ok := a.rows[row.ID]; !ok {
			a.rows[row.ID] = row
			a.order = append(a.order, row.ID)
			fresh = append(fresh, row)
			added = append(added, row.ID)
		}
	}
	for _, id := range a.order {
		if !stored[id] {
			if _, adding := a.inflight[id]; !adding {
				removed = append(removed, id)
			}
		}
	}
	a.order = slices.DeleteFunc(a.order, func(id string) bool { return slices.Contains(removed, id) })
	for _, id := range removed {
		delete(a.rows, id)
	}
	a.mu.Unlock()
	for _, id := range removed {
		if err := a.m.RemoveServer(ctx, id); err != nil && !errors.Is(err, mcpclient.ErrNotRegistered) {
			a.logger.Warn("closing a server removed from the store", "server", id, "error", err)
		}
		a.forgetProvider(id)
		a.auths.Delete(id)
	}
	for _, row := range fresh {
		a.restore(ctx, row, nil)
	}
	if len(added)+len(removed) > 0 {
		a.updates.stateChanged()
	}
	return added, removed, nil
}
