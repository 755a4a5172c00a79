package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// askAll is a policy that asks about every call.
const askAll = `{"default": "ask", "rules": []}`

type callOutcome struct {
	text string
	err  error
}

// callAsync calls tool with args in the background.
func callAsync(ctx context.Context, t *testing.T, a *agent.Agent, tool string, args map[string]any) <-chan callOutcome {
	out := make(chan callOutcome, 1)
	go func() {
		res, err := a.CallTool(ctx, "s", tool, args, nil)
		o := callOutcome{err: err}
		if err == nil && res != nil && len(res.Content) > 0 {
			o.text = resultText(t, res)
		}
		out <- o
	}()
	return out
}

// pendingApproval waits until the agent has a pending approval and
// returns the oldest.
func pendingApproval(t *testing.T, a *agent.Agent) agent.Approval {
	t.Helper()
	ctx := testCtx(t)
	for {
		list, err := a.Approvals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 && list[0].State == store.ApprovalPending {
			return list[0]
		}
		select {
		case <-ctx.Done():
			t.Fatal("no pending approval")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// waitApproval polls approval id until cond holds.
func waitApproval(t *testing.T, a *agent.Agent, id string, cond func(agent.Approval) bool) agent.Approval {
	t.Helper()
	ctx := testCtx(t)
	for {
		ap, err := a.Approval(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if cond(ap) {
			return ap
		}
		select {
		case <-ctx.Done():
			t.Fatalf("approval %s stays %+v", id, ap)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestApprovalApprove checks an ask: the call is stored as an approval
// with its exact arguments, nothing is sent until it is approved, then it
// runs once (a second approve is a no-op), its caller gets the result and
// the result is stored with the approval.
func TestApprovalApprove(t *testing.T) {
	ctx := testCtx(t)
	clock := newClock()
	a, srv := policyAgent(t, openSQLite(t, ""), clock, nil)
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatal(err)
	}
	out := callAsync(agent.WithCaller(ctx, policy.LLM), t, a, "increment", nil)
	ap := pendingApproval(t, a)
	if ap.Tool != "increment" || ap.ServerID != "s" || string(ap.Arguments) != `{}` || ap.Caller != policy.LLM ||
		!ap.RequestedAt.Equal(clock.Now()) || !ap.ExpiresAt.Equal(clock.Now().Add(agent.DefaultApprovalLifetime)) {
		t.Fatalf("approval %+v", ap)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("the tool ran %d times before approval", n)
	}
	if _, err := a.Approve(ctx, ap.ID, false); err != nil {
		t.Fatal(err)
	}
	o := <-out
	if o.err != nil || o.text != "1" {
		t.Fatalf("the caller got %+v", o)
	}
	if again, err := a.Approve(ctx, ap.ID, false); err != nil || again.State == store.ApprovalPending {
		t.Fatalf("second approve: %+v, %v", again, err)
	}
	done := waitApproval(t, a, ap.ID, func(ap agent.Approval) bool { return ap.State == store.ApprovalDone })
	if done.Result == nil || resultText(t, done.Result) != "1" {
		t.Fatalf("stored result %+v", done)
	}
	if _, err := a.Deny(ctx, ap.ID, "late"); !errors.Is(err, agent.ErrApprovalAnswered) {
		t.Fatalf("deny after approve: %v", err)
	}
	if n := srv.Increments.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}

// TestApprovalDeny checks that a deny reaches the caller with its reason,
// and the tool does not run.
func TestApprovalDeny(t *testing.T) {
	ctx := testCtx(t)
	a, srv := policyAgent(t, openSQLite(t, ""), newClock(), nil)
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatal(err)
	}
	out := callAsync(ctx, t, a, "increment", nil)
	ap := pendingApproval(t, a)
	if _, err := a.Deny(ctx, ap.ID, "not on a Friday"); err != nil {
		t.Fatal(err)
	}
	o := <-out
	var denied *agent.ApprovalDeniedError
	if !errors.As(o.err, &denied) || denied.Approval.Reason != "not on a Friday" || !errors.Is(o.err, agent.ErrApprovalDenied) {
		t.Fatalf("the caller got %+v", o)
	}
	if _, err := a.Approve(ctx, ap.ID, false); !errors.Is(err, agent.ErrApprovalAnswered) {
		t.Fatalf("approve after deny: %v", err)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("a denied call ran %d times", n)
	}
}

// TestApprovalExpiry checks expiry on the agent's clock: the caller that
// waits is told, the approval is listed expired and cannot be approved.
func TestApprovalExpiry(t *testing.T) {
	ctx := testCtx(t)
	clock := newClock()
	a, srv := policyAgent(t, openSQLite(t, ""), clock, &agent.Options{ApprovalLifetime: time.Hour})
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatal(err)
	}
	out := callAsync(ctx, t, a, "increment", nil)
	ap := pendingApproval(t, a)
	if !ap.ExpiresAt.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("expiry %v", ap.ExpiresAt)
	}
	clock.Advance(time.Hour)
	list, err := a.Approvals(ctx) // sees it past its expiry
	if err != nil || len(list) != 1 || list[0].State != store.ApprovalExpired {
		t.Fatalf("approvals after the expiry: %+v, %v", list, err)
	}
	if o := <-out; !errors.Is(o.err, agent.ErrApprovalExpired) {
		t.Fatalf("the caller got %+v", o)
	}
	if _, err := a.Approve(ctx, ap.ID, false); !errors.Is(err, agent.ErrApprovalExpired) {
		t.Fatalf("approve after expiry: %v", err)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("an expired call ran %d times", n)
	}
}

// TestApprovalBound checks that an approval runs its own arguments only:
// a call presented with its id and other arguments, or another tool, is
// refused; with the same arguments (in any key order) it gets the
// approval's result and runs nothing more.
func TestApprovalBound(t *testing.T) {
	ctx := testCtx(t)
	a, srv := policyAgent(t, openSQLite(t, ""), newClock(), nil)
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err := a.CallTool(short, "s", "add", map[string]any{"a": 1, "b": 2}, nil)
	cancel()
	var pending *agent.ApprovalPendingError
	if !errors.As(err, &pending) {
		t.Fatalf("call: %v", err)
	}
	id := pending.Approval.ID
	replay := agent.WithApproval(ctx, id)
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{{"add", map[string]any{"a": 1, "b": 3}}, {"add", map[string]any{"a": 1}}, {"echo", map[string]any{"a": 1, "b": 2}}} {
		if _, err := a.CallTool(replay, "s", tt.tool, tt.args, nil); !errors.Is(err, agent.ErrApprovalMismatch) {
			t.Errorf("replay of %s %v: %v", tt.tool, tt.args, err)
		}
	}
	if _, err := a.Approve(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	res, err := a.CallTool(replay, "s", "add", map[string]any{"b": 2, "a": 1}, nil)
	if err != nil || resultText(t, res) != "3" {
		t.Fatalf("replay with the approval's arguments: %v %v", res, err)
	}
	if _, err := a.CallTool(agent.WithApproval(ctx, "ap_unknown"), "s", "add", nil, nil); !errors.Is(err, agent.ErrUnknownApproval) {
		t.Fatalf("unknown approval: %v", err)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatal("increment ran")
	}
}

// TestApprovalRemember checks that approve with remember allows the tool
// from then on.
func TestApprovalRemember(t *testing.T) {
	ctx := testCtx(t)
	a, srv := policyAgent(t, openSQLite(t, ""), newClock(), nil)
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatal(err)
	}
	out := callAsync(ctx, t, a, "increment", nil)
	ap := pendingApproval(t, a)
	if _, err := a.Approve(ctx, ap.ID, true); err != nil {
		t.Fatal(err)
	}
	if o := <-out; o.err != nil {
		t.Fatal(o.err)
	}
	if p := a.Policy(); len(p.Rules) != 1 || p.Rules[0].Action != policy.Allow || p.Rules[0].Match.Tools[0] != "s/increment" {
		t.Fatalf("policy after remember: %+v", p)
	}
	if _, err := a.CallTool(ctx, "s", "increment", nil, nil); err != nil {
		t.Fatalf("call after remember: %v", err)
	}
	if n := srv.Increments.Load(); n != 2 {
		t.Fatalf("%d calls ran, want 2", n)
	}
}

// TestApprovalSurvivesReopen checks that an approval outlives its agent:
// the agent closed (as on a restart or a hibernation) with it pending,
// opened again, it is listed, approved, and the call runs once.
func TestApprovalSurvivesReopen(t *testing.T) {
	ctx := testCtx(t)
	st := openSQLite(t, filepath.Join(t.TempDir(), "agent.db"))
	clock := newClock()
	a, srv := policyAgent(t, st, clock, nil)
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err := a.CallTool(short, "s", "increment", nil, nil)
	cancel()
	var pending *agent.ApprovalPendingError
	if !errors.As(err, &pending) {
		t.Fatalf("call: %v", err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var o agent.Options
	agent.SetClock(&o, clock.Now)
	b := openAgent(t, st, "policy", &o)
	list, err := b.Approvals(ctx)
	if err != nil || len(list) != 1 || list[0].ID != pending.Approval.ID || list[0].State != store.ApprovalPending {
		t.Fatalf("approvals after a reopen: %+v, %v", list, err)
	}
	if _, err := b.Approve(ctx, list[0].ID, false); err != nil {
		t.Fatal(err)
	}
	done := waitApproval(t, b, list[0].ID, func(ap agent.Approval) bool { return ap.State == store.ApprovalDone })
	if done.Result == nil || resultText(t, done.Result) != "1" || srv.Increments.Load() != 1 {
		t.Fatalf("after approval: %+v, %d calls", done, srv.Increments.Load())
	}
}

// TestApprovalMetrics: approvals requested, answered (by decision),
// expired, and the time to a decision are recorded on the agent's meter.
func TestApprovalMetrics(t *testing.T) {
	rec := oteltest.New(t)
	ctx := testCtx(t)
	clock := newClock()
	a, _ := policyAgent(t, openSQLite(t, ""), clock, &agent.Options{MeterProvider: rec.MeterProvider})
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatal(err)
	}
	ask := func() string {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := a.CallTool(short, "s", "echo", map[string]any{"text": "x"}, nil)
		var pending *agent.ApprovalPendingError
		if !errors.As(err, &pending) {
			t.Fatalf("call: %v", err)
		}
		return pending.Approval.ID
	}
	approved, denied, expired := ask(), ask(), ask()
	clock.Advance(90 * time.Second)
	if _, err := a.Approve(ctx, approved, false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Deny(ctx, denied, ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(agent.DefaultApprovalLifetime)
	if ap, err := a.Approval(ctx, expired); err != nil || ap.State != store.ApprovalExpired {
		t.Fatalf("third approval: %+v %v", ap, err)
	}
	var rm metricdata.ResourceMetrics
	if err := rec.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		attrs map[string]string
		want  int64
	}{
		{"agentmcp.approvals.requested", nil, 3},
		{"agentmcp.approvals.answered", map[string]string{"decision": "approve"}, 1},
		{"agentmcp.approvals.answered", map[string]string{"decision": "deny"}, 1},
		{"agentmcp.approvals.expired", nil, 1},
	} {
		if got := oteltest.IntValue(rm, tt.name, tt.attrs); got != tt.want {
			t.Errorf("%s %v = %d, want %d", tt.name, tt.attrs, got, tt.want)
		}
	}
	if n := oteltest.HistogramCount(rm, "agentmcp.approvals.decision_time", nil); n != 2 {
		t.Errorf("decision_time has %d values, want 2", n)
	}
}

// TestApprovalSurvivesHibernation: an approval left pending (its caller
// gone) does not keep the agent awake; the agent hibernates, and woken it
// lists the approval, which approved runs once.
func TestApprovalSurvivesHibernation(t *testing.T) {
	ctx := testCtx(t)
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	h := agent.NewHost(openSQLite(t, ""), nil)
	t.Cleanup(func() { h.Close(context.Background()) })
	a, release, err := h.Use(ctx, "TestAgent", "sleepy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMCPServer(ctx, "S", hs.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = a.CallTool(short, "s", "increment", nil, nil)
	cancel()
	var pending *agent.ApprovalPendingError
	if !errors.As(err, &pending) {
		t.Fatalf("call: %v", err)
	}
	release()
	if !h.Hibernate(ctx, "TestAgent", "sleepy") {
		t.Fatal("the agent with a pending approval and no caller did not hibernate")
	}
	b, release, err := h.Use(ctx, "TestAgent", "sleepy")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	list, err := b.Approvals(ctx)
	if err != nil || len(list) != 1 || list[0].ID != pending.Approval.ID || list[0].State != store.ApprovalPending {
		t.Fatalf("approvals after the wake: %+v %v", list, err)
	}
	if _, err := b.Approve(ctx, list[0].ID, false); err != nil {
		t.Fatal(err)
	}
	res, err := b.CallTool(agent.WithApproval(ctx, list[0].ID), "s", "increment", nil, nil)
	if err != nil || resultText(t, res) != "1" || srv.Increments.Load() != 1 {
		t.Fatalf("after approval: %v %v, %d calls", res, err, srv.Increments.Load())
	}
}

// TestPolicyUnderDirectory: an agent opened under a Directory claim (as
// replicas open theirs, through a fenced store) keeps a policy and
// approvals: the ask is stored, approved, and runs once.
func TestPolicyUnderDirectory(t *testing.T) {
	ctx := testCtx(t)
	s := serve(t, mcptest.Stateful)
	h, _ := newHost(t, openSQLite(t, ""), &agent.HostOptions{Directory: &directory{t: t, owners: map[string]string{}}})
	a, release := use(t, h, "fenced")
	defer release()
	if _, err := a.AddMCPServer(ctx, "s", s.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetPolicy(ctx, mustPolicy(t, askAll)); err != nil {
		t.Fatalf("SetPolicy under a Directory: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err := a.CallTool(short, "s", "increment", nil, nil)
	cancel()
	var pending *agent.ApprovalPendingError
	if !errors.As(err, &pending) {
		t.Fatalf("call: %v", err)
	}
	if _, err := a.Approve(ctx, pending.Approval.ID, false); err != nil {
		t.Fatal(err)
	}
	res, err := a.CallTool(agent.WithApproval(ctx, pending.Approval.ID), "s", "increment", nil, nil)
	if err != nil || resultText(t, res) != "1" {
		t.Fatalf("after approval: %v %v", res, err)
	}
}
