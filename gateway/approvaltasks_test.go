package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// TestApprovalAsTask: a 2026-07-28 client that declares the tasks
// extension (a Manager) gets a call the agent's policy asks about as a
// task, at once, though no upstream server offers tasks: the gateway
// offers the extension while its policy may ask; tasks/get shows the
// task working, naming the approval; the result arrives once a person
// approves and the call ran (once). A deny completes the task with a
// tool error carrying the reason; a cancel of a pending one denies it.
func TestApprovalAsTask(t *testing.T) {
	e := newEnv(t, nil) // alpha and beta: no tasks
	ctx := testCtx(t)
	m := mcpclient.New(&mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond}})
	defer m.Close(context.Background())
	connect := func(id string) {
		t.Helper()
		if _, err := m.RegisterServer(ctx, id, mcpclient.ServerOptions{Name: id, URL: e.URL}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.ConnectToServer(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	connect("open")
	if m.OffersTasks("open") {
		t.Fatal("a gateway without tasks nor asks offers the tasks extension")
	}
	askEverything(t, e)
	connect("gw")
	if !m.OffersTasks("gw") {
		t.Fatal("a gateway whose policy asks does not offer the tasks extension")
	}

	// Approved by a person: the task's result is the call's.
	h, res, err := m.StartTask(ctx, "gw", "tool_beta_increment", map[string]any{}, nil)
	if err != nil || h == nil {
		t.Fatalf("StartTask = %v, %+v, %v; want a task", h, res, err)
	}
	ap := waitApprovalState(t, e, store.ApprovalPending)
	if h.TaskID != "beta:"+ap.ID || ap.Caller != policy.Gateway {
		t.Fatalf("task %q for approval %+v", h.TaskID, ap)
	}
	got, err := m.GetTask(ctx, h)
	if err != nil || got.Status != "working" || !strings.Contains(got.StatusMessage, ap.ID) {
		t.Fatalf("tasks/get of a pending approval: %+v, %v", got, err)
	}
	if n := e.beta.Increments.Load(); n != 0 {
		t.Fatalf("the tool ran %d times before approval", n)
	}
	if _, err := e.a.Approve(ctx, ap.ID, false); err != nil {
		t.Fatal(err)
	}
	res, err = m.WaitTask(ctx, h, nil)
	if err != nil || res.IsError || text(res) != "1" {
		t.Fatalf("the task's result: %+v, %v", res, err)
	}

	// Denied: a tool error with the reason.
	h, _, err = m.StartTask(ctx, "gw", "tool_beta_increment", map[string]any{}, nil)
	if err != nil || h == nil {
		t.Fatalf("second StartTask: %v, %v", h, err)
	}
	ap = waitApprovalState(t, e, store.ApprovalPending)
	if _, err := e.a.Deny(ctx, ap.ID, "not on a Friday"); err != nil {
		t.Fatal(err)
	}
	res, err = m.WaitTask(ctx, h, nil)
	if err != nil || !res.IsError || !strings.Contains(text(res), "not on a Friday") {
		t.Fatalf("the denied task's result: %+v, %v", res, err)
	}

	// Cancelled by the client: the approval is denied.
	h, _, err = m.StartTask(ctx, "gw", "tool_beta_increment", map[string]any{}, nil)
	if err != nil || h == nil {
		t.Fatalf("third StartTask: %v, %v", h, err)
	}
	ap = waitApprovalState(t, e, store.ApprovalPending)
	if err := m.CancelTask(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got, err := e.a.Approval(ctx, ap.ID); err != nil || got.State != store.ApprovalDenied {
		t.Fatalf("approval after the client's cancel: %+v, %v", got, err)
	}

	// An approval of another server, or none, is no task.
	for _, id := range []string{"alpha:" + ap.ID, "beta:ap_unknown"} {
		if _, err := m.GetTask(ctx, &mcpclient.TaskHandle{ServerID: "gw", Tool: h.Tool, TaskID: id, Protocol: h.Protocol}); err == nil {
			t.Errorf("tasks/get of %s succeeded", id)
		}
	}
	if n := e.beta.Increments.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}

// TestTaskCallPolicyCaller: a call of a client that declares tasks is
// decided for the gateway caller, as every other gateway call: a rule
// that asks about the gateway's calls holds it for approval (its task is
// the approval's), and the upstream server gets no task until then.
func TestTaskCallPolicyCaller(t *testing.T) {
	a, ts, url := taskGateway(t)
	ctx := testCtx(t)
	p, err := policy.Parse([]byte(`{"rules": [{"match": {"callers": ["gateway"]}, "action": "ask"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetPolicy(ctx, p); err != nil {
		t.Fatal(err)
	}
	m := mcpclient.New(nil)
	defer m.Close(context.Background())
	if _, err := m.RegisterServer(ctx, "gw", mcpclient.ServerOptions{Name: "gw", URL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ConnectToServer(ctx, "gw"); err != nil {
		t.Fatal(err)
	}
	h, res, err := m.StartTask(ctx, "gw", "tool_ts_work", map[string]any{}, nil)
	if err != nil || h == nil || !strings.HasPrefix(h.TaskID, "ts:ap_") {
		t.Fatalf("StartTask of a tool the policy asks the gateway about = %v, %+v, %v; want the approval's task", h, res, err)
	}
	if n := len(ts.Tasks()); n != 0 {
		t.Fatalf("the upstream server got %d tasks before approval", n)
	}
	if err := m.CancelTask(ctx, h); err != nil {
		t.Fatal(err)
	}
}
