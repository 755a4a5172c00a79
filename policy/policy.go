package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Action is what a policy does with a call.
type Action string

// The actions. The zero Action, in Policy.Default, means Allow.
const (
	Allow Action = "allow" // the call runs
	Deny  Action = "deny"  // the call is refused, and the tool is not listed
	Ask   Action = "ask"   // a person approves each call before it runs
)

// Caller is who makes a call.
type Caller string

// The callers.
const (
	LLM     Caller = "llm"     // the agent's own model loop, through AITools
	API     Caller = "api"     // the HTTP API, the CLI, or a Go program
	Gateway Caller = "gateway" // a client of the agent's MCP endpoint
)

// Callers are the known callers, in the order documented.
var callers = []Caller{LLM, API, Gateway}

// Callers returns the known callers, in the order documented.
func Callers() []Caller { return slices.Clone(callers) }

// Limits of a Policy.
const (
	MaxRules    = 100 // rules in a Policy
	MaxPatterns = 100 // patterns in one rule's tools, and in its servers
)

// Policy is an agent's tool policy, in its stored and API form:
//
//	{"default": "allow",
//	 "rules": [
//	   {"match": {"tools": ["github/delete_*"]}, "action": "deny"},
//	   {"match": {"annotations": {"destructiveHint": true}}, "action": "ask"},
//	   {"match": {"tools": ["search/*"], "callers": ["llm"]}, "action": "allow", "rate": "10/m"}]}
//
// Rules are tried in order and the first whose Match matches the call
// decides; when none does, Default decides. The zero Policy allows
// everything.
type Policy struct {
	// Default is the action when no rule matches; "" means Allow.
	Default Action `json:"default,omitempty"`
	Rules   []Rule `json:"rules"`
	// Pins are the reactions to the servers' tool definitions changing
	// after the agent pinned them (see Pins); nil means the defaults:
	// a changed tool is blocked, a new one allowed.
	Pins *Pins `json:"pins,omitempty"`
	// Audit says what the agent's audit log keeps (see Audit); nil means
	// the arguments' hash only.
	Audit *Audit `json:"audit,omitempty"`
}

// Rule is one rule of a Policy.
type Rule struct {
	Match  Match  `json:"match"`
	Action Action `json:"action"`
	// Rate, on allow and ask only, limits the calls of each tool the rule
	// matches, per agent: "N/s", "N/m" or "N/h" (see ParseRate). Empty
	// means no limit.
	Rate string `json:"rate,omitempty"`
}

// Match says which calls a Rule applies to. Every condition given must
// hold (an empty Match matches every call); within a list, one entry is
// enough.
type Match struct {
	// Tools are tool patterns, as in the agent's exposure rules: "SERVER"
	// (every tool of the server) or "SERVER/TOOL", where SERVER matches
	// server ids and TOOL MCP tool names, with "*" for any run of
	// characters and "?" for one.
	Tools []string `json:"tools,omitempty"`
	// Servers are server id patterns, with the same wildcards.
	Servers []string `json:"servers,omitempty"`
	// Annotations match the tool's annotations: each hint given must equal
	// the tool's, where a tool that does not state a hint has the MCP
	// specification's default (readOnlyHint false, destructiveHint true,
	// idempotentHint false, openWorldHint true).
	Annotations *Annotations `json:"annotations,omitempty"`
	// Callers are the callers the rule applies to ("llm", "api",
	// "gateway").
	Callers []Caller `json:"callers,omitempty"`
}

// Annotations are the hints a Match asks for; nil means any.
type Annotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Hints are a tool's annotations with the specification's defaults
// filled in.
type Hints struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// HintsOf returns the hints of a tool's annotations; nil annotations, or
// a hint a tool does not state, take the specification's defaults.
func HintsOf(a *mcp.ToolAnnotations) Hints {
	h := Hints{Destructive: true, OpenWorld: true}
	if a == nil {
		return h
	}
	h.ReadOnly, h.Idempotent = a.ReadOnlyHint, a.IdempotentHint
	if a.DestructiveHint != nil {
		h.Destructive = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		h.OpenWorld = *a.OpenWorldHint
	}
	return h
}

