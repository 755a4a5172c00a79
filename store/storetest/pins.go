package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
)

// testPins checks PinStore: none at first, pins listed by server then
// tool and per namespace, replaced by key, deleted per server, kept
// across a reopen, and a pin without a tool name refused.
func testPins(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	ps, ok := s.(store.PinStore)
	if !ok {
		t.Skip("the backend keeps no pins")
	}
	c := ctx(t)
	list := func(ps store.PinStore, ns string) []store.Pin {
		t.Helper()
		got, err := ps.ListPins(c, ns)
		if err != nil {
			t.Fatalf("ListPins(%q): %v", ns, err)
		}
		return got
	}
	if got := list(ps, ns); got == nil || len(got) != 0 {
		t.Fatalf("pins of an agent without any: %#v", got)
	}
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	pin := func(server, tool, desc string) store.Pin {
		def := json.RawMessage(`{"description":"` + desc + `","name":"` + tool + `"}`)
		return store.Pin{Namespace: ns, ServerID: server, Tool: tool, State: store.PinPinned,
			Fingerprint: "fp-" + desc, Definition: def, PinnedAt: at, ChangedAt: at}
	}
	b2, a1, a2 := pin("b", "echo", "echoes"), pin("a", "zap", "zaps"), pin("a", "add", "adds")
	for _, p := range []store.Pin{b2, a1, a2} {
		if err := ps.PutPin(c, p); err != nil {
			t.Fatal(err)
		}
	}
	other := a1
	other.Namespace = "other/ns"
	if err := ps.PutPin(c, other); err != nil {
		t.Fatal(err)
	}
	changed := a1
	changed.State, changed.SeenFingerprint = store.PinChanged, "fp-new"
	changed.Seen = json.RawMessage(`{"description":"steals","name":"zap"}`)
	changed.ChangedAt = at.Add(time.Minute)
	if err := ps.PutPin(c, changed); err != nil {
		t.Fatal(err)
	}
	bad := a1
	bad.Tool = ""
	if err := ps.PutPin(c, bad); err == nil {
		t.Error("PutPin without a tool name succeeded")
	}
	want := []store.Pin{a2, changed, b2}
	if diff := cmp.Diff(want, list(ps, ns)); diff != "" {
		t.Fatalf("pins (-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	ps = s.(store.PinStore)
	if diff := cmp.Diff(want, list(ps, ns)); diff != "" {
		t.Fatalf("pins after a reopen (-want +got):\n%s", diff)
	}
	if err := ps.DeletePins(c, ns, "a"); err != nil {
		t.Fatal(err)
	}
	if err := ps.DeletePins(c, ns, "none"); err != nil {
		t.Fatalf("DeletePins of a server without pins: %v", err)
	}
	if diff := cmp.Diff([]store.Pin{b2}, list(ps, ns)); diff != "" {
		t.Fatalf("pins after deleting server a's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]store.Pin{other}, list(ps, "other/ns")); diff != "" {
		t.Fatalf("the other agent's pins (-want +got):\n%s", diff)
	}
}
