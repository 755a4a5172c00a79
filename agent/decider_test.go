package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/store"
)

// TestApprovalDecider: the decider an answer's ctx names (WithDecider) is
// stored with the approval, survives a reopen, and is in the answer's
// audit record; an invalid one is refused and leaves the approval
// pending; an answer without one names nobody.
func TestApprovalDecider(t *testing.T) {
	ctx := testCtx(t)
	_, url := pinServer(t)
	st := openSQLite(t, "")
	a := openAgent(t, st, "decider", nil)
	if _, err := a.AddMCPServer(ctx, "S", url, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetPolicy(ctx, mustPolicy(t, `{"rules": [{"match": {"tools": ["s/increment"]}, "action": "ask"}]}`)); err != nil {
		t.Fatal(err)
	}

	approved := callAsync(ctx, t, a, "increment", nil)
	first := pendingApproval(t, a)
	for _, bad := range []string{"bell\a", "tab\there", strings.Repeat("x", agent.MaxDeciderLen+1), " padded", "\xff"} {
		if _, err := a.Approve(agent.WithDecider(ctx, bad), first.ID, false); !errors.Is(err, agent.ErrInvalidDecider) {
			t.Errorf("Approve by %q: %v, want ErrInvalidDecider", bad, err)
		}
		if _, err := a.Deny(agent.WithDecider(ctx, bad), first.ID, ""); !errors.Is(err, agent.ErrInvalidDecider) {
			t.Errorf("Deny by %q: %v, want ErrInvalidDecider", bad, err)
		}
	}
	if ap, err := a.Approval(ctx, first.ID); err != nil || ap.State != store.ApprovalPending {
		t.Fatalf("after the refused answers: %+v, %v; want pending", ap, err)
	}
	got, err := a.Approve(agent.WithDecider(ctx, "Zoë Ng (ops)"), first.ID, false)
	if err != nil || got.DecidedBy != "Zoë Ng (ops)" {
		t.Fatalf("Approve: %+v, %v", got, err)
	}
	if o := <-approved; o.err != nil {
		t.Fatalf("the approved call: %v", o.err)
	}

	denied := callAsync(ctx, t, a, "increment", nil)
	second := pendingApproval(t, a)
	if got, err := a.Deny(agent.WithDecider(ctx, "bo"), second.ID, "no"); err != nil || got.DecidedBy != "bo" {
		t.Fatalf("Deny: %+v, %v", got, err)
	}
	if o := <-denied; !errors.Is(o.err, agent.ErrApprovalDenied) {
		t.Fatalf("the denied call: %v", o.err)
	}

	anonymous := callAsync(ctx, t, a, "increment", nil)
	third := pendingApproval(t, a)
	if got, err := a.Deny(ctx, third.ID, ""); err != nil || got.DecidedBy != "" {
		t.Fatalf("Deny without a decider: %+v, %v", got, err)
	}
	<-anonymous

	var records []string
	for _, r := range auditLog(t, a) {
		if r.Decision == store.AuditApproved || r.Decision == store.AuditRejected {
			records = append(records, r.Decision+" "+r.Approval+" "+r.Caller+" "+r.DecidedBy)
		}
	}
	want := []string{
		"approved " + first.ID + " api Zoë Ng (ops)",
		"rejected " + second.ID + " api bo",
		"rejected " + third.ID + " api ",
	}
	if diff := cmp.Diff(want, records); diff != "" {
		t.Errorf("answers' records (-want +got):\n%s", diff)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b := openAgent(t, st, "decider", nil)
	for id, want := range map[string]string{first.ID: "Zoë Ng (ops)", second.ID: "bo", third.ID: ""} {
		if ap, err := b.Approval(ctx, id); err != nil || ap.DecidedBy != want {
			t.Errorf("approval %s reopened: decidedBy %q (%v), want %q", id, ap.DecidedBy, err, want)
		}
		if ap, _ := b.Approval(ctx, id); ap.API().DecidedBy != want {
			t.Errorf("approval %s on the wire: decidedBy %q, want %q", id, ap.API().DecidedBy, want)
		}
	}
}

// TestPinDecider: a pin decision names the decider its ctx carries in its
// audit record; an invalid one is refused and decides nothing.
func TestPinDecider(t *testing.T) {
	ctx := testCtx(t)
	srv, url := pinServer(t)
	a := openAgent(t, openSQLite(t, ""), "pindecider", nil)
	if _, err := a.AddMCPServer(ctx, "S", url, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	waitPin(t, a, "echo", func(p agent.ToolPin) bool { return p.State == store.PinPinned })
	redefineEcho(srv, "Echoes, otherwise.")
	waitPin(t, a, "echo", func(p agent.ToolPin) bool { return p.State == store.PinChanged })

	if _, err := a.DecidePin(agent.WithDecider(ctx, "bell\a"), "s", "echo", agent.PinAccept); !errors.Is(err, agent.ErrInvalidDecider) {
		t.Errorf("DecidePin by an invalid name: %v, want ErrInvalidDecider", err)
	}
	if p := waitPin(t, a, "echo", func(agent.ToolPin) bool { return true }); p.State != store.PinChanged {
		t.Errorf("after the refused decision the pin is %s, want changed", p.State)
	}
	if _, err := a.DecidePin(agent.WithDecider(ctx, "Ana Lima"), "s", "echo", agent.PinAccept); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range auditLog(t, a) {
		if r.Decision == store.AuditPinAccepted || r.Decision == store.AuditPinRejected {
			got = append(got, r.Decision+" "+r.Tool+" "+r.DecidedBy)
		}
	}
	if diff := cmp.Diff([]string{store.AuditPinAccepted + " echo Ana Lima"}, got); diff != "" {
		t.Errorf("pin decisions' records (-want +got):\n%s", diff)
	}
}
