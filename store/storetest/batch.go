package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
)

// namespaceLister is the ListNamespaces both backends have.
type namespaceLister interface {
	ListNamespaces(ctx context.Context) ([]string, error)
}

// keepAwake returns ListKeepAwake of s, after checking that it lists the
// namespaces in the order ListNamespaces does, when s has that.
func keepAwake(t *testing.T, s store.Store) []string {
	t.Helper()
	l, ok := s.(store.KeepAwakeLister)
	if !ok {
		t.Skip("the store is not a store.KeepAwakeLister")
	}
	got, err := l.ListKeepAwake(ctx(t))
	if err != nil {
		t.Fatalf("ListKeepAwake: %v", err)
	}
	if nl, ok := s.(namespaceLister); ok {
		all, err := nl.ListNamespaces(ctx(t))
		if err != nil {
			t.Fatalf("ListNamespaces: %v", err)
		}
		if sub := slices.DeleteFunc(slices.Clone(all), func(ns string) bool { return !slices.Contains(got, ns) }); !slices.Equal(sub, got) {
			t.Fatalf("ListKeepAwake = %q, not in the order of ListNamespaces %q", got, all)
		}
	}
	return got
}

// testKeepAwake checks that KeepAwake is written by PutServer and
// UpdateServer, kept by RenameServer and Close, and that ListKeepAwake
// lists the namespaces with a keep-awake server in the order of their
// first server (not of their first keep-awake one).
func testKeepAwake(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	c := ctx(t)
	check := func(when string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if diff := cmp.Diff(want, keepAwake(t, s)); diff != "" {
			t.Fatalf("%s: ListKeepAwake (-want +got):\n%s", when, diff)
		}
	}
	check("empty store")

	put := func(ns, id string, keep bool) {
		t.Helper()
		mustPut(t, s, store.Server{Namespace: ns, ID: id, URL: "https://mcp.example.com/" + id, KeepAwake: keep})
	}
	put("chat/a", "x", false)
	put("chat/b", "y", true)
	put("chat/c", "z", false)
	put("chat/d", "w", false)
	check("one keep-awake server", "chat/b")
	put("chat/a", "v", true) // chat/a's first server was written before chat/b's
	check("after a second one", "chat/a", "chat/b")
	if !mustGet(t, s, "chat/a", "v").KeepAwake || mustGet(t, s, "chat/a", "x").KeepAwake {
		t.Fatal("GetServer does not return KeepAwake as written")
	}
	list, err := s.ListServers(c, "chat/a")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].KeepAwake || !list[1].KeepAwake {
		t.Fatalf("ListServers does not return KeepAwake as written: %+v", list)
	}

	setKeep := func(ns, id string, keep bool) {
		t.Helper()
		if err := s.UpdateServer(c, ns, id, func(srv *store.Server) error { srv.KeepAwake = keep; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	setKeep("chat/d", "w", true)
	setKeep("chat/c", "z", true)
	check("after UpdateServer set it", "chat/a", "chat/b", "chat/c", "chat/d")
	setKeep("chat/b", "y", false)
	check("after UpdateServer cleared it", "chat/a", "chat/c", "chat/d")

	if err := s.RenameServer(c, "chat/c", "z", "z2"); err != nil {
		t.Fatal(err)
	}
	if !mustGet(t, s, "chat/c", "z2").KeepAwake {
		t.Fatal("RenameServer lost KeepAwake")
	}
	if err := s.DeleteServer(c, "chat/a", "v"); err != nil {
		t.Fatal(err)
	}
	check("after DeleteServer and RenameServer", "chat/c", "chat/d")
	put("chat/d", "w", false) // replacing writes the flag too
	check("after PutServer replaced it", "chat/c")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	check("after reopening", "chat/c")
}

// batchPutter returns s as a store.BatchPutter, or skips the test.
func batchPutter(t *testing.T, s store.Store) store.BatchPutter {
	t.Helper()
	bp, ok := s.(store.BatchPutter)
	if !ok {
		t.Skip("the store is not a store.BatchPutter")
	}
	return bp
}

// batchAgents is the number of agents testBatch writes, with 5 servers
// each: more rows than one statement of either backend writes.
const batchAgents = 1201

// testBatch checks that PutServers writes each row as PutServer would: new
// rows in the order given, a replaced row keeping its place and
// CreatedAt, a repeated row written once with its last fields, KeepAwake
// included.
func testBatch(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	bp := batchPutter(t, s)
	c := ctx(t)
	if err := bp.PutServers(c, nil); err != nil {
		t.Fatalf("PutServers of nothing: %v", err)
	}

	pre := sample(ns, "pre")
	mustPut(t, s, pre)
	t0 := clk.Now()
	clk.Advance(time.Minute)
	t1 := clk.Now()

	agent := func(i int) string { return fmt.Sprintf("batch/a%04d", i) }
	var rows []store.Server
	for i := range batchAgents * 5 {
		srv := sample(agent(i/5), fmt.Sprintf("s%d", i%5))
		srv.KeepAwake = i%1000 == 7 // agents 1 and 201, ...
		rows = append(rows, srv)
		switch i {
		case 3:
			replaced := store.Server{Namespace: ns, ID: "pre", Name: "replaced", URL: "https://other.example.com/mcp"}
			rows = append(rows, replaced)
		case 10:
			rows = append(rows, store.Server{Namespace: ns, ID: "dup", Name: "first", KeepAwake: true})
		}
	}
	rows = append(rows, sample(ns, "new"), store.Server{Namespace: ns, ID: "dup", Name: "last"})
	if err := bp.PutServers(c, rows); err != nil {
		t.Fatalf("PutServers: %v", err)
	}

	if got := ids(t, s, ns); !slices.Equal(got, []string{"pre", "dup", "new"}) {
		t.Fatalf("%s's servers after PutServers = %q, want [pre dup new]", ns, got)
	}
	for _, tt := range []struct{ want, got store.Server }{
		{stamped(store.Server{Namespace: ns, ID: "pre", Name: "replaced", URL: "https://other.example.com/mcp"}, t0, t1), mustGet(t, s, ns, "pre")},
		{stamped(store.Server{Namespace: ns, ID: "dup", Name: "last"}, t1, t1), mustGet(t, s, ns, "dup")},
		{stamped(sample(ns, "new"), t1, t1), mustGet(t, s, ns, "new")},
		{stamped(rows[0], t1, t1), mustGet(t, s, agent(0), "s0")},
		{stamped(rows[len(rows)-3], t1, t1), mustGet(t, s, agent(batchAgents-1), "s4")},
	} {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("server %s of %s after PutServers (-want +got):\n%s", tt.want.ID, tt.want.Namespace, diff)
		}
	}
	for _, i := range []int{0, 1, 100, 101, batchAgents - 1} {
		if got := ids(t, s, agent(i)); !slices.Equal(got, []string{"s0", "s1", "s2", "s3", "s4"}) {
			t.Fatalf("%s's servers = %q", agent(i), got)
		}
	}
	wantKeep := []string{ns} // "new" is keep-awake, and ns's first server is the oldest
	for i := range batchAgents * 5 {
		if i%1000 == 7 {
			wantKeep = append(wantKeep, agent(i/5))
		}
	}
	if diff := cmp.Diff(wantKeep, keepAwake(t, s)); diff != "" {
		t.Fatalf("ListKeepAwake after PutServers (-want +got):\n%s", diff)
	}
	if nl, ok := s.(namespaceLister); ok {
		all, err := nl.ListNamespaces(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != batchAgents+1 || all[0] != ns || all[1] != agent(0) || all[batchAgents] != agent(batchAgents-1) {
			t.Fatalf("ListNamespaces after PutServers: %d namespaces, from %q", len(all), all[:min(len(all), 3)])
		}
	}

	// A batch replacing rows it wrote keeps their place too.
	clk.Advance(time.Minute)
	again := []store.Server{{Namespace: agent(0), ID: "s2", Name: "again"}, {Namespace: agent(0), ID: "s0"}}
	if err := bp.PutServers(c, again); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, s, agent(0)); !slices.Equal(got, []string{"s0", "s1", "s2", "s3", "s4"}) {
		t.Fatalf("%s's servers after a second PutServers = %q", agent(0), got)
	}
	if diff := cmp.Diff(stamped(again[0], t1, clk.Now()), mustGet(t, s, agent(0), "s2")); diff != "" {
		t.Fatalf("server replaced by a second PutServers (-want +got):\n%s", diff)
	}
}

// testBatchInvalid checks that a batch with an invalid row writes nothing,
// not even the rows before it.
func testBatchInvalid(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	bp := batchPutter(t, s)
	c := ctx(t)
	pre := sample(ns, "pre")
	mustPut(t, s, pre)
	want := mustGet(t, s, ns, "pre")
	for _, bad := range []store.Server{
		{Namespace: ns},
		{ID: "a"},
		{Namespace: ns, ID: "a\xff"},
		{Namespace: "a\x00b", ID: "a"},
	} {
		replaced := pre
		replaced.Name = "changed"
		err := bp.PutServers(c, []store.Server{sample(ns, "a"), replaced, bad, sample(ns, "b")})
		if err == nil {
			t.Fatalf("PutServers with %+v: nil error", bad)
		}
		if got := ids(t, s, ns); !slices.Equal(got, []string{"pre"}) {
			t.Fatalf("PutServers with an invalid row stored %q", got)
		}
		if diff := cmp.Diff(want, mustGet(t, s, ns, "pre")); diff != "" {
			t.Fatalf("PutServers with an invalid row changed a server (-want +got):\n%s", diff)
		}
	}
}

// testBatchEncryption checks that PutServers seals what PutServer seals.
func testBatchEncryption(t *testing.T, b Backend) {
	if b.Raw == nil {
		t.Skip("backend has no Raw")
	}
	cipher := newCipher(t)
	s := b.Open(t, Options{Cipher: cipher})
	bp := batchPutter(t, s)
	secrets := []string{"Bearer batch-header-SECRET-61c", "batch-session-SECRET-72d", "batch-query-SECRET-83e"}
	const public = "https://mcp.example.com/batch"
	var rows []store.Server
	for i := range 3 {
		srv := sample(ns, fmt.Sprint(i))
		srv.URL = public + "?key=" + secrets[2]
		srv.Options.Headers = map[string]string{"Authorization": secrets[0]}
		srv.Options.SessionID = secrets[1]
		rows = append(rows, srv)
	}
	if err := bp.PutServers(ctx(t), rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range rows {
		got := mustGet(t, s, ns, want.ID)
		if got.URL != want.URL || !cmp.Equal(got.Options, want.Options) {
			t.Fatalf("server %s written by PutServers with a cipher reads back as %+v", want.ID, got)
		}
	}
	raw := b.Raw(t)
	if !bytes.Contains(raw, []byte(public)) {
		t.Fatal("Raw lacks the public part of the URLs: it does not show the stored data")
	}
	for _, secret := range secrets {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("secret %q written by PutServers is stored in plaintext", secret)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wrong := b.Open(t, Options{})
	if _, err := wrong.GetServer(ctx(t), ns, "0"); err == nil {
		t.Fatal("a row written by PutServers with a cipher reads without it")
	}
}
