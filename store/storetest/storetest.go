package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
)

// Options are what the suite asks of a Store it opens.
type Options struct {
	// Now is the clock the Store must use for timestamps and expiry.
	Now func() time.Time
	// Cipher is the Store's cipher; nil means none.
	Cipher *store.Cipher
}

// Backend describes the backend under test.
type Backend struct {
	// Open opens a Store on t's database, creating the database empty on
	// the first call in t (see the package documentation). Required.
	Open func(t *testing.T, opts Options) store.Store
	// Raw returns every byte the backend keeps for t's database (file
	// contents, or the stored column values), for checking that secrets
	// are not stored in plaintext. Nil skips that test.
	Raw func(t *testing.T) []byte
	// LockAcrossStores says that WithLock excludes callers using different
	// Stores on the same database (as it does across processes), not only
	// the callers of one Store.
	LockAcrossStores bool
	// URLColumn reads, and SetURLColumn writes, the url column of the
	// stored server ns/id as it is, for the test of rows written before
	// URLs were split (the whole URL, secrets included, in the column). s
	// is a Store that Open returned. Nil skips that test.
	URLColumn    func(t *testing.T, s store.Store, ns, id string) string
	SetURLColumn func(t *testing.T, s store.Store, ns, id, url string)
	// Claim makes replica the owner of the agent ns with a new epoch,
	// taking the lease from its current owner if it has one, and returns
	// the Fence of that ownership. s is a Store that Open returned. Set it
	// for a backend that fences writes (store.Fence); nil says that the
	// backend ignores fences, which the suite then checks.
	Claim func(t *testing.T, s store.Store, ns, replica string) store.Fence
}

// Concurrency of the stress tests.
const goroutines = 50

// Run runs the suite. Each test gets its own database.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"Servers/CRUD", testCRUD},
		{"Servers/Order", testOrder},
		{"Servers/Invalid", testInvalid},
		{"Servers/Rename", testRename},
		{"Servers/DeleteRemovesKV", testDeleteRemovesKV},
		{"Servers/Update", testUpdate},
		{"Servers/UpdateConcurrent", testUpdateConcurrent},
		{"Namespaces", testNamespaces},
		{"KeepAwake", testKeepAwake},
		{"Exposure", testExposure},
		{"Tasks", testTasks},
		{"Catalogs", testCatalogs},
		{"Policy", testPolicy},
		{"Approvals", testApprovals},
		{"Approvals/Delete", testDeleteApprovals},
		{"Pins", testPins},
		{"Pins/Rename", testRenameMovesPins},
		{"Audit", testAudit},
		{"Audit/Prune", testAuditPrune},
		{"Audit/Encryption", testAuditEncryption},
		{"Audit/LargeBatch", testAuditLargeBatch},
		{"Audit/BatchBoundaries", testAuditBatchBoundaries},
		{"Batch", testBatch},
		{"Batch/Invalid", testBatchInvalid},
		{"Batch/Encryption", testBatchEncryption},
		{"KV/Basics", testKV},
		{"KV/TakeConcurrent", testTakeConcurrent},
		{"KV/Expiry", testExpiry},
		{"KV/Sweep", testSweep},
		{"KV/ListPrefix", testListPrefix},
		{"Encryption", testEncryption},
		{"Encryption/URLSecrets", testURLSecrets},
		{"Encryption/LegacyURLRow", testLegacyURLRow},
		{"Reopen", testReopen},
		{"OpenTwice", testOpenTwice},
		{"Close", testClose},
		{"Lock/Exclusion", testLockExclusion},
		{"Lock/Independent", testLockIndependent},
		{"Lock/Cancel", testLockCancel},
		{"Lock/ErrorAndPanic", testLockErrorAndPanic},
		{"Fence/Stale", testFenceStale},
		{"Fence/Current", testFenceCurrent},
		{"Fence/Ignored", testFenceIgnored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, b)
		})
	}
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	return &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// ctx returns a context that ends with t or after a minute, so that a
// deadlock fails the test instead of hanging it.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return c
}

const ns = "chat/alice"

// sample returns a server with every field set.
func sample(ns, id string) store.Server {
	return store.Server{
		Namespace:   ns,
		ID:          id,
		Name:        "server " + id,
		URL:         "https://mcp.example.com/" + id,
		CallbackURL: "https://agent.example.com/agents/chat/alice/callback/" + id,
		ClientID:    "client-" + id,
		AuthURL:     "https://auth.example.com/authorize?state=s-" + id,
		Options: store.ServerOptions{
			TransportType:   "streamable-http",
			Headers:         map[string]string{"Authorization": "Bearer h-" + id, "X-Tenant": "t1"},
			Retry:           &store.Retry{MaxAttempts: 5, BaseDelayMS: 100, MaxDelayMS: 3000},
			Capabilities:    json.RawMessage(`{"elicitation":{"form":{},"url":{}}}`),
			SessionID:       "session-" + id,
			ProtocolVersion: "2025-11-25",
			DiscoverResult:  json.RawMessage(`{"serverInfo":{"name":"x"}}`),
			Props:           json.RawMessage(`{"n":1}`),
		},
		KeepAwake: true,
	}
}

// stamped returns s with the timestamps a store sets.
func stamped(s store.Server, created, updated time.Time) store.Server {
	s.CreatedAt, s.UpdatedAt = created, updated
	return s
}

func mustPut(t *testing.T, s store.Store, srv store.Server) {
	t.Helper()
	if err := s.PutServer(ctx(t), srv); err != nil {
		t.Fatalf("PutServer(%q): %v", srv.ID, err)
	}
}

func mustGet(t *testing.T, s store.Store, ns, id string) store.Server {
	t.Helper()
	srv, err := s.GetServer(ctx(t), ns, id)
	if err != nil {
		t.Fatalf("GetServer(%q): %v", id, err)
	}
	return srv
}