// Call is what a policy decides on: a call of tool Tool of server Server
// by Caller, the tool's annotations being Hints.
type Call struct {
	Server string
	Tool   string
	Hints  Hints
	Caller Caller
}

// Decision is a policy's answer for a call.
type Decision struct {
	Action Action
	// Rule is the index of the rule that decided, -1 for the default (or
	// for a decision made elsewhere, such as a hook).
	Rule int
	// Rate is the limit on the tool's calls, the zero Rate for none.
	Rate Rate
	// Reason says why, for a deny or an ask made elsewhere than in the
	// rules (the rules' reason is their index); it may be shown to a
	// model.
	Reason string
}

// ErrInvalid is wrapped by the errors of Validate and Parse.
var ErrInvalid = errors.New("invalid policy")

// Error is a part of a policy that Validate refused.
type Error struct {
	// Rule is the index of the rule, -1 for the policy's default.
	Rule int
	// Field names the part: "action", "match.tools[2]", "rate"...
	Field  string
	Reason string
}

func (e *Error) Error() string {
	if e.Rule < 0 {
		return fmt.Sprintf("policy %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("policy rule %d: %s: %s", e.Rule, e.Field, e.Reason)
}

func (e *Error) Unwrap() error { return ErrInvalid }

// Parse decodes a policy from its JSON form and validates it. Unknown
// fields are refused, so that a misspelt key does not silently match
// everything.
func Parse(data []byte) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if dec.More() {
		return Policy{}, fmt.Errorf("%w: more than one JSON value", ErrInvalid)
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// Validate checks the policy: it returns nil, or an error wrapping
// ErrInvalid (an *Error names the first bad part).
func (p Policy) Validate() error {
	if !validAction(p.Default, true) {
		return &Error{Rule: -1, Field: "default", Reason: fmt.Sprintf("%q: want allow, deny or ask", p.Default)}
	}
	if len(p.Rules) > MaxRules {
		return fmt.Errorf("%w: %d rules, at most %d", ErrInvalid, len(p.Rules), MaxRules)
	}
	for i, r := range p.Rules {
		if err := r.validate(i); err != nil {
			return err
		}
	}
	if err := p.Pins.validate(); err != nil {
		return err
	}
	return p.Audit.validate()
}

func (r Rule) validate(i int) error {
	bad := func(field, format string, args ...any) error {
		return &Error{Rule: i, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if r.Action == "" {
		return bad("action", "missing: want allow, deny or ask")
	}
	if !validAction(r.Action, false) {
		return bad("action", "%q: want allow, deny or ask", r.Action)
	}
	if r.Rate != "" {
		if r.Action == Deny {
			return bad("rate", "a deny rule takes no rate")
		}
		if _, err := ParseRate(r.Rate); err != nil {
			return bad("rate", "%v", err)
		}
	}
	m := r.Match
	if len(m.Tools) > MaxPatterns || len(m.Servers) > MaxPatterns {
		return bad("match", "more than %d patterns", MaxPatterns)
	}
	for j, t := range m.Tools {
		if reason := CheckToolPattern(t); reason != "" {
			return bad(fmt.Sprintf("match.tools[%d]", j), "%q: %s", t, reason)
		}
	}
	for j, s := range m.Servers {
		if reason := checkServerPattern(s); reason != "" {
			return bad(fmt.Sprintf("match.servers[%d]", j), "%q: %s", s, reason)
		}
	}
	for j, c := range m.Callers {
		if !slices.Contains(callers, c) {
			return bad(fmt.Sprintf("match.callers[%d]", j), "%q: want llm, api or gateway", c)
		}
	}
	return nil
}

func validAction(a Action, emptyOK bool) bool {
	switch a {
	case Allow, Deny, Ask:
		return true
	case "":
		return emptyOK
	}
	return false
}

// IsOpen reports whether p allows every call without a limit, as the zero
// Policy does: then it need not be consulted.
func (p Policy) IsOpen() bool {
	return len(p.Rules) == 0 && (p.Default == "" || p.Default == Allow)
}

// NeedsHints reports whether a rule of p matches on annotations: only
// then does a decision depend on Call.Hints.
func (p Policy) NeedsHints() bool {
	return slices.ContainsFunc(p.Rules, func(r Rule) bool { return r.Match.Annotations != nil })
}

// Decide returns the decision of p, which must be valid, for c: the first
// rule that matches decides, else the default.
func (p Policy) Decide(c Call) Decision {
	for i, r := range p.Rules {
		if r.Match.matches(c) {
			d := Decision{Action: r.Action, Rule: i}
			if r.Rate != "" {
				d.Rate, _ = ParseRate(r.Rate)
			}
			return d
		}
	}
	d := Decision{Action: p.Default, Rule: -1}
	if d.Action == "" {
		d.Action = Allow
	}
	return d
}

func (m Match) matches(c Call) bool {
	if len(m.Tools) > 0 && !slices.ContainsFunc(m.Tools, func(p string) bool { return MatchTool(p, c.Server, c.Tool) }) {
		return false
	}
	if len(m.Servers) > 0 && !slices.ContainsFunc(m.Servers, func(p string) bool { return Glob(p, c.Server) }) {
		return false
	}
	if len(m.Callers) > 0 && !slices.Contains(m.Callers, c.Caller) {
		return false
	}
	if a := m.Annotations; a != nil {
		for _, h := range []struct {
			want *bool
			got  bool
		}{{a.ReadOnlyHint, c.Hints.ReadOnly}, {a.DestructiveHint, c.Hints.Destructive},
			{a.IdempotentHint, c.Hints.Idempotent}, {a.OpenWorldHint, c.Hints.OpenWorld}} {
			if h.want != nil && *h.want != h.got {
				return false
			}
		}
	}
	return true
}

// Stricter returns the stricter of two actions: deny over ask over allow
// ("" counts as allow).
func Stricter(a, b Action) Action {
	rank := func(x Action) int {
		switch x {
		case Deny:
			return 2
		case Ask:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	if a == "" {
		return Allow
	}
	return a
}

// Clone returns a deep copy of p, with non-nil Rules.
func (p Policy) Clone() Policy {
	q := Policy{Default: p.Default, Rules: make([]Rule, len(p.Rules)), Pins: p.Pins.clone(), Audit: p.Audit.clone()}
	for i, r := range p.Rules {
		r.Match.Tools = slices.Clone(r.Match.Tools)
		r.Match.Servers = slices.Clone(r.Match.Servers)
		r.Match.Callers = slices.Clone(r.Match.Callers)
		if a := r.Match.Annotations; a != nil {
			c := *a
			r.Match.Annotations = &c
		}
		q.Rules[i] = r
	}
	return q
}

// Preset names.
const (
	PresetOpen     = "open"
	PresetCautious = "cautious"
)

// Presets lists the preset names.
func Presets() []string { return []string{PresetOpen, PresetCautious} }

// Preset returns the policy named name: "open" allows everything (an
// agent's policy when none is set); "cautious" allows read-only tools and
// asks for every other call (tools that say they are destructive, and
// tools without annotations, which the specification's defaults make
// destructive, among them). ok is false for an unknown name.
func Preset(name string) (p Policy, ok bool) {
	yes := true
	switch name {
	case PresetOpen:
		return Policy{Default: Allow, Rules: []Rule{}}, true
	case PresetCautious:
		return Policy{Default: Ask, Rules: []Rule{
			{Match: Match{Annotations: &Annotations{ReadOnlyHint: &yes}}, Action: Allow},
			{Match: Match{Annotations: &Annotations{DestructiveHint: &yes}}, Action: Ask},
		}}, true
	}
	return Policy{}, false
}
