package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
)

// testPolicy checks PolicyStore: none at first, a document kept per
// namespace, replaced, deleted by an empty one, kept across a reopen, and
// a document that is not JSON refused.
func testPolicy(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	ps, ok := s.(store.PolicyStore)
	if !ok {
		t.Skip("the backend keeps no policies")
	}
	c := ctx(t)
	get := func(ps store.PolicyStore, ns string) string {
		t.Helper()
		doc, err := ps.GetPolicy(c, ns)
		if err != nil {
			t.Fatalf("GetPolicy(%q): %v", ns, err)
		}
		return string(doc)
	}
	if got := get(ps, ns); got != "" {
		t.Fatalf("policy of an agent without one: %q", got)
	}
	first := `{"default":"ask","rules":[]}`
	second := `{"default":"allow","rules":[{"match":{"tools":["a/*"]},"action":"deny"}]}`
	for _, doc := range []string{first, second} {
		if err := ps.PutPolicy(c, ns, json.RawMessage(doc)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ps.PutPolicy(c, "other/ns", json.RawMessage(first)); err != nil {
		t.Fatal(err)
	}
	if got := get(ps, ns); got != second {
		t.Fatalf("policy after a replace: %s", got)
	}
	if err := ps.PutPolicy(c, ns, json.RawMessage(`{"default":`)); err == nil {
		t.Error("PutPolicy of a document that is not JSON succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	ps = s.(store.PolicyStore)
	if got := get(ps, ns); got != second {
		t.Fatalf("policy after a reopen: %s", got)
	}
	if err := ps.PutPolicy(c, ns, nil); err != nil {
		t.Fatal(err)
	}
	if got, other := get(ps, ns), get(ps, "other/ns"); got != "" || other != first {
		t.Fatalf("after deleting: %q, the other agent's %q", got, other)
	}
}

// testApprovals checks ApprovalStore: approvals listed in the order first
// stored, per namespace, got by id (ErrNotFound for an unknown one), and
// answered once: of two swaps from pending, one wins; kept across a
// reopen.
func testApprovals(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	as, ok := s.(store.ApprovalStore)
	if !ok {
		t.Skip("the backend keeps no approvals")
	}
	c := ctx(t)
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	first := store.Approval{Namespace: ns, ID: "ap1", ServerID: "github", Tool: "delete_repo",
		Arguments: json.RawMessage(`{"repo":"x"}`), Caller: "api", State: store.ApprovalPending,
		RequestedAt: at, ExpiresAt: at.Add(24 * time.Hour)}
	second := first
	second.ID, second.Tool, second.Caller = "ap2", "create_issue", "llm"
	for _, a := range []store.Approval{first, second, {Namespace: "other/ns", ID: "ap1", State: store.ApprovalPending}} {
		if err := as.PutApproval(c, a); err != nil {
			t.Fatal(err)
		}
	}
	list, err := as.ListApprovals(c, ns)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Approval{first, second}, list); diff != "" {
		t.Fatalf("ListApprovals (-want +got):\n%s", diff)
	}
	if _, err := as.GetApproval(c, ns, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetApproval of an unknown id: %v", err)
	}
	approved := first
	approved.State, approved.DecidedAt, approved.DecidedBy = store.ApprovalApproved, at.Add(time.Minute), "Zoë Ng"
	denied := first
	denied.State, denied.Reason = store.ApprovalDenied, "no"
	won := 0
	for _, a := range []store.Approval{approved, denied} {
		ok, err := as.SwapApproval(c, a, store.ApprovalPending)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d swaps from pending won, want 1", won)
	}
	done := approved
	done.State, done.Result = store.ApprovalDone, json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)
	if ok, err := as.SwapApproval(c, done, store.ApprovalApproved); err != nil || !ok {
		t.Fatalf("swap approved -> done: %v %v", ok, err)
	}
	if ok, err := as.SwapApproval(c, store.Approval{Namespace: ns, ID: "nope", State: store.ApprovalDone}, store.ApprovalPending); err != nil || ok {
		t.Fatalf("swap of an unknown id: %v %v", ok, err)
	}
	if err := as.PutApproval(c, store.Approval{Namespace: ns, ID: "bad\x00id"}); err == nil {
		t.Error("PutApproval with a NUL in its id succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	got, err := s.(store.ApprovalStore).GetApproval(c, ns, "ap1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(done, got); diff != "" {
		t.Fatalf("approval after a reopen (-want +got):\n%s", diff)
	}
	list, _ = s.(store.ApprovalStore).ListApprovals(c, "other/ns")
	if len(list) != 1 {
		t.Fatalf("approvals of another agent: %+v", list)
	}
}
