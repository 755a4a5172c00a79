package policy_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/policy"
)

// issueExample is the policy of the stored and API form's documentation.
const issueExample = `{"default": "allow",
 "rules": [
   {"match": {"tools": ["github/delete_*"]}, "action": "deny"},
   {"match": {"annotations": {"destructiveHint": true}}, "action": "ask"},
   {"match": {"tools": ["search/*"], "callers": ["llm"]}, "action": "allow", "rate": "10/m"}]}`

func TestDecide(t *testing.T) {
	p, err := policy.Parse([]byte(issueExample))
	if err != nil {
		t.Fatal(err)
	}
	readOnly := policy.Hints{ReadOnly: true, Destructive: false, OpenWorld: true}
	additive := policy.Hints{Destructive: false, OpenWorld: true}
	tests := []struct {
		name string
		call policy.Call
		want policy.Decision
	}{
		{"deny pattern first", policy.Call{Server: "github", Tool: "delete_repo", Hints: additive, Caller: policy.API},
			policy.Decision{Action: policy.Deny, Rule: 0}},
		{"destructive by default annotations", policy.Call{Server: "github", Tool: "create_issue", Hints: policy.HintsOf(nil), Caller: policy.API},
			policy.Decision{Action: policy.Ask, Rule: 1}},
		{"rate for the llm", policy.Call{Server: "search", Tool: "web", Hints: readOnly, Caller: policy.LLM},
			policy.Decision{Action: policy.Allow, Rule: 2, Rate: policy.Rate{N: 10, Per: time.Minute}}},
		{"other caller: the default", policy.Call{Server: "search", Tool: "web", Hints: readOnly, Caller: policy.Gateway},
			policy.Decision{Action: policy.Allow, Rule: -1}},
		{"other server's delete_ not matched", policy.Call{Server: "gitlab", Tool: "delete_repo", Hints: additive, Caller: policy.API},
			policy.Decision{Action: policy.Allow, Rule: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, p.Decide(tt.call)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchConditions(t *testing.T) {
	yes, no := true, false
	call := policy.Call{Server: "docs", Tool: "read_page", Hints: policy.Hints{ReadOnly: true, OpenWorld: true}, Caller: policy.Gateway}
	tests := []struct {
		name  string
		match policy.Match
		want  bool
	}{
		{"empty matches all", policy.Match{}, true},
		{"server pattern alone", policy.Match{Tools: []string{"docs"}}, true},
		{"tool glob", policy.Match{Tools: []string{"d?cs/read_*"}}, true},
		{"tool glob misses", policy.Match{Tools: []string{"docs/write_*"}}, false},
		{"one of the tools", policy.Match{Tools: []string{"x/y", "*/read_page"}}, true},
		{"servers", policy.Match{Servers: []string{"do*"}}, true},
		{"servers miss", policy.Match{Servers: []string{"github"}}, false},
		{"caller", policy.Match{Callers: []policy.Caller{policy.LLM, policy.Gateway}}, true},
		{"caller miss", policy.Match{Callers: []policy.Caller{policy.API}}, false},
		{"hint", policy.Match{Annotations: &policy.Annotations{ReadOnlyHint: &yes}}, true},
		{"hint miss", policy.Match{Annotations: &policy.Annotations{DestructiveHint: &yes}}, false},
		{"open world default", policy.Match{Annotations: &policy.Annotations{OpenWorldHint: &yes, IdempotentHint: &no}}, true},
		{"all must hold", policy.Match{Tools: []string{"docs/*"}, Callers: []policy.Caller{policy.API}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := policy.Policy{Default: policy.Deny, Rules: []policy.Rule{{Match: tt.match, Action: policy.Allow}}}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := p.Decide(call).Action == policy.Allow; got != tt.want {
				t.Errorf("matched = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHintsOf(t *testing.T) {
	f, tr := false, true
	tests := []struct {
		name string
		a    *mcp.ToolAnnotations
		want policy.Hints
	}{
		{"absent: the spec's defaults", nil, policy.Hints{ReadOnly: false, Destructive: true, Idempotent: false, OpenWorld: true}},
		{"empty", &mcp.ToolAnnotations{}, policy.Hints{Destructive: true, OpenWorld: true}},
		{"stated", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f},
			policy.Hints{ReadOnly: true, Idempotent: true}},
		{"destructive stated", &mcp.ToolAnnotations{DestructiveHint: &tr, OpenWorldHint: &tr}, policy.Hints{Destructive: true, OpenWorld: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, policy.HintsOf(tt.a)); diff != "" {
				t.Errorf("HintsOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // in the message
		rule      int    // of the *policy.Error, or -2 for none
	}{
		{"not JSON", `{`, "invalid policy", -2},
		{"unknown field", `{"rules": [{"match": {"tool": ["a"]}, "action": "deny"}]}`, `unknown field "tool"`, -2},
		{"two values", `{} {}`, "more than one", -2},
		{"bad default", `{"default": "maybe"}`, `policy default: "maybe"`, -1},
		{"no action", `{"rules": [{"match": {}}]}`, "rule 0: action: missing", 0},
		{"bad action", `{"rules": [{"match": {}, "action": "allow"}, {"match": {}, "action": "block"}]}`, `rule 1: action: "block"`, 1},
		{"deny with rate", `{"rules": [{"match": {}, "action": "deny", "rate": "1/s"}]}`, "a deny rule takes no rate", 0},
		{"bad rate", `{"rules": [{"match": {}, "action": "allow", "rate": "10/min"}]}`, "the period is s, m or h", 0},
		{"bad tool pattern", `{"rules": [{"match": {"tools": ["ok", "x/"]}, "action": "deny"}]}`, `match.tools[1]: "x/": no tool part`, 0},
		{"upper-case server", `{"rules": [{"match": {"tools": ["GitHub/x"]}, "action": "deny"}]}`, "server ids have lower-case", 0},
		{"server with slash", `{"rules": [{"match": {"servers": ["a/b"]}, "action": "deny"}]}`, "match.servers[0]", 0},
		{"bad caller", `{"rules": [{"match": {"callers": ["user"]}, "action": "deny"}]}`, `match.callers[0]: "user": want llm, api or gateway`, 0},
		{"bad hint type", `{"rules": [{"match": {"annotations": {"readOnlyHint": "yes"}}, "action": "deny"}]}`, "invalid policy", -2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Parse([]byte(tt.doc))
			if !errors.Is(err, policy.ErrInvalid) {
				t.Fatalf("Parse(%s) = %v, want ErrInvalid", tt.doc, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			var perr *policy.Error
			if got := errors.As(err, &perr); got != (tt.rule != -2) || (got && perr.Rule != tt.rule) {
				t.Errorf("error %#v: want an *Error for rule %d", err, tt.rule)
			}
		})
	}
}

func TestTooManyRules(t *testing.T) {
	p := policy.Policy{Rules: make([]policy.Rule, policy.MaxRules+1)}
	if err := p.Validate(); !errors.Is(err, policy.ErrInvalid) {
		t.Fatalf("Validate with %d rules = %v", len(p.Rules), err)
	}
}

func TestParseRate(t *testing.T) {
	good := []struct {
		s    string
		want policy.Rate
	}{
		{"10/m", policy.Rate{N: 10, Per: time.Minute}},
		{"1/s", policy.Rate{N: 1, Per: time.Second}},
		{"1000000/h", policy.Rate{N: 1000000, Per: time.Hour}},
	}
	for _, tt := range good {
		got, err := policy.ParseRate(tt.s)
		if err != nil || got != tt.want || got.String() != tt.s {
			t.Errorf("ParseRate(%q) = %v (%q), %v; want %v", tt.s, got, got.String(), err, tt.want)
		}
	}
	for _, s := range []string{"", "10", "/m", "0/m", "010/m", "-1/m", "+1/m", " 1/m", "1/m ", "1 /m", "1/min", "1/d", "1000001/h", "99999999/s", "1.5/s", "1/M", "10/m/s"} {
		if r, err := policy.ParseRate(s); err == nil {
			t.Errorf("ParseRate(%q) = %v, want an error", s, r)
		}
	}
}

func TestLimiter(t *testing.T) {
	var l policy.Limiter
	r := policy.Rate{N: 10, Per: time.Minute}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		if wait := l.Take("a/t", r, now); wait != 0 {
			t.Fatalf("call %d waits %v", i+1, wait)
		}
	}
	if wait := l.Take("a/t", r, now); wait != 6*time.Second {
		t.Fatalf("11th call in the minute: wait %v, want 6s", wait)
	}
	if wait := l.Take("a/other", r, now); wait != 0 {
		t.Fatalf("another tool waits %v", wait)
	}
	now = now.Add(6 * time.Second)
	if wait := l.Take("a/t", r, now); wait != 0 {
		t.Fatalf("after the wait: %v", wait)
	}
	if wait := l.Take("a/t", r, now); wait != 6*time.Second {
		t.Fatalf("then again: %v", wait)
	}
	if wait := l.Take("a/t", policy.Rate{}, now); wait != 0 {
		t.Fatalf("no limit: %v", wait)
	}
}

func TestPresets(t *testing.T) {
	cautious, ok := policy.Preset(policy.PresetCautious)
	if !ok || cautious.Validate() != nil {
		t.Fatalf("cautious: %v %v", ok, cautious.Validate())
	}
	f := false
	for _, tt := range []struct {
		name string
		a    *mcp.ToolAnnotations
		want policy.Action
	}{
		{"read-only", &mcp.ToolAnnotations{ReadOnlyHint: true}, policy.Allow},
		{"no annotations", nil, policy.Ask},
		{"destructive", &mcp.ToolAnnotations{}, policy.Ask},
		{"additive", &mcp.ToolAnnotations{DestructiveHint: &f}, policy.Ask},
	} {
		if got := cautious.Decide(policy.Call{Server: "s", Tool: "t", Hints: policy.HintsOf(tt.a), Caller: policy.LLM}).Action; got != tt.want {
			t.Errorf("cautious, %s: %s, want %s", tt.name, got, tt.want)
		}
	}
	open, ok := policy.Preset(policy.PresetOpen)
	if !ok || !open.IsOpen() || open.Decide(policy.Call{}).Action != policy.Allow {
		t.Errorf("open preset %+v", open)
	}
	if _, ok := policy.Preset("strict"); ok {
		t.Error("an unknown preset was found")
	}
	if !(policy.Policy{}).IsOpen() || (policy.Policy{Default: policy.Ask}).IsOpen() {
		t.Error("IsOpen")
	}
}

func TestStricter(t *testing.T) {
	for _, tt := range []struct{ a, b, want policy.Action }{
		{policy.Allow, policy.Ask, policy.Ask}, {policy.Deny, policy.Ask, policy.Deny},
		{policy.Ask, policy.Allow, policy.Ask}, {"", "", policy.Allow}, {"", policy.Deny, policy.Deny},
	} {
		if got := policy.Stricter(tt.a, tt.b); got != tt.want {
			t.Errorf("Stricter(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(issueExample))
	f.Add([]byte(`{"rules":[{"match":{"tools":["*"]},"action":"ask","rate":"1/s"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policy.Parse(data)
		if err != nil {
			return
		}
		_ = p.Decide(policy.Call{Server: "a", Tool: "b", Caller: policy.LLM})
		if err := p.Clone().Validate(); err != nil {
			t.Fatalf("a parsed policy's clone is invalid: %v", err)
		}
	})
}

// TestPins: the pins field parses, validates, clones and gives each
// server its reactions, defaults filled in.
func TestPins(t *testing.T) {
	p, err := policy.Parse([]byte(`{"rules":[],"pins":{"changed":"warn","servers":{"gh":{"changed":"accept","new":"hold"},"x":{"new":"hold"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		server string
		want   policy.PinRules
	}{
		{"other", policy.PinRules{Changed: policy.Warn, New: policy.AllowNew}},
		{"gh", policy.PinRules{Changed: policy.Accept, New: policy.HoldNew}},
		{"x", policy.PinRules{Changed: policy.Warn, New: policy.HoldNew}},
	} {
		if got := p.Pins.For(tt.server); got != tt.want {
			t.Errorf("For(%q) = %+v, want %+v", tt.server, got, tt.want)
		}
	}
	if got := (policy.Policy{}).Pins.For("s"); got != (policy.PinRules{Changed: policy.Block, New: policy.AllowNew}) {
		t.Errorf("defaults: %+v", got)
	}
	q := p.Clone()
	q.Pins.Servers["gh"] = policy.PinRules{}
	if p.Pins.Servers["gh"].Changed != policy.Accept {
		t.Error("Clone shares the servers' map")
	}
	for _, doc := range []string{
		`{"rules":[],"pins":{"changed":"ignore"}}`,
		`{"rules":[],"pins":{"new":"deny"}}`,
		`{"rules":[],"pins":{"servers":{"gh":{"changed":"maybe"}}}}`,
		`{"rules":[],"pins":{"servers":{"":{}}}}`,
		`{"rules":[],"pins":{"chnaged":"warn"}}`,
	} {
		if _, err := policy.Parse([]byte(doc)); !errors.Is(err, policy.ErrInvalid) {
			t.Errorf("policy.Parse(%s): %v, want policy.ErrInvalid", doc, err)
		}
	}
}

// TestAudit: the audit field parses, validates and clones; arguments are
// kept in full only when it says "full".
func TestAudit(t *testing.T) {
	p, err := policy.Parse([]byte(`{"rules":[],"audit":{"arguments":"full"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Audit.FullArguments() {
		t.Errorf("audit %+v: FullArguments false", p.Audit)
	}
	q := p.Clone()
	q.Audit.Arguments = policy.ArgumentsHash
	if !p.Audit.FullArguments() {
		t.Error("Clone shares the audit field")
	}
	for _, doc := range []string{`{"rules":[]}`, `{"rules":[],"audit":{}}`, `{"rules":[],"audit":{"arguments":"hash"}}`} {
		p, err := policy.Parse([]byte(doc))
		if err != nil {
			t.Fatalf("policy.Parse(%s): %v", doc, err)
		}
		if p.Audit.FullArguments() {
			t.Errorf("policy.Parse(%s): FullArguments true", doc)
		}
	}
	for _, doc := range []string{
		`{"rules":[],"audit":{"arguments":"some"}}`,
		`{"rules":[],"audit":{"args":"full"}}`,
	} {
		if _, err := policy.Parse([]byte(doc)); !errors.Is(err, policy.ErrInvalid) {
			t.Errorf("policy.Parse(%s): %v, want policy.ErrInvalid", doc, err)
		}
	}
}
