package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// The agent's tool policy (package policy): which of its tools each caller
// may call, which ask a person first (approvals.go), and how often. It is
// enforced where a call is made (CallTool, the AITools executor, and so
// the API, the CLI and the gateway) and where tools are listed (AITools,
// ListTools, the gateway's list).

// ErrToolDenied is wrapped by the error of a call the agent's policy (or
// its PolicyHook, or for the gateway its exposure rules) refuses; a
// *ToolDeniedError says which.
var ErrToolDenied = errors.New("agent: tool denied by policy")

// ErrRateLimited is wrapped by the error of a call over its rule's rate;
// a *RateLimitedError says how long to wait.
var ErrRateLimited = errors.New("agent: tool call rate limited")

// ErrInvalidPolicy is wrapped (with policy.ErrInvalid) by SetPolicy's
// error for a policy that is not valid.
var ErrInvalidPolicy = policy.ErrInvalid

// ErrPolicyUnsupported is wrapped by SetPolicy's error when the agent's
// store cannot keep a policy (it does not implement store.PolicyStore).
var ErrPolicyUnsupported = errors.New("the store cannot keep a tool policy")

// ToolDeniedError is a call the policy refused.
type ToolDeniedError struct {
	ServerID, Tool string
	Caller         policy.Caller
	// Rule is the index of the policy's rule that denied, -1 for its
	// default, the exposure rules or the hook (see Reason).
	Rule   int
	Reason string
}

func (e *ToolDeniedError) Error() string {
	return fmt.Sprintf("tool %q of MCP server %q is denied to the %s caller: %s", e.Tool, e.ServerID, e.Caller, e.Reason)
}

func (e *ToolDeniedError) Unwrap() error { return ErrToolDenied }

// RateLimitedError is a call over the rate of its rule.
type RateLimitedError struct {
	ServerID, Tool string
	Rate           policy.Rate
	// Wait is how long until the tool may be called again.
	Wait time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("tool %q of MCP server %q is limited to %s: try again in %v", e.Tool, e.ServerID, e.Rate, e.Wait.Round(time.Millisecond))
}

func (e *RateLimitedError) Unwrap() error { return ErrRateLimited }

// PolicyCall is what a PolicyHook decides on.
type PolicyCall struct {
	ServerID, Tool string
	// Arguments are the call's, as given to CallTool.
	Arguments any
	Caller    policy.Caller
	// Tool's annotations, nil when the tool is not in the catalog or
	// states none.
	Annotations *mcp.ToolAnnotations
	// Decision is the stored rules' decision.
	Decision policy.Decision
}

// PolicyHook makes dynamic decisions on calls: it runs after the stored
// rules (unless they deny) and its decision counts when it is stricter
// (deny over ask over allow); the zero Decision is allow. It is called on
// every call from several goroutines, and must be quick and safe for
// concurrent use. Listings apply the stored rules only.
type PolicyHook func(ctx context.Context, call PolicyCall) policy.Decision

type callerKey struct{}

