package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
)

// testExposure checks the exposure rules of ExposureStore: none until
// stored, replaced by each put, per namespace, deleted by the zero value,
// kept across a reopen and by the removal of every server, and invalid
// text refused.
func testExposure(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	es, ok := s.(store.ExposureStore)
	if !ok {
		t.Skip("the backend keeps no exposure rules")
	}
	c := ctx(t)
	get := func(s store.Store, ns string) store.Exposure {
		t.Helper()
		e, err := s.(store.ExposureStore).GetExposure(c, ns)
		if err != nil {
			t.Fatalf("GetExposure(%q): %v", ns, err)
		}
		return e
	}
	if e := get(s, ns); !e.IsZero() {
		t.Fatalf("GetExposure of an agent without rules = %+v, want the zero value", e)
	}
	mustPut(t, s, sample(ns, "a"))
	first := store.Exposure{Allow: []string{"docs", "github/search_*"}, Deny: []string{"*/delete_*"}}
	if err := es.PutExposure(c, ns, first); err != nil {
		t.Fatal(err)
	}
	second := store.Exposure{Deny: []string{"github"}}
	if err := es.PutExposure(c, ns, second); err != nil {
		t.Fatal(err)
	}
	other := store.Exposure{Allow: []string{"x/y?"}}
	if err := es.PutExposure(c, "other/ns", other); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(second, get(s, ns)); diff != "" {
		t.Fatalf("rules after a second put (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(other, get(s, "other/ns")); diff != "" {
		t.Fatalf("rules of another agent (-want +got):\n%s", diff)
	}
	if err := s.DeleteServer(c, ns, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	if diff := cmp.Diff(second, get(s, ns)); diff != "" {
		t.Fatalf("rules after removing the servers and reopening (-want +got):\n%s", diff)
	}
	es = s.(store.ExposureStore)
	if err := es.PutExposure(c, ns, store.Exposure{}); err != nil {
		t.Fatal(err)
	}
	if e := get(s, ns); !e.IsZero() {
		t.Fatalf("rules after putting the zero value = %+v, want none", e)
	}
	if diff := cmp.Diff(other, get(s, "other/ns")); diff != "" {
		t.Fatalf("rules of another agent after deleting ns's (-want +got):\n%s", diff)
	}
	for _, bad := range []store.Exposure{{Allow: []string{"a\x00b"}}, {Deny: []string{"\xff"}}} {
		if err := es.PutExposure(c, ns, bad); err == nil {
			t.Errorf("PutExposure(%q) succeeded, want an error", bad)
		}
	}
	if err := es.PutExposure(c, "", first); err == nil {
		t.Error("PutExposure without a namespace succeeded, want an error")
	}
}
