// Package policy is an agent's tool policy: which calls of which tools
// are allowed, denied, or asked of a person first, for which callers, and
// how often. It is pure: no I/O, no clock of its own; package agent keeps
// a policy with each agent, enforces it wherever a call is made, and turns
// an ask into a durable approval.
//
// # Usage
//
// A Policy is ordered rules, each a Match and an Action (and, for allow
// and ask, an optional Rate); the first rule that matches a call decides,
// else the Default:
//
//	p, err := policy.Parse([]byte(`{"default": "allow", "rules": [
//		{"match": {"tools": ["github/delete_*"]}, "action": "deny"},
//		{"match": {"annotations": {"destructiveHint": true}}, "action": "ask"},
//		{"match": {"tools": ["search/*"], "callers": ["llm"]}, "action": "allow", "rate": "10/m"}]}`))
//	d := p.Decide(policy.Call{Server: "github", Tool: "delete_repo", Hints: policy.HintsOf(tool.Annotations), Caller: policy.LLM})
//	// d.Action == policy.Deny, d.Rule == 0
//
// A Match's conditions all hold for a match (an empty Match matches every
// call): Tools are "SERVER" or "SERVER/TOOL" patterns with * and ?, as in
// the agent's exposure rules; Servers are server id patterns;
// Annotations are hints the tool must have, absent ones taking the MCP
// specification's defaults (HintsOf); Callers are "llm" (the agent's
// model loop), "api" (the HTTP API, the CLI, a Go program) and "gateway"
// (a client of the agent's MCP endpoint).
//
// Presets: "open" allows everything; "cautious" allows read-only tools
// and asks for the others (Preset).
//
// A Policy's Pins say how the agent reacts when a server's tool
// definition differs from the one it pinned: "changed" is block (the
// default: the tool is left out and its calls refused until a person
// accepts it), warn (it stays, marked) or accept (re-pinned silently);
// "new" is allow (the default) or hold (a tool listed after the server's
// first listing waits for a person). "servers" overrides them per server
// id; Pins.For gives a server's reactions:
//
//	"pins": {"changed": "block", "new": "allow",
//	         "servers": {"github": {"changed": "warn", "new": "hold"}}}
//
// A Policy's Audit says what the agent's audit log keeps of each call's
// arguments: their SHA-256 only (the default), or with "full" the
// arguments too, sealed by the store's cipher:
//
//	"audit": {"arguments": "full"}
//
// A Limiter enforces the rules' rates ("10/m": ten calls a minute per
// tool) on a clock the caller gives.
//
// # Concurrency
//
// A Policy is a value: Decide may be called concurrently as long as no one
// modifies it. A Limiter is safe for concurrent use.
//
// # Errors
//
// Parse and Validate return errors wrapping ErrInvalid; an *Error names
// the rule and field refused and why. ParseRate's errors say what a rate
// looks like.
package policy