func mustKVPut(t *testing.T, s store.Store, ns, id, key, value string, exp time.Time) {
	t.Helper()
	if err := s.KVPut(ctx(t), ns, id, key, []byte(value), exp); err != nil {
		t.Fatalf("KVPut(%q, %q): %v", id, key, err)
	}
}

// kvList returns KVList as strings.
func kvList(t *testing.T, s store.Store, ns, id, prefix string) map[string]string {
	t.Helper()
	m, err := s.KVList(ctx(t), ns, id, prefix)
	if err != nil {
		t.Fatalf("KVList(%q, %q): %v", id, prefix, err)
	}
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// ids returns the ids of ns's servers in list order.
func ids(t *testing.T, s store.Store, ns string) []string {
	t.Helper()
	list, err := s.ListServers(ctx(t), ns)
	if err != nil {
		t.Fatalf("ListServers(%q): %v", ns, err)
	}
	out := []string{}
	for _, srv := range list {
		out = append(out, srv.ID)
	}
	return out
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%s: error %v, want ErrNotFound", what, err)
	}
}

func testCRUD(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	c := ctx(t)

	_, err := s.GetServer(c, ns, "a")
	wantNotFound(t, "GetServer of a missing server", err)

	a := sample(ns, "a")
	a.CreatedAt = time.Unix(1, 0) // ignored
	mustPut(t, s, a)
	t0 := clk.Now()
	want := stamped(sample(ns, "a"), t0, t0)
	if diff := cmp.Diff(want, mustGet(t, s, ns, "a")); diff != "" {
		t.Fatalf("GetServer after PutServer (-want +got):\n%s", diff)
	}
	list, err := s.ListServers(c, ns)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Server{want}, list); diff != "" {
		t.Fatalf("ListServers (-want +got):\n%s", diff)
	}

	// Replace: every field changes but CreatedAt.
	clk.Advance(time.Minute)
	a2 := store.Server{Namespace: ns, ID: "a", Name: "renamed", URL: "https://other.example.com/mcp",
		Options: store.ServerOptions{Headers: map[string]string{"X-Key": "v2"}}}
	mustPut(t, s, a2)
	want2 := stamped(a2, t0, clk.Now())
	if diff := cmp.Diff(want2, mustGet(t, s, ns, "a")); diff != "" {
		t.Fatalf("GetServer after replacing (-want +got):\n%s", diff)
	}

	// A server with only the required fields round-trips as zero values.
	mustPut(t, s, store.Server{Namespace: ns, ID: "min"})
	if diff := cmp.Diff(stamped(store.Server{Namespace: ns, ID: "min"}, clk.Now(), clk.Now()), mustGet(t, s, ns, "min")); diff != "" {
		t.Fatalf("minimal server (-want +got):\n%s", diff)
	}

	if err := s.DeleteServer(c, ns, "a"); err != nil {
		t.Fatalf("DeleteServer: %v", err)
	}
	_, err = s.GetServer(c, ns, "a")
	wantNotFound(t, "GetServer after DeleteServer", err)
	if err := s.DeleteServer(c, ns, "a"); err != nil {
		t.Fatalf("DeleteServer of a missing server: %v, want nil", err)
	}
	if got := ids(t, s, ns); !slices.Equal(got, []string{"min"}) {
		t.Fatalf("ids after delete = %q, want [min]", got)
	}
	if got := ids(t, s, "nobody/here"); len(got) != 0 {
		t.Fatalf("ListServers of an empty namespace = %q", got)
	}
}

func testOrder(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	c := ctx(t)
	for _, id := range []string{"c", "a", "b", "d"} {
		mustPut(t, s, sample(ns, id))
		clk.Advance(time.Second)
	}
	check := func(what string, want ...string) {
		t.Helper()
		if got := ids(t, s, ns); !slices.Equal(got, want) {
			t.Fatalf("%s: order %q, want %q", what, got, want)
		}
	}
	check("after inserts", "c", "a", "b", "d")

	mustPut(t, s, sample(ns, "c")) // replace keeps the place
	if err := s.UpdateServer(c, ns, "a", func(srv *store.Server) error { srv.Name = "x"; return nil }); err != nil {
		t.Fatal(err)
	}
	check("after replace and update", "c", "a", "b", "d")

	if err := s.RenameServer(c, ns, "b", "z"); err != nil {
		t.Fatal(err)
	}
	check("after rename", "c", "a", "z", "d")

	if err := s.DeleteServer(c, ns, "a"); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, sample(ns, "a"))
	check("after delete and re-add", "c", "z", "d", "a")
}

func testInvalid(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	c := ctx(t)
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"PutServer without namespace", s.PutServer(c, store.Server{ID: "a"})},
		{"PutServer without id", s.PutServer(c, store.Server{Namespace: ns})},
		{"PutServer with invalid UTF-8", s.PutServer(c, store.Server{Namespace: ns, ID: "a\xff"})},
		{"PutServer with NUL", s.PutServer(c, store.Server{Namespace: "a\x00b", ID: "a"})},
		{"KVPut without key", s.KVPut(c, ns, "a", "", []byte("v"), time.Time{})},
		{"KVPut without server", s.KVPut(c, ns, "", "k", []byte("v"), time.Time{})},
		{"RenameServer to empty", s.RenameServer(c, ns, "a", "")},
	} {
		if tt.err == nil || errors.Is(tt.err, store.ErrNotFound) {
			t.Errorf("%s: error %v, want a validation error", tt.name, tt.err)
		}
	}
	if got := ids(t, s, ns); len(got) != 0 {
		t.Fatalf("invalid writes stored servers %q", got)
	}
}

