package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// policyAgent opens an agent on st with server "s" (mcptest.NewServer: echo
// is read-only, add idempotent, increment counts its calls and states no
// annotations), on clock.
func policyAgent(t *testing.T, st store.Store, clock *fakeClock, opts *agent.Options) (*agent.Agent, *mcptest.Server) {
	t.Helper()
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	var o agent.Options
	if opts != nil {
		o = *opts
	}
	agent.SetClock(&o, clock.Now)
	a := openAgent(t, st, "policy", &o)
	if _, err := a.AddMCPServer(testCtx(t), "S", hs.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	return a, srv
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)} }

func mustPolicy(t *testing.T, doc string) policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func toolNames(tools []mcpclient.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}

func aiToolKeys(a *agent.Agent) []string {
	var names []string
	for t := range a.AITools(mcpclient.Filter{}).All() {
		names = append(names, t.Name)
	}
	return names
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) == 0 {
		t.Fatalf("result without content: %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result content %T", res.Content[0])
	}
	return tc.Text
}

// TestPolicyDenied checks that a denied tool is left out of AITools and
// ListTools and refused when called, by CallTool and by an AITools tool
// taken before the policy changed (its executor goes through the policy:
// the model reads why), and that the server never sees the call.
func TestPolicyDenied(t *testing.T) {
	ctx := testCtx(t)
	a, srv := policyAgent(t, openSQLite(t, ""), newClock(), nil)
	before := a.AITools(mcpclient.Filter{})
	if err := a.SetPolicy(ctx, mustPolicy(t, `{"rules": [{"match": {"tools": ["s/incr*"]}, "action": "deny"}]}`)); err != nil {
		t.Fatal(err)
	}
	if names := aiToolKeys(a); slices.Contains(names, "increment") || !slices.Contains(names, "echo") {
		t.Errorf("AITools: %v", names)
	}
	if names := toolNames(a.ListTools(mcpclient.Filter{})); slices.Contains(names, "increment") || !slices.Contains(names, "echo") {
		t.Errorf("ListTools: %v", names)
	}
	_, err := a.CallTool(ctx, "s", "increment", nil, nil)
	var denied *agent.ToolDeniedError
	if !errors.Is(err, agent.ErrToolDenied) || !errors.As(err, &denied) || denied.Rule != 0 || denied.Caller != policy.API {
		t.Fatalf("CallTool of a denied tool: %v", err)
	}
	var key string
	for tool := range before.All() {
		if tool.Name == "increment" {
			key = tool.Key
		}
	}
	// A tool failure for the model: an *aitools.ToolError with the text.
	_, err = before.Execute(ctx, key, json.RawMessage(`{}`))
	var toolErr *aitools.ToolError
	if !errors.As(err, &toolErr) || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("an older AITools' execution of a denied tool: %v", err)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("the server ran the denied tool %d times", n)
	}
	if d := a.Decide("s", "increment", policy.LLM); d.Action != policy.Deny {
		t.Errorf("Decide = %+v", d)
	}
}

// TestPolicyCallers checks that a rule for one caller leaves the others
// alone: the model loses the tool, the API keeps it.
func TestPolicyCallers(t *testing.T) {
	ctx := testCtx(t)
	a, srv := policyAgent(t, openSQLite(t, ""), newClock(), nil)
	if err := a.SetPolicy(ctx, mustPolicy(t, `{"rules": [{"match": {"tools": ["s/increment"], "callers": ["llm"]}, "action": "deny"}]}`)); err != nil {
		t.Fatal(err)
	}
	if names := aiToolKeys(a); slices.Contains(names, "increment") {
		t.Errorf("AITools for the model: %v", names)
	}
	if names := toolNames(a.ListTools(mcpclient.Filter{})); !slices.Contains(names, "increment") {
		t.Errorf("ListTools for the API: %v", names)
	}
	if _, err := a.CallTool(ctx, "s", "increment", nil, nil); err != nil {
		t.Fatalf("the API's call: %v", err)
	}
	if _, err := a.CallTool(agent.WithCaller(ctx, policy.LLM), "s", "increment", nil, nil); !errors.Is(err, agent.ErrToolDenied) {
		t.Fatalf("the model's call: %v", err)
	}
	if n := srv.Increments.Load(); n != 1 {
		t.Fatalf("%d calls ran, want 1", n)
	}
}

// TestPolicyRate checks a 10/m rule: the 11th call in the minute is
// refused with the wait, and the call after the wait goes.
func TestPolicyRate(t *testing.T) {
	ctx := testCtx(t)
	clock := newClock()
	a, srv := policyAgent(t, openSQLite(t, ""), clock, nil)
	if err := a.SetPolicy(ctx, mustPolicy(t, `{"rules": [{"match": {"tools": ["s/increment"]}, "action": "allow", "rate": "10/m"}]}`)); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := a.CallTool(ctx, "s", "increment", nil, nil); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err := a.CallTool(ctx, "s", "increment", nil, nil)
	var limited *agent.RateLimitedError
	if !errors.Is(err, agent.ErrRateLimited) || !errors.As(err, &limited) || limited.Wait != 6*time.Second {
		t.Fatalf("11th call: %v", err)
	}
	if _, err := a.CallTool(ctx, "s", "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Fatalf("another tool: %v", err)
	}
	clock.Advance(limited.Wait)
	if _, err := a.CallTool(ctx, "s", "increment", nil, nil); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	if n := srv.Increments.Load(); n != 11 {
		t.Fatalf("%d calls ran, want 11", n)
	}
}

