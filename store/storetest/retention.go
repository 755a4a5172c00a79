package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// testDeleteApprovals checks DeleteApprovals: the approvals named in a
// final state (denied, expired, done) are deleted, those pending,
// approved or running stay whatever the list says, unknown ids and other
// namespaces are untouched; a running approval keeps its StartedAt and
// Code through a reopen.
func testDeleteApprovals(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	as, ok := s.(store.ApprovalStore)
	if !ok {
		t.Skip("the backend keeps no approvals")
	}
	c := ctx(t)
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	states := map[string]string{"p": store.ApprovalPending, "a": store.ApprovalApproved, "r": store.ApprovalRunning,
		"d": store.ApprovalDenied, "e": store.ApprovalExpired, "x": store.ApprovalDone}
	for id, state := range states {
		a := store.Approval{Namespace: ns, ID: id, ServerID: "s", Tool: "t", State: state, RequestedAt: at, ExpiresAt: at.Add(time.Hour)}
		if state == store.ApprovalRunning || state == store.ApprovalDone {
			a.StartedAt = at.Add(time.Minute)
		}
		if state == store.ApprovalDone {
			a.Error, a.Code = "stopped", store.ApprovalInterrupted
		}
		if err := as.PutApproval(c, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := as.PutApproval(c, store.Approval{Namespace: "other/ns", ID: "x", State: store.ApprovalDone}); err != nil {
		t.Fatal(err)
	}
	n, err := as.DeleteApprovals(c, ns, []string{"p", "a", "r", "d", "e", "x", "nope"})
	if err != nil || n != 3 {
		t.Fatalf("DeleteApprovals: %d, %v; want 3 deleted", n, err)
	}
	if n, err := as.DeleteApprovals(c, ns, nil); err != nil || n != 0 {
		t.Fatalf("DeleteApprovals of none: %d, %v", n, err)
	}
	list, err := as.ListApprovals(c, ns)
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, a := range list {
		left[a.ID] = true
	}
	if len(list) != 3 || !left["p"] || !left["a"] || !left["r"] {
		t.Fatalf("approvals left: %+v", list)
	}
	if _, err := as.GetApproval(c, "other/ns", "x"); err != nil {
		t.Fatalf("another agent's approval: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	r, err := s.(store.ApprovalStore).GetApproval(c, ns, "r")
	if err != nil || r.State != store.ApprovalRunning || !r.StartedAt.Equal(at.Add(time.Minute)) {
		t.Fatalf("running approval after a reopen: %+v, %v", r, err)
	}
	if _, err := s.(store.ApprovalStore).GetApproval(c, ns, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted approval: %v", err)
	}
}

// testRenameMovesPins checks that RenameServer moves the server's pins
// to its new id (replacing any left under it), and leaves none under the
// old one.
func testRenameMovesPins(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	ps, ok := s.(store.PinStore)
	if !ok {
		t.Skip("the backend keeps no pins")
	}
	c := ctx(t)
	if err := s.PutServer(c, sample(ns, "gen-1")); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	for _, p := range []store.Pin{
		{Namespace: ns, ServerID: "gen-1", Tool: "echo", State: store.PinPinned, Fingerprint: "fp1", PinnedAt: at, ChangedAt: at},
		{Namespace: ns, ServerID: "gen-1", Tool: "add", State: store.PinChanged, Fingerprint: "fp2", PinnedAt: at, ChangedAt: at},
		{Namespace: ns, ServerID: "stable", Tool: "stale", State: store.PinPinned, Fingerprint: "fp3", PinnedAt: at, ChangedAt: at},
	} {
		if err := ps.PutPin(c, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RenameServer(c, ns, "gen-1", "stable"); err != nil {
		t.Fatal(err)
	}
	list, err := ps.ListPins(c, ns)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range list {
		got = append(got, p.ServerID+"/"+p.Tool+"/"+p.State)
	}
	if len(got) != 2 || got[0] != "stable/add/changed" || got[1] != "stable/echo/pinned" {
		t.Fatalf("pins after the rename: %v", got)
	}
}