func testRename(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	c := ctx(t)

	mustPut(t, s, sample(ns, "a"))
	t0 := clk.Now()
	mustPut(t, s, sample(ns, "b"))
	mustKVPut(t, s, ns, "a", "cid/token", "tok-a", time.Time{})
	mustKVPut(t, s, ns, "a", "cid/client_info/", "info-a", time.Time{})
	mustKVPut(t, s, ns, "a", "state/n1", "state-a", t0.Add(10*time.Minute))
	mustKVPut(t, s, ns, "b", "cid/token", "tok-b", time.Time{})
	// Stale entries under the new id, which has no row: replaced by the move.
	mustKVPut(t, s, ns, "stable", "cid/token", "stale", time.Time{})
	mustKVPut(t, s, ns, "stable", "leftover", "stale", time.Time{})

	clk.Advance(time.Minute)
	if err := s.RenameServer(c, ns, "a", "stable"); err != nil {
		t.Fatalf("RenameServer: %v", err)
	}
	want := sample(ns, "a")
	want.ID = "stable"
	want = stamped(want, t0, clk.Now())
	if diff := cmp.Diff(want, mustGet(t, s, ns, "stable")); diff != "" {
		t.Fatalf("renamed server (-want +got):\n%s", diff)
	}
	_, err := s.GetServer(c, ns, "a")
	wantNotFound(t, "GetServer of the old id", err)
	wantKV := map[string]string{"cid/token": "tok-a", "cid/client_info/": "info-a", "state/n1": "state-a"}
	if diff := cmp.Diff(wantKV, kvList(t, s, ns, "stable", "")); diff != "" {
		t.Fatalf("entries under the new id (-want +got):\n%s", diff)
	}
	if got := kvList(t, s, ns, "a", ""); len(got) != 0 {
		t.Fatalf("entries left under the old id: %v", got)
	}
	if diff := cmp.Diff(map[string]string{"cid/token": "tok-b"}, kvList(t, s, ns, "b", "")); diff != "" {
		t.Fatalf("another server's entries changed (-want +got):\n%s", diff)
	}
	if got := ids(t, s, ns); !slices.Equal(got, []string{"stable", "b"}) {
		t.Fatalf("order after rename = %q", got)
	}

	// Conflict: nothing changes on either side.
	if err := s.RenameServer(c, ns, "stable", "b"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("RenameServer onto an existing id: %v, want ErrConflict", err)
	}
	if diff := cmp.Diff(want, mustGet(t, s, ns, "stable")); diff != "" {
		t.Fatalf("server changed by a failed rename (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantKV, kvList(t, s, ns, "stable", "")); diff != "" {
		t.Fatalf("entries changed by a failed rename (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"cid/token": "tok-b"}, kvList(t, s, ns, "b", "")); diff != "" {
		t.Fatalf("target's entries changed by a failed rename (-want +got):\n%s", diff)
	}

	wantNotFound(t, "RenameServer of a missing id", s.RenameServer(c, ns, "missing", "new"))
	wantNotFound(t, "RenameServer of a missing id onto an existing one", s.RenameServer(c, ns, "missing", "b"))
	wantNotFound(t, "RenameServer of a missing id to itself", s.RenameServer(c, ns, "missing", "missing"))
	if err := s.RenameServer(c, ns, "b", "b"); err != nil {
		t.Fatalf("RenameServer to the same id: %v, want nil", err)
	}

	// The moved entry keeps its expiry.
	clk.Advance(10 * time.Minute)
	_, err = s.KVGet(c, ns, "stable", "state/n1")
	wantNotFound(t, "KVGet of a moved entry past its expiry", err)
}

func testDeleteRemovesKV(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	c := ctx(t)
	mustPut(t, s, sample(ns, "a"))
	mustPut(t, s, sample(ns, "b"))
	mustKVPut(t, s, ns, "a", "cid/token", "tok", time.Time{})
	mustKVPut(t, s, ns, "a", "state/n", "st", clk.Now().Add(time.Minute))
	mustKVPut(t, s, ns, "b", "cid/token", "tok-b", time.Time{})
	mustKVPut(t, s, ns, "ghost", "cid/token", "orphan", time.Time{}) // no row

	if err := s.DeleteServer(c, ns, "a"); err != nil {
		t.Fatal(err)
	}
	if got := kvList(t, s, ns, "a", ""); len(got) != 0 {
		t.Fatalf("entries left after DeleteServer: %v", got)
	}
	if err := s.DeleteServer(c, ns, "ghost"); err != nil {
		t.Fatalf("DeleteServer of an id without a row: %v", err)
	}
	if got := kvList(t, s, ns, "ghost", ""); len(got) != 0 {
		t.Fatalf("entries left after DeleteServer of an id without a row: %v", got)
	}
	if diff := cmp.Diff(map[string]string{"cid/token": "tok-b"}, kvList(t, s, ns, "b", "")); diff != "" {
		t.Fatalf("another server's entries changed (-want +got):\n%s", diff)
	}
	// Re-adding the server does not bring anything back.
	mustPut(t, s, sample(ns, "a"))
	if got := kvList(t, s, ns, "a", ""); len(got) != 0 {
		t.Fatalf("entries after re-adding: %v", got)
	}
}

func testUpdate(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	c := ctx(t)

	called := false
	err := s.UpdateServer(c, ns, "a", func(*store.Server) error { called = true; return nil })
	wantNotFound(t, "UpdateServer of a missing server", err)
	if called {
		t.Fatal("UpdateServer called fn for a missing server")
	}

	mustPut(t, s, sample(ns, "a"))
	t0 := clk.Now()
	orig := stamped(sample(ns, "a"), t0, t0)

	errBoom := errors.New("boom")
	err = s.UpdateServer(c, ns, "a", func(srv *store.Server) error { srv.Name = "lost"; return errBoom })
	if !errors.Is(err, errBoom) {
		t.Fatalf("UpdateServer with a failing fn: %v, want errBoom", err)
	}
	err = s.UpdateServer(c, ns, "a", func(srv *store.Server) error { srv.ID = "b"; return nil })
	if err == nil {
		t.Fatal("UpdateServer that changes the id: nil error")
	}
	if diff := cmp.Diff(orig, mustGet(t, s, ns, "a")); diff != "" {
		t.Fatalf("failed updates changed the server (-want +got):\n%s", diff)
	}

	clk.Advance(time.Second)
	err = s.UpdateServer(c, ns, "a", func(srv *store.Server) error {
		if diff := cmp.Diff(orig, *srv); diff != "" {
			t.Errorf("fn got (-want +got):\n%s", diff)
		}
		srv.AuthURL = ""
		srv.Options.SessionID = "new-session"
		srv.KeepAwake = false
		srv.CreatedAt = time.Unix(1, 0) // ignored
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := orig
	want.AuthURL = ""
	want.Options.SessionID = "new-session"
	want.KeepAwake = false
	want.UpdatedAt = clk.Now()
	if diff := cmp.Diff(want, mustGet(t, s, ns, "a")); diff != "" {
		t.Fatalf("updated server (-want +got):\n%s", diff)
	}
}

// testUpdateConcurrent runs 50 read-modify-write updates at once, on two
// handles of the database; none may be lost.
func testUpdateConcurrent(t *testing.T, b Backend) {
	s1 := b.Open(t, Options{})
	s2 := b.Open(t, Options{})
	c := ctx(t)
	mustPut(t, s1, store.Server{Namespace: ns, ID: "a", Options: store.ServerOptions{Headers: map[string]string{}}})

	start := make(chan struct{})
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		wg.Go(func() {
			<-start
			errs <- s.UpdateServer(c, ns, "a", func(srv *store.Server) error {
				if srv.Options.Headers == nil {
					srv.Options.Headers = map[string]string{}
				}
				srv.Options.Headers[fmt.Sprintf("h%02d", i)] = fmt.Sprint(i)
				return nil
			})
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("UpdateServer: %v", err)
		}
	}
	got := mustGet(t, s2, ns, "a").Options.Headers
	if len(got) != goroutines {
		t.Fatalf("%d of %d concurrent updates survived: %v", len(got), goroutines, slices.Sorted(maps.Keys(got)))
	}
}

func testNamespaces(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	c := ctx(t)
	const other = "chat/bob"
	for _, n := range []string{ns, other} {
		srv := sample(n, "s1")
		srv.Name = "of " + n
		mustPut(t, s, srv)
		mustKVPut(t, s, n, "s1", "cid/token", "tok of "+n, time.Time{})
		mustKVPut(t, s, n, "s1", "state/x", "state of "+n, time.Time{})
	}
	mustPut(t, s, sample(ns, "only-alice"))

	if got := ids(t, s, ns); !slices.Equal(got, []string{"s1", "only-alice"}) {
		t.Fatalf("alice's servers = %q", got)
	}
	if got := ids(t, s, other); !slices.Equal(got, []string{"s1"}) {
		t.Fatalf("bob's servers = %q", got)
	}
	if got := mustGet(t, s, other, "s1").Name; got != "of "+other {
		t.Fatalf("bob's s1 is named %q", got)
	}
	_, err := s.GetServer(c, other, "only-alice")
	wantNotFound(t, "GetServer of another namespace's server", err)
	_, err = s.KVGet(c, other, "only-alice", "cid/token")
	wantNotFound(t, "KVGet in another namespace", err)

	// Every write in alice's namespace leaves bob's alone.
	if err := s.UpdateServer(c, ns, "s1", func(srv *store.Server) error { srv.Name = "changed"; return nil }); err != nil {
		t.Fatal(err)
	}
	if v, err := s.KVTake(c, ns, "s1", "state/x"); err != nil || string(v) != "state of "+ns {
		t.Fatalf("KVTake = %q, %v", v, err)
	}
	if err := s.RenameServer(c, ns, "s1", "s2"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteServer(c, ns, "s2"); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, other, "s1").Name; got != "of "+other {
		t.Fatalf("bob's s1 is named %q after alice's writes", got)
	}
	want := map[string]string{"cid/token": "tok of " + other, "state/x": "state of " + other}
	if diff := cmp.Diff(want, kvList(t, s, other, "s1", "")); diff != "" {
		t.Fatalf("bob's entries after alice's writes (-want +got):\n%s", diff)
	}
	if got := kvList(t, s, other, "s2", ""); len(got) != 0 {
		t.Fatalf("alice's rename moved entries into bob's namespace: %v", got)
	}
}

func testKV(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	c := ctx(t)

	_, err := s.KVGet(c, ns, "a", "k")
	wantNotFound(t, "KVGet of a missing key", err)
	_, err = s.KVTake(c, ns, "a", "k")
	wantNotFound(t, "KVTake of a missing key", err)
	if err := s.KVDelete(c, ns, "a", "k"); err != nil {
		t.Fatalf("KVDelete of a missing key: %v", err)
	}

	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	for _, tt := range []struct {
		name  string
		value []byte
	}{
		{"text", []byte(`{"access_token":"a","refresh_token":"r"}`)},
		{"binary", binary},
		{"empty", []byte{}},
		{"overwrite", []byte("second")},
	} {
		if err := s.KVPut(c, ns, "a", "k", tt.value, time.Time{}); err != nil {
			t.Fatalf("%s: KVPut: %v", tt.name, err)
		}
		got, err := s.KVGet(c, ns, "a", "k")
		if err != nil {
			t.Fatalf("%s: KVGet: %v", tt.name, err)
		}
		if !bytes.Equal(got, tt.value) {
			t.Fatalf("%s: KVGet = %q, want %q", tt.name, got, tt.value)
		}
	}

	got, err := s.KVTake(c, ns, "a", "k")
	if err != nil || string(got) != "second" {
		t.Fatalf("KVTake = %q, %v", got, err)
	}
	_, err = s.KVTake(c, ns, "a", "k")
	wantNotFound(t, "second KVTake", err)
	_, err = s.KVGet(c, ns, "a", "k")
	wantNotFound(t, "KVGet after KVTake", err)

	mustKVPut(t, s, ns, "a", "k", "v", time.Time{})
	if err := s.KVDelete(c, ns, "a", "k"); err != nil {
		t.Fatal(err)
	}
	_, err = s.KVGet(c, ns, "a", "k")
	wantNotFound(t, "KVGet after KVDelete", err)
}

// testTakeConcurrent makes 50 callers, on two handles, take one key at
// once, several times: exactly one may win each time.
func testTakeConcurrent(t *testing.T, b Backend) {
	s1 := b.Open(t, Options{})
	s2 := b.Open(t, Options{})
	c := ctx(t)
	for round := range 5 {
		key := fmt.Sprintf("state/nonce-%d", round)
		value := fmt.Sprintf("verifier-%d", round)
		mustKVPut(t, s1, ns, "a", key, value, time.Time{})

		start := make(chan struct{})
		var wins, misses atomic.Int32
		errs := make(chan error, goroutines)
		var wg sync.WaitGroup
		for i := range goroutines {
			s := s1
			if i%2 == 1 {
				s = s2
			}
			wg.Go(func() {
				<-start
				v, err := s.KVTake(c, ns, "a", key)
				switch {
				case err == nil && string(v) == value:
					wins.Add(1)
				case errors.Is(err, store.ErrNotFound):
					misses.Add(1)
				default:
					errs <- fmt.Errorf("KVTake = %q, %v", v, err)
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if wins.Load() != 1 || misses.Load() != goroutines-1 {
			t.Fatalf("round %d: %d takers got the value and %d got ErrNotFound, want 1 and %d", round, wins.Load(), misses.Load(), goroutines-1)
		}
	}
}

func testExpiry(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	c := ctx(t)
	t0 := clk.Now()

	mustKVPut(t, s, ns, "a", "state/n", "st", t0.Add(10*time.Minute))
	mustKVPut(t, s, ns, "a", "never", "forever", time.Time{})
	mustKVPut(t, s, ns, "a", "past", "gone", t0.Add(-time.Second))
	mustKVPut(t, s, ns, "a", "now", "gone", t0)

	for _, key := range []string{"past", "now"} {
		_, err := s.KVGet(c, ns, "a", key)
		wantNotFound(t, "KVGet of an entry put already expired ("+key+")", err)
	}
	if diff := cmp.Diff(map[string]string{"state/n": "st", "never": "forever"}, kvList(t, s, ns, "a", "")); diff != "" {
		t.Fatalf("KVList before expiry (-want +got):\n%s", diff)
	}

	clk.Advance(10*time.Minute - time.Microsecond)
	if v, err := s.KVGet(c, ns, "a", "state/n"); err != nil || string(v) != "st" {
		t.Fatalf("KVGet just before expiry = %q, %v", v, err)
	}
	clk.Advance(time.Microsecond) // exactly at expiresAt: expired
	_, err := s.KVGet(c, ns, "a", "state/n")
	wantNotFound(t, "KVGet at expiry", err)
	_, err = s.KVTake(c, ns, "a", "state/n")
	wantNotFound(t, "KVTake at expiry", err)
	if diff := cmp.Diff(map[string]string{"never": "forever"}, kvList(t, s, ns, "a", "")); diff != "" {
		t.Fatalf("KVList after expiry (-want +got):\n%s", diff)
	}

	clk.Advance(1000 * time.Hour)
	if v, err := s.KVGet(c, ns, "a", "never"); err != nil || string(v) != "forever" {
		t.Fatalf("KVGet of an entry without expiry = %q, %v", v, err)
	}

	// Putting again replaces the expiry.
	mustKVPut(t, s, ns, "a", "state/n", "again", clk.Now().Add(time.Minute))
	if v, err := s.KVGet(c, ns, "a", "state/n"); err != nil || string(v) != "again" {
		t.Fatalf("KVGet after putting again = %q, %v", v, err)
	}
	mustKVPut(t, s, ns, "a", "state/n", "again", time.Time{})
	clk.Advance(time.Hour)
	if v, err := s.KVGet(c, ns, "a", "state/n"); err != nil || string(v) != "again" {
		t.Fatalf("KVGet after removing the expiry = %q, %v", v, err)
	}
}

// testSweep checks that expired entries are deleted lazily, by setting the
// injected clock back: an entry that was deleted stays gone, one that was
// only hidden reappears.
func testSweep(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	c := ctx(t)
	t0 := clk.Now()
	mustKVPut(t, s, ns, "a", "state/n", "st", t0.Add(time.Minute))
	mustKVPut(t, s, ns, "b", "state/n", "st", t0.Add(time.Minute))
	mustKVPut(t, s, ns, "b", "take", "tk", t0.Add(time.Minute))

	clk.Advance(2 * time.Minute)
	mustKVPut(t, s, ns, "a", "other", "x", time.Time{}) // sweeps a's expired entries
	_, err := s.KVTake(c, ns, "b", "take")              // deletes what it finds, expired or not
	wantNotFound(t, "KVTake of an expired entry", err)

	clk.Advance(-2 * time.Minute)
	_, err = s.KVGet(c, ns, "a", "state/n")
	wantNotFound(t, "KVGet of an entry swept by KVPut", err)
	_, err = s.KVGet(c, ns, "b", "take")
	wantNotFound(t, "KVGet of an expired entry KVTake found", err)
	if v, err := s.KVGet(c, ns, "b", "state/n"); err != nil || string(v) != "st" {
		t.Fatalf("KVGet of an entry of a server nobody wrote to = %q, %v (swept too eagerly?)", v, err)
	}
}

func testListPrefix(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	all := map[string]string{
		"state/a": "1", "state/b": "2", "state": "3", "statez": "4", "token": "5",
		"a%b/x": "6", "a_b/y": "7", "axb/z": "8", "ünï/1": "9", `a\b/w`: "10",
	}
	for k, v := range all {
		mustKVPut(t, s, ns, "a", k, v, time.Time{})
	}
	mustKVPut(t, s, ns, "a", "state/old", "expired", clk.Now().Add(-time.Second))
	mustKVPut(t, s, ns, "b", "state/other-server", "x", time.Time{})

	for _, tt := range []struct {
		prefix string
		want   []string
	}{
		{"", slices.Collect(maps.Keys(all))},
		{"state/", []string{"state/a", "state/b"}},
		{"state", []string{"state/a", "state/b", "state", "statez"}},
		{"a%b/", []string{"a%b/x"}},
		{"a_b/", []string{"a_b/y"}},
		{`a\b/`, []string{`a\b/w`}},
		{"ünï/", []string{"ünï/1"}},
		{"nothing", nil},
	} {
		want := map[string]string{}
		for _, k := range tt.want {
			want[k] = all[k]
		}
		if diff := cmp.Diff(want, kvList(t, s, ns, "a", tt.prefix)); diff != "" {
			t.Errorf("KVList(%q) (-want +got):\n%s", tt.prefix, diff)
		}
	}
}

// testEncryption checks that with a Cipher no secret reaches the database
// in plaintext, that values written without a key stay readable after one
// is configured, and that encrypted values need the key.
func testEncryption(t *testing.T, b Backend) {
	if b.Raw == nil {
		t.Skip("backend has no Raw")
	}
	c := ctx(t)
	cipher := newCipher(t)
	secrets := []string{
		"Bearer header-SECRET-8f3a", "session-SECRET-77c1", "access-token-SECRET-1d2e",
		"refresh-token-SECRET-5b6c", "client-secret-SECRET-9e0f", "verifier-SECRET-4a4a",
		"env-SECRET-3c3c",
	}
	enc := sample(ns, "enc")
	enc.Options.Headers = map[string]string{"Authorization": secrets[0]}
	enc.Options.SessionID = secrets[1]
	cmdRow := sample(ns, "cmd")
	cmdRow.URL = ""
	cmdRow.Options = store.ServerOptions{Command: &store.Command{Path: "npx", Args: []string{"-y", "server"},
		Env: map[string]string{"API_KEY": secrets[6]}, Dir: "/srv/mcp"}}
	kv := map[string]string{
		"cid/token":            `{"access_token":"` + secrets[2] + `","refresh_token":"` + secrets[3] + `"}`,
		"cid/client_info/":     `{"client_id":"cid","client_secret":"` + secrets[4] + `"}`,
		"cid/code_verifier/n1": secrets[5],
	}

	s := b.Open(t, Options{Cipher: cipher})
	mustPut(t, s, enc)
	mustPut(t, s, cmdRow)
	for k, v := range kv {
		mustKVPut(t, s, ns, "enc", k, v, time.Time{})
	}
	got := mustGet(t, s, ns, "enc")
	if diff := cmp.Diff(enc.Options, got.Options); diff != "" {
		t.Fatalf("options round trip with a cipher (-want +got):\n%s", diff)
	}
	if got := mustGet(t, s, ns, "cmd"); got.URL != "" || !cmp.Equal(cmdRow.Options, got.Options) {
		t.Fatalf("stdio server round trip with a cipher: URL %q, options (-want +got):\n%s", got.URL, cmp.Diff(cmdRow.Options, got.Options))
	}
	if diff := cmp.Diff(kv, kvList(t, s, ns, "enc", "")); diff != "" {
		t.Fatalf("entries round trip with a cipher (-want +got):\n%s", diff)
	}

	raw := b.Raw(t)
	if !bytes.Contains(raw, []byte(enc.URL)) {
		t.Fatalf("Raw does not contain the server URL %q: it does not show the stored data", enc.URL)
	}
	for _, secret := range secrets {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("secret %q is stored in plaintext", secret)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Without the key: encrypted values are an error, never garbage.
	plain := b.Open(t, Options{})
	_, err := plain.GetServer(c, ns, "enc")
	if !errors.Is(err, store.ErrDecrypt) {
		t.Fatalf("GetServer of an encrypted row without a key: %v, want ErrDecrypt", err)
	}
	if _, err := plain.ListServers(c, ns); !errors.Is(err, store.ErrDecrypt) {
		t.Fatalf("ListServers with an encrypted row without a key: %v, want ErrDecrypt", err)
	}
	if _, err := plain.KVGet(c, ns, "enc", "cid/token"); !errors.Is(err, store.ErrDecrypt) {
		t.Fatalf("KVGet of an encrypted entry without a key: %v, want ErrDecrypt", err)
	}
	// Rows written without a key are plaintext (and Raw shows plaintext).
	const plainNS = "chat/plain"
	old := sample(plainNS, "old")
	old.Options.Headers = map[string]string{"Authorization": "plaintext-header-value"}
	mustPut(t, plain, old)
	mustKVPut(t, plain, plainNS, "old", "cid/token", "plaintext-token", time.Time{})
	if raw := b.Raw(t); !bytes.Contains(raw, []byte("plaintext-header-value")) || !bytes.Contains(raw, []byte("plaintext-token")) {
		t.Fatal("Raw does not show values written without a key: the plaintext check above proves nothing")
	}
	if err := plain.Close(); err != nil {
		t.Fatal(err)
	}

	// With the key again: both kinds read back.
	s = b.Open(t, Options{Cipher: cipher})
	if diff := cmp.Diff(old.Options, mustGet(t, s, plainNS, "old").Options); diff != "" {
		t.Fatalf("plaintext row read with a key (-want +got):\n%s", diff)
	}
	if v, err := s.KVGet(c, plainNS, "old", "cid/token"); err != nil || string(v) != "plaintext-token" {
		t.Fatalf("KVGet of a plaintext entry with a key = %q, %v", v, err)
	}
	if diff := cmp.Diff(enc.Options, mustGet(t, s, ns, "enc").Options); diff != "" {
		t.Fatalf("encrypted row after reopening (-want +got):\n%s", diff)
	}
	// Moving encrypted entries to another id keeps them readable.
	if err := s.RenameServer(c, ns, "enc", "enc2"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kv, kvList(t, s, ns, "enc2", "")); diff != "" {
		t.Fatalf("encrypted entries after RenameServer (-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Another key cannot read them.
	wrong := b.Open(t, Options{Cipher: newCipher(t)})
	if _, err := wrong.GetServer(c, ns, "enc2"); !errors.Is(err, store.ErrDecrypt) {
		t.Fatalf("GetServer with the wrong key: %v, want ErrDecrypt", err)
	}
	if _, err := wrong.KVTake(c, ns, "enc2", "cid/token"); !errors.Is(err, store.ErrDecrypt) {
		t.Fatalf("KVTake with the wrong key: %v, want ErrDecrypt", err)
	}
}

// testURLSecrets checks that with a Cipher the userinfo, query and
// fragment of a server URL are not stored in plaintext, while the URL
// reads back whole through every read, update and rename.
func testURLSecrets(t *testing.T, b Backend) {
	if b.Raw == nil {
		t.Skip("backend has no Raw")
	}
	c := ctx(t)
	secrets := []string{"user-SECRET-31a", "password-SECRET-42b", "query-SECRET-53c", "fragment-SECRET-64d"}
	const public = "https://mcp.example.com/tenant/mcp"
	urls := map[string]string{
		"userinfo": "https://" + secrets[0] + ":" + secrets[1] + "@mcp.example.com/tenant/mcp",
		"query":    public + "?api_key=" + secrets[2] + "&x=1",
		"fragment": public + "#" + secrets[3],
		"plain":    public + "/plain",
		"at-path":  public + "/@user",
	}
	s := b.Open(t, Options{Cipher: newCipher(t)})
	for id, u := range urls {
		srv := sample(ns, id)
		srv.URL = u
		mustPut(t, s, srv)
	}
	check := func(when string, ids map[string]string) {
		t.Helper()
		for id, want := range ids {
			if got := mustGet(t, s, ns, id).URL; got != want {
				t.Errorf("%s: GetServer(%s).URL = %q, want %q", when, id, got, want)
			}
		}
		list, err := s.ListServers(c, ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, srv := range list {
			if want, ok := ids[srv.ID]; ok && srv.URL != want {
				t.Errorf("%s: ListServers: %s has URL %q, want %q", when, srv.ID, srv.URL, want)
			}
		}
		raw := b.Raw(t)
		if !bytes.Contains(raw, []byte(public)) {
			t.Fatalf("%s: Raw lacks the public part of the URLs: it does not show the stored data", when)
		}
		for _, secret := range secrets {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%s: URL secret %q is stored in plaintext", when, secret)
			}
		}
	}
	check("after PutServer", urls)

	// UpdateServer sees the whole URL, and may change it.
	err := s.UpdateServer(c, ns, "query", func(srv *store.Server) error {
		if srv.URL != urls["query"] {
			t.Errorf("UpdateServer gave URL %q, want %q", srv.URL, urls["query"])
		}
		srv.URL = public + "?api_key=" + secrets[2] + "-2"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	urls["query"] = public + "?api_key=" + secrets[2] + "-2"
	if err := s.UpdateServer(c, ns, "userinfo", func(srv *store.Server) error { srv.ClientID = "changed"; return nil }); err != nil {
		t.Fatal(err)
	}
	check("after UpdateServer", urls)

	if err := s.RenameServer(c, ns, "fragment", "fragment2"); err != nil {
		t.Fatal(err)
	}
	urls["fragment2"] = urls["fragment"]
	delete(urls, "fragment")
	check("after RenameServer", urls)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// testLegacyURLRow checks that a row written before URLs were split, with
// the whole URL (secrets included) in the url column, reads back the same,
// and that the next write leaves only the public part in the column.
func testLegacyURLRow(t *testing.T, b Backend) {
	if b.URLColumn == nil || b.SetURLColumn == nil {
		t.Skip("backend has no URLColumn and SetURLColumn")
	}
	c := ctx(t)
	s := b.Open(t, Options{Cipher: newCipher(t)})
	const (
		public = "https://mcp.example.com/mcp"
		legacy = "https://user:pw-SECRET@mcp.example.com/mcp?key=q-SECRET"
	)
	srv := store.Server{Namespace: ns, ID: "old", Name: "old", URL: public,
		Options: store.ServerOptions{Headers: map[string]string{"Authorization": "Bearer h"}}}
	mustPut(t, s, srv)
	// What earlier versions stored: the whole URL in the column, options
	// without a URL.
	b.SetURLColumn(t, s, ns, "old", legacy)
	read := func(when string) {
		t.Helper()
		got, err := s.GetServer(c, ns, "old")
		if err != nil || got.URL != legacy || got.Options.Headers["Authorization"] != "Bearer h" {
			t.Errorf("%s: GetServer = %q %v, %v; want %q and the header", when, got.URL, got.Options.Headers, err, legacy)
		}
		list, err := s.ListServers(c, ns)
		if err != nil || len(list) != 1 || list[0].URL != legacy {
			t.Errorf("%s: ListServers = %+v, %v", when, list, err)
		}
	}
	read("legacy row")
	if err := s.UpdateServer(c, ns, "old", func(*store.Server) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := b.URLColumn(t, s, ns, "old"); got != public {
		t.Errorf("url column after a write = %q, want %q", got, public)
	}
	read("rewritten row")
}

func newCipher(t *testing.T) *store.Cipher {
	t.Helper()
	key := make([]byte, store.KeySize)
	rand.Read(key)
	c, err := store.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testReopen(t *testing.T, b Backend) {
	clk := newClock()
	s := b.Open(t, Options{Now: clk.Now})
	mustPut(t, s, sample(ns, "a"))
	mustPut(t, s, sample(ns, "b"))
	mustKVPut(t, s, ns, "a", "cid/token", "tok", time.Time{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = b.Open(t, Options{Now: clk.Now})
	want := stamped(sample(ns, "a"), clk.Now(), clk.Now())
	if diff := cmp.Diff(want, mustGet(t, s, ns, "a")); diff != "" {
		t.Fatalf("server after reopening (-want +got):\n%s", diff)
	}
	if got := ids(t, s, ns); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("servers after reopening = %q", got)
	}
	if v, err := s.KVGet(ctx(t), ns, "a", "cid/token"); err != nil || string(v) != "tok" {
		t.Fatalf("entry after reopening = %q, %v", v, err)
	}
}

// testOpenTwice opens a second handle on a database that is open (so
// migrations run again and must find nothing to do) and checks that the
// handles see each other's writes.
func testOpenTwice(t *testing.T, b Backend) {
	s1 := b.Open(t, Options{})
	mustPut(t, s1, sample(ns, "first"))
	s2 := b.Open(t, Options{})
	mustPut(t, s2, sample(ns, "second"))
	for i, s := range []store.Store{s1, s2} {
		if got := ids(t, s, ns); !slices.Equal(got, []string{"first", "second"}) {
			t.Fatalf("handle %d sees %q", i+1, got)
		}
	}
}

func testClose(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Close: %v", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after Close: %v", err)
	}
	c := ctx(t)
	if _, err := s.GetServer(c, ns, "a"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetServer after Close: %v, want an error other than ErrNotFound", err)
	}
	if err := s.PutServer(c, sample(ns, "a")); err == nil {
		t.Fatal("PutServer after Close: nil error")
	}
	if err := s.WithLock(c, ns, "a", "refresh", func(context.Context) error { return nil }); err == nil {
		t.Fatal("WithLock after Close: nil error")
	}
}

// lockers returns the Stores to contend on: two handles when the backend
// locks across Stores, else one.
func lockers(t *testing.T, b Backend) []store.Store {
	s := b.Open(t, Options{})
	if !b.LockAcrossStores {
		return []store.Store{s}
	}
	return []store.Store{s, b.Open(t, Options{})}
}

// testLockExclusion runs 50 holders of one lock; the race detector and a
// counter of holders inside fn catch any overlap. fn uses the Store, as a
// token refresh does.
func testLockExclusion(t *testing.T, b Backend) {
	ss := lockers(t, b)
	c := ctx(t)
	mustKVPut(t, ss[0], ns, "a", "cid/token", "0", time.Time{})

	var inside atomic.Int32
	counter := 0 // guarded by the lock under test
	start := make(chan struct{})
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		s := ss[i%len(ss)]
		wg.Go(func() {
			<-start
			errs <- s.WithLock(c, ns, "a", "refresh", func(c context.Context) error {
				if n := inside.Add(1); n != 1 {
					return fmt.Errorf("%d holders at once", n)
				}
				defer inside.Add(-1)
				v, err := s.KVGet(c, ns, "a", "cid/token")
				if err != nil {
					return err
				}
				runtime.Gosched()
				counter++
				if string(v) != fmt.Sprint(counter-1) {
					return fmt.Errorf("read %q, want %d: another holder wrote in between", v, counter-1)
				}
				return s.KVPut(c, ns, "a", "cid/token", []byte(fmt.Sprint(counter)), time.Time{})
			})
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if counter != goroutines {
		t.Fatalf("counter = %d, want %d", counter, goroutines)
	}
}

// testLockIndependent checks that locks with different names do not
// exclude each other: each holder waits for the other to be inside.
func testLockIndependent(t *testing.T, b Backend) {
	ss := lockers(t, b)
	c := ctx(t)
	for _, pair := range [][2][3]string{
		{{ns, "a", "refresh"}, {ns, "b", "refresh"}},
		{{ns, "a", "refresh"}, {ns, "a", "discover"}},
		{{ns, "a", "refresh"}, {"chat/bob", "a", "refresh"}},
		{{ns, "", "add"}, {ns, "a", "add"}}, // a namespace-wide lock
	} {
		entered := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		errs := make(chan error, 2)
		for i, l := range pair {
			s := ss[i%len(ss)]
			go func() {
				errs <- s.WithLock(c, l[0], l[1], l[2], func(c context.Context) error {
					close(entered[i])
					select {
					case <-entered[1-i]:
						return nil
					case <-c.Done():
						return fmt.Errorf("lock %q excluded lock %q", pair[1-i], l)
					}
				})
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// testLockCancel checks that a waiter whose ctx ends gives up without
// calling fn and without keeping the lock.
func testLockCancel(t *testing.T, b Backend) {
	ss := lockers(t, b)
	c := ctx(t)
	held, release := make(chan struct{}), make(chan struct{})
	holderErr := make(chan error, 1)
	go func() {
		holderErr <- ss[0].WithLock(c, ns, "a", "refresh", func(context.Context) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held

	waiterCtx, cancel := context.WithCancel(c)
	waiterErr := make(chan error, 1)
	called := false
	go func() {
		waiterErr <- ss[len(ss)-1].WithLock(waiterCtx, ns, "a", "refresh", func(context.Context) error {
			called = true
			return nil
		})
	}()
	cancel()
	if err := <-waiterErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("WithLock with a cancelled ctx: %v, want context.Canceled", err)
	}
	if called {
		t.Fatal("WithLock called fn after its ctx ended")
	}
	close(release)
	if err := <-holderErr; err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if err := s.WithLock(c, ns, "a", "refresh", func(context.Context) error { return nil }); err != nil {
			t.Fatalf("WithLock after the cancelled waiter: %v", err)
		}
	}
}

// testLockErrorAndPanic checks that fn's error is returned and that a
// panicking fn releases the lock.
func testLockErrorAndPanic(t *testing.T, b Backend) {
	ss := lockers(t, b)
	c := ctx(t)
	errBoom := errors.New("boom")
	if err := ss[0].WithLock(c, ns, "a", "refresh", func(context.Context) error { return errBoom }); !errors.Is(err, errBoom) {
		t.Fatalf("WithLock = %v, want fn's error", err)
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "boom") {
				t.Fatalf("recovered %v, want fn's panic", r)
			}
		}()
		ss[0].WithLock(c, ns, "a", "refresh", func(context.Context) error { panic("boom") })
	}()
	for _, s := range ss {
		if err := s.WithLock(c, ns, "a", "refresh", func(context.Context) error { return nil }); err != nil {
			t.Fatalf("WithLock after a panic: %v", err)
		}
	}
}