// TestPolicyHook checks the Go hook: it runs after the rules, sees the
// call's arguments, may make a decision stricter, and never looser.
func TestPolicyHook(t *testing.T) {
	ctx := testCtx(t)
	hook := func(_ context.Context, c agent.PolicyCall) policy.Decision {
		if args, ok := c.Arguments.(map[string]any); ok && args["text"] == "secret" {
			return policy.Decision{Action: policy.Deny, Reason: "no secrets"}
		}
		return policy.Decision{Action: policy.Allow}
	}
	a, _ := policyAgent(t, openSQLite(t, ""), newClock(), &agent.Options{PolicyHook: hook})
	if _, err := a.CallTool(ctx, "s", "echo", map[string]any{"text": "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := a.CallTool(ctx, "s", "echo", map[string]any{"text": "secret"}, nil)
	var denied *agent.ToolDeniedError
	if !errors.As(err, &denied) || denied.Reason != "no secrets" {
		t.Fatalf("hook's deny: %v", err)
	}
	if err := a.SetPolicy(ctx, mustPolicy(t, `{"default": "deny", "rules": []}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CallTool(ctx, "s", "echo", map[string]any{"text": "hi"}, nil); !errors.Is(err, agent.ErrToolDenied) {
		t.Fatalf("the hook's allow loosened the rules' deny: %v", err)
	}
}

// TestPolicyStored checks that the policy is kept with the agent, and
// that an invalid one is refused and changes nothing.
func TestPolicyStored(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "agent.db")
	st := openSQLite(t, path)
	a := openAgent(t, st, "stored", nil)
	p := mustPolicy(t, `{"default": "ask", "rules": [{"match": {"annotations": {"readOnlyHint": true}}, "action": "allow", "rate": "5/s"}]}`)
	if err := a.SetPolicy(ctx, p); err != nil {
		t.Fatal(err)
	}
	err := a.SetPolicy(ctx, policy.Policy{Default: "maybe"})
	if !errors.Is(err, agent.ErrInvalidPolicy) {
		t.Fatalf("SetPolicy of an invalid policy: %v", err)
	}
	a.Close(ctx)
	b := openAgent(t, st, "stored", nil)
	got, _ := json.Marshal(b.Policy())
	want, _ := json.Marshal(p)
	if string(got) != string(want) {
		t.Fatalf("policy after a reopen: %s, want %s", got, want)
	}
}

// TestCautiousPreset checks the cautious preset on mcptest's server: the
// read-only tool runs, the others ask.
func TestCautiousPreset(t *testing.T) {
	ctx := testCtx(t)
	a, srv := policyAgent(t, openSQLite(t, ""), newClock(), nil)
	cautious, _ := policy.Preset(policy.PresetCautious)
	if err := a.SetPolicy(ctx, cautious); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CallTool(ctx, "s", "echo", map[string]any{"text": "hi"}, nil); err != nil {
		t.Fatalf("read-only tool: %v", err)
	}
	for _, tool := range []string{"add", "increment"} {
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err := a.CallTool(short, "s", tool, map[string]any{}, nil)
		cancel()
		var pending *agent.ApprovalPendingError
		if !errors.As(err, &pending) || pending.Approval.Tool != tool || pending.Approval.State != store.ApprovalPending {
			t.Fatalf("%s: %v, want an approval pending", tool, err)
		}
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("increment ran %d times without approval", n)
	}
}

// TestCautiousPresetReference: the cautious preset on the reference
// server (server-everything): its read-only tools are allowed (echo runs),
// every other tool asks (toggle-simulated-logging waits for approval and
// does not run before it).
func TestCautiousPresetReference(t *testing.T) {
	peers.Require(t)
	ps := peers.StartEverything(t, "streamableHttp")
	ctx := testCtx(t)
	a := openAgent(t, openSQLite(t, ""), "cautious", nil)
	if _, err := a.AddMCPServer(ctx, "everything", ps.URL, &agent.AddOptions{ID: "e"}); err != nil {
		t.Fatal(err)
	}
	cautious, _ := policy.Preset(policy.PresetCautious)
	if err := a.SetPolicy(ctx, cautious); err != nil {
		t.Fatal(err)
	}
	var readOnly, others int
	for _, tool := range a.ListTools(mcpclient.Filter{}) {
		want := policy.Ask
		if tool.Annotations != nil && tool.Annotations.ReadOnlyHint {
			want, readOnly = policy.Allow, readOnly+1
		} else {
			others++
		}
		if got := a.Decide("e", tool.Name, policy.LLM).Action; got != want {
			t.Errorf("%s: %s, want %s", tool.Name, got, want)
		}
	}
	if readOnly == 0 || others == 0 {
		t.Fatalf("%d read-only tools and %d others: the reference server changed", readOnly, others)
	}
	res, err := a.CallTool(agent.WithCaller(ctx, policy.LLM), "e", "echo", map[string]any{"message": "hi"}, nil)
	if err != nil || !strings.Contains(resultText(t, res), "hi") {
		t.Fatalf("echo: %v %v", res, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = a.CallTool(agent.WithCaller(short, policy.LLM), "e", "toggle-simulated-logging", nil, nil)
	cancel()
	var pending *agent.ApprovalPendingError
	if !errors.As(err, &pending) || pending.Approval.Tool != "toggle-simulated-logging" {
		t.Fatalf("toggle-simulated-logging: %v, want an approval pending", err)
	}
}