// WithCaller returns ctx telling the agent who makes the calls made with
// it: the API sets policy.API, the gateway policy.Gateway, and the AITools
// executor policy.LLM. A call whose context carries no caller is an API
// call (a Go program's own call, like the CLI's).
func WithCaller(ctx context.Context, c policy.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the caller ctx carries (WithCaller), policy.API when
// none.
func CallerOf(ctx context.Context) policy.Caller {
	if c, ok := ctx.Value(callerKey{}).(policy.Caller); ok {
		return c
	}
	return policy.API
}

// agentPolicy is what the agent keeps of its policy.
type agentPolicy struct {
	cur atomic.Pointer[policy.Policy] // never nil once open
	// mu serialises SetPolicy's writes (held across the store write).
	mu      sync.Mutex
	limiter policy.Limiter

	// setsMu guards sets.
	setsMu sync.Mutex
	sets   map[policy.Caller]toolSetCache
}

// toolSetCache is the last ToolSet given to a caller and what it was made
// from: an unchanged catalog and policy give it again.
type toolSetCache struct {
	from *aitools.ToolSet
	pol  *policy.Policy
	exp  *Exposure
	pins uint64 // the pins' generation
	out  *aitools.ToolSet
}

// Policy returns a copy of the agent's tool policy.
func (a *Agent) Policy() policy.Policy { return a.pol.cur.Load().Clone() }

// SetPolicy validates, stores and applies the agent's tool policy,
// replacing the previous one; the zero Policy (or the "open" preset)
// allows everything. The policy is kept with the agent in its store
// (store.PolicyStore) and comes back when it is opened again. The change
// is reported to OnMCPUpdate listeners and watchers like a change of the
// servers, so that a gateway following the agent updates its list. An
// invalid policy gives an error wrapping ErrInvalidPolicy; a store failure
// one wrapping ErrStorage; nothing changes then.
func (a *Agent) SetPolicy(ctx context.Context, p policy.Policy) error {
	a.pol.mu.Lock()
	defer a.pol.mu.Unlock()
	return a.setPolicyLocked(ctx, p)
}

func (a *Agent) setPolicyLocked(ctx context.Context, p policy.Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	ps, ok := a.st.(store.PolicyStore)
	if !ok {
		return fmt.Errorf("agent %s: set policy: %w", a.ns, ErrPolicyUnsupported)
	}
	p = p.Clone()
	var doc json.RawMessage
	if !(p.IsOpen() && p.Default == "" && p.Pins == nil && p.Audit == nil) {
		var err error
		if doc, err = json.Marshal(p); err != nil {
			return err
		}
	}
	if err := ps.PutPolicy(ctx, a.ns, doc); err != nil {
		return fmt.Errorf("agent %s: set policy: %w: %w", a.ns, ErrStorage, err)
	}
	a.pol.cur.Store(&p)
	a.updates.stateChanged()
	return nil
}

// allowTool adds a rule allowing every call of tool of serverID ahead of
// the others (an approval's remember).
func (a *Agent) allowTool(ctx context.Context, serverID, tool string) error {
	a.pol.mu.Lock()
	defer a.pol.mu.Unlock()
	p := a.pol.cur.Load().Clone()
	pattern := serverID + "/" + tool
	if reason := policy.CheckToolPattern(pattern); reason != "" {
		return fmt.Errorf("cannot remember %s: %s", pattern, reason)
	}
	p.Rules = slices.Insert(p.Rules, 0, policy.Rule{Match: policy.Match{Tools: []string{pattern}}, Action: policy.Allow})
	return a.setPolicyLocked(ctx, p)
}

// loadPolicy reads the stored policy, when the store keeps one.
func (a *Agent) loadPolicy(ctx context.Context) error {
	p := policy.Policy{Rules: []policy.Rule{}}
	if ps, ok := a.st.(store.PolicyStore); ok {
		doc, err := ps.GetPolicy(ctx, a.ns)
		if err != nil {
			return err
		}
		if len(doc) > 0 {
			if p, err = policy.Parse(doc); err != nil {
				return fmt.Errorf("the stored policy: %w", err)
			}
		}
	}
	a.pol.cur.Store(&p)
	return nil
}

// Decide returns the decision of the agent's stored rules (and, for the
// gateway, its exposure rules) on a call of tool of serverID by caller,
// without counting it against a rate and without the PolicyHook: what a
// list or a dashboard shows as the tool's effective action.
func (a *Agent) Decide(serverID, tool string, caller policy.Caller) policy.Decision {
	return a.decide(serverID, tool, caller, func() *mcp.ToolAnnotations { return a.annotations(serverID, tool) })
}

func (a *Agent) decide(serverID, tool string, caller policy.Caller, ann func() *mcp.ToolAnnotations) policy.Decision {
	if caller == policy.Gateway && !a.Exposes(serverID, tool) {
		return policy.Decision{Action: policy.Deny, Rule: -1, Reason: "not exposed by the agent's exposure rules"}
	}
	p := a.pol.cur.Load()
	if p.IsOpen() {
		return policy.Decision{Action: policy.Allow, Rule: -1}
	}
	c := policy.Call{Server: serverID, Tool: tool, Caller: caller}
	if p.NeedsHints() {
		c.Hints = policy.HintsOf(ann())
	}
	return p.Decide(c)
}

// annotations returns the annotations of tool of serverID in the catalog,
// nil when it is not there or states none.
func (a *Agent) annotations(serverID, tool string) *mcp.ToolAnnotations {
	for _, t := range a.m.ListTools(mcpclient.Filter{ServerID: []string{serverID}}) {
		if t.Name == tool {
			return t.Annotations
		}
	}
	return nil
}

// admit decides on a call: an error wrapping ErrToolDenied or
// ErrRateLimited when it may not go, else the decision (allow or ask).
func (a *Agent) admit(ctx context.Context, serverID, tool string, args any) (policy.Decision, error) {
	caller := CallerOf(ctx)
	if err := a.CheckPin(ctx, serverID, tool); err != nil { // pins.go
		return policy.Decision{Action: policy.Deny, Rule: -1}, err
	}
	var ann *mcp.ToolAnnotations
	looked := false
	lookup := func() *mcp.ToolAnnotations {
		if !looked {
			ann, looked = a.annotations(serverID, tool), true
		}
		return ann
	}
	d := a.decide(serverID, tool, caller, lookup)
	if d.Action != policy.Deny && a.opts.PolicyHook != nil {
		h := a.opts.PolicyHook(ctx, PolicyCall{ServerID: serverID, Tool: tool, Arguments: args, Caller: caller, Annotations: lookup(), Decision: d})
		if act := policy.Stricter(d.Action, h.Action); act != d.Action {
			reason := h.Reason
			if reason == "" {
				reason = "the agent's policy hook"
			}
			d = policy.Decision{Action: act, Rule: -1, Rate: d.Rate, Reason: reason}
		}
	}
	if d.Action == policy.Deny {
		return d, DeniedError(serverID, tool, caller, d)
	}
	if wait := a.pol.limiter.Take(serverID+"/"+tool, d.Rate, a.now()); wait > 0 {
		return d, &RateLimitedError{ServerID: serverID, Tool: tool, Rate: d.Rate, Wait: wait}
	}
	return d, nil
}

// visible reports whether the stored rules let caller see tool t.
func (a *Agent) visible(caller policy.Caller, serverID, name string, ann *mcp.ToolAnnotations) bool {
	return a.decide(serverID, name, caller, func() *mcp.ToolAnnotations { return ann }).Action != policy.Deny
}

// ToolSet returns the tools of the agent's servers that f selects as LLM
// tools for caller (AITools is ToolSet(policy.LLM, f)): the tools the
// policy denies caller are left out, and each call goes through CallTool
// as caller, so that the policy is enforced when the tool runs. A call the
// policy refuses, or a person denies, is a result with IsError that says
// why, for the model to read. Keys are those of Manager.AITools.
func (a *Agent) ToolSet(caller policy.Caller, f mcpclient.Filter) *aitools.ToolSet {
	from := a.m.AITools(f)
	pol, exp, pins := a.pol.cur.Load(), a.exposure.Load(), a.pins.gen.Load()
	a.pol.setsMu.Lock()
	c, ok := a.pol.sets[caller]
	a.pol.setsMu.Unlock()
	if ok && c.from == from && c.pol == pol && c.pins == pins && (caller != policy.Gateway || c.exp == exp) {
		return c.out
	}
	call := func(ctx context.Context, serverID, name string, args map[string]any) (*mcp.CallToolResult, error) {
		res, err := a.CallTool(WithCaller(ctx, caller), serverID, name, args, nil)
		if msg, ok := refusal(err); ok {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
		}
		return res, err
	}
	out := from.Through(call, func(t *aitools.Tool) bool {
		var ann *mcp.ToolAnnotations
		if t.Def != nil {
			if _, blocked := a.pinBlocked(t.ServerID, t.Def, a.pins.fingerprint); blocked { // pins.go
				return false
			}
			ann = t.Def.Annotations
		}
		if caller == policy.LLM && t.AppOnly() {
			return false // meant for its server's views alone (MCP Apps)
		}
		return a.visible(caller, t.ServerID, t.Name, ann)
	})
	a.pol.setsMu.Lock()
	if a.pol.sets == nil {
		a.pol.sets = map[policy.Caller]toolSetCache{}
	}
	a.pol.sets[caller] = toolSetCache{from: from, pol: pol, exp: exp, pins: pins, out: out}
	a.pol.setsMu.Unlock()
	return out
}

// refusal returns what a model reads of a call the policy or a person
// refused, false for any other error.
func refusal(err error) (string, bool) {
	var denied *ApprovalDeniedError
	switch {
	case err == nil:
		return "", false
	case errors.As(err, &denied):
		return denied.Error(), true
	case errors.Is(err, ErrToolDenied), errors.Is(err, ErrRateLimited), errors.Is(err, ErrApprovalExpired), errors.Is(err, ErrToolChanged):
		return err.Error(), true
	}
	return "", false
}
