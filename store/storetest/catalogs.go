package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmcp/agentmcp/store"
)

// testCatalogs checks CatalogStore: catalogs listed per namespace,
// replaced by a put of the same key, deleted, kept across a reopen (their
// JSON as written), a catalog over MaxCatalogBytes or with a list that is
// not an array refused with nothing written, and (for a fencing backend)
// a put under a stale fence refused.
func testCatalogs(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	cs, ok := s.(store.CatalogStore)
	if !ok {
		t.Skip("the backend keeps no catalogs")
	}
	c := ctx(t)
	list := func(cs store.CatalogStore, ns string) []store.Catalog {
		t.Helper()
		cats, err := cs.ListCatalogs(c, ns)
		if err != nil {
			t.Fatalf("ListCatalogs(%q): %v", ns, err)
		}
		slices.SortFunc(cats, func(a, b store.Catalog) int { return strings.Compare(a.ServerID, b.ServerID) })
		return cats
	}
	put := func(cat store.Catalog) {
		t.Helper()
		if err := cs.PutCatalog(c, cat); err != nil {
			t.Fatalf("PutCatalog(%s/%s): %v", cat.Namespace, cat.ServerID, err)
		}
	}
	if got := list(cs, ns); got == nil || len(got) != 0 {
		t.Fatalf("ListCatalogs of an agent without catalogs = %#v, want an empty slice", got)
	}
	a := store.Catalog{Namespace: ns, ServerID: "a",
		Tools:             json.RawMessage(`[{"name":"echo","description":"Echoes – ünïcode","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]`),
		Prompts:           json.RawMessage(`[{"name":"greet"}]`),
		Resources:         json.RawMessage(`[]`),
		ResourceTemplates: json.RawMessage(`[{"uriTemplate":"file:///{path}","name":"files"}]`)}
	bcat := store.Catalog{Namespace: ns, ServerID: "b", Tools: json.RawMessage(`[{"name":"x","inputSchema":{"type":"object"}}]`)}
	put(a)
	put(bcat)
	put(store.Catalog{Namespace: "other/ns", ServerID: "a", Tools: json.RawMessage(`[]`)})
	a2 := a
	a2.Tools = json.RawMessage(`[{"name":"echo2","inputSchema":{"type":"object"}}]`)
	put(a2)

	ignore := cmpopts.IgnoreFields(store.Catalog{}, "UpdatedAt")
	got := list(cs, ns)
	if diff := cmp.Diff([]store.Catalog{a2, bcat}, got, ignore); diff != "" {
		t.Fatalf("catalogs after replacing the first (-want +got):\n%s", diff)
	}
	if got[0].UpdatedAt.IsZero() {
		t.Errorf("UpdatedAt not set")
	}
	if others := list(cs, "other/ns"); len(others) != 1 || string(others[0].Tools) != "[]" || others[0].Prompts != nil {
		t.Errorf("catalogs of another agent: %+v", others)
	}

	// Refused: too large, not arrays, bad keys. Nothing is written.
	big := store.Catalog{Namespace: ns, ServerID: "a",
		Tools: json.RawMessage(`[{"name":"big","description":"` + strings.Repeat("x", store.MaxCatalogBytes) + `"}]`)}
	if err := cs.PutCatalog(c, big); !errors.Is(err, store.ErrCatalogTooLarge) {
		t.Errorf("PutCatalog of %d bytes: %v, want ErrCatalogTooLarge", len(big.Tools), err)
	}
	for _, bad := range []store.Catalog{
		{Namespace: ns, ServerID: "a", Tools: json.RawMessage(`{"name":"x"}`)},
		{Namespace: ns, ServerID: "a", Prompts: json.RawMessage(`[nope`)},
		{Namespace: ns},
		{ServerID: "a"},
		{Namespace: ns, ServerID: "bad\x00id"},
	} {
		if err := cs.PutCatalog(c, bad); err == nil {
			t.Errorf("PutCatalog(%+v) succeeded", bad)
		}
	}
	if diff := cmp.Diff([]store.Catalog{a2, bcat}, list(cs, ns), ignore); diff != "" {
		t.Fatalf("refused puts changed the catalogs (-want +got):\n%s", diff)
	}

	if b.Claim != nil {
		mustPut(t, s, sample(ns, "a"))
		old := b.Claim(t, s, ns, "r1")
		current := b.Claim(t, s, ns, "r2")
		if err := cs.PutCatalog(store.WithFence(c, old), a); !errors.Is(err, store.ErrFenced) {
			t.Errorf("PutCatalog under a stale fence: %v, want ErrFenced", err)
		}
		if err := cs.DeleteCatalog(store.WithFence(c, old), ns, "a"); !errors.Is(err, store.ErrFenced) {
			t.Errorf("DeleteCatalog under a stale fence: %v, want ErrFenced", err)
		}
		if err := cs.PutCatalog(store.WithFence(c, current), a2); err != nil {
			t.Errorf("PutCatalog under the current fence: %v", err)
		}
	}

	if err := cs.DeleteCatalog(c, ns, "b"); err != nil {
		t.Fatal(err)
	}
	if err := cs.DeleteCatalog(c, ns, "unknown"); err != nil {
		t.Errorf("DeleteCatalog of an unknown server: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	if diff := cmp.Diff([]store.Catalog{a2}, list(s.(store.CatalogStore), ns), ignore); diff != "" {
		t.Fatalf("catalogs after a reopen (-want +got):\n%s", diff)
	}
}
