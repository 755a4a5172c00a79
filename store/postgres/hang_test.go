package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
	"github.com/agentmcp/agentmcp/store"
)

// TestHungServer: with every PostgreSQL process stopped (SIGSTOP), each
// operation fails with store.ErrUnavailable once Options.Timeout passes,
// rather than wait for the server; the refused writes are counted; after
// SIGCONT, the writes that failed left nothing behind (a put is not there,
// a deleted row still is) and the store works again.
func TestHungServer(t *testing.T) {
	own := pgtest.New()
	t.Cleanup(func() {
		if err := own.Stop(); err != nil {
			t.Error(err)
		}
	})
	dsn := own.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Open(ctx, dsn, &Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const ns = "chat/hang"
	if err := s.PutServer(ctx, store.Server{Namespace: ns, ID: "kept", Name: "kept", URL: "http://127.0.0.1:1/mcp"}); err != nil {
		t.Fatal(err)
	}
	if err := s.KVPut(ctx, ns, "kept", "k", []byte("v"), time.Time{}); err != nil {
		t.Fatal(err)
	}

	thaw := own.Freeze(t)
	ops := []struct {
		name  string
		write bool
		do    func(context.Context) error
	}{
		{"ListServers", false, func(ctx context.Context) error { _, err := s.ListServers(ctx, ns); return err }},
		{"GetServer", false, func(ctx context.Context) error { _, err := s.GetServer(ctx, ns, "kept"); return err }},
		{"ListNamespaces", false, func(ctx context.Context) error { _, err := s.ListNamespaces(ctx); return err }},
		{"PutServer", true, func(ctx context.Context) error {
			return s.PutServer(ctx, store.Server{Namespace: ns, ID: "new", Name: "new", URL: "http://127.0.0.1:2/mcp"})
		}},
		{"DeleteServer", true, func(ctx context.Context) error { return s.DeleteServer(ctx, ns, "kept") }},
		{"UpdateServer", true, func(ctx context.Context) error {
			return s.UpdateServer(ctx, ns, "kept", func(r *store.Server) error { r.Name = "changed"; return nil })
		}},
		{"KVPut", true, func(ctx context.Context) error { return s.KVPut(ctx, ns, "kept", "k", []byte("w"), time.Time{}) }},
		{"KVGet", false, func(ctx context.Context) error { _, err := s.KVGet(ctx, ns, "kept", "k"); return err }},
		{"WithLock", false, func(ctx context.Context) error {
			return s.WithLock(ctx, ns, "kept", "refresh", func(context.Context) error { return nil })
		}},
	}
	for _, op := range ops {
		// The caller's ctx has no deadline: only the store's bounds the
		// call. A generous guard catches a call that waits for the server.
		done := make(chan error, 1)
		go func() { done <- op.do(context.Background()) }()
		select {
		case err := <-done:
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("%s with the server stopped: %v; want store.ErrUnavailable", op.name, err)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: %v also reads as the caller's deadline", op.name, err)
			}
		case <-time.After(30 * time.Second):
			thaw()
			t.Fatalf("%s waited for the stopped server", op.name)
		}
	}
	failed, refusing := s.WriteHealth()
	if failed != 4 || !errors.Is(refusing, store.ErrUnavailable) {
		t.Errorf("WriteHealth with the server stopped: %d, %v; want 4 refused writes and the last one's error", failed, refusing)
	}

	thaw()
	// The server takes up where it stopped; on a loaded machine its first
	// answers may still pass the store's 300 ms: each check is asked
	// until it is answered (a safety net of ctx), and an answer decides.
	answered := func(what string, do func() error) {
		t.Helper()
		for {
			err := do()
			if err == nil {
				return
			}
			if !errors.Is(err, store.ErrUnavailable) || ctx.Err() != nil {
				t.Fatalf("%s after SIGCONT: %v", what, err)
			}
		}
	}
	var rows []store.Server
	answered("ListServers", func() (err error) { rows, err = s.ListServers(ctx, ns); return err })
	if len(rows) != 1 || rows[0].ID != "kept" || rows[0].Name != "kept" {
		t.Errorf("after SIGCONT the rows are %+v; want the one row as it was", rows)
	}
	var v []byte
	answered("KVGet", func() (err error) { v, err = s.KVGet(ctx, ns, "kept", "k"); return err })
	if string(v) != "v" {
		t.Errorf("after SIGCONT the key is %q; want v", v)
	}
	answered("PutServer", func() error {
		return s.PutServer(ctx, store.Server{Namespace: ns, ID: "new", Name: "new", URL: "http://127.0.0.1:2/mcp"})
	})
	// The refused writes stay counted (4, and any retry above); the
	// write that went through ends the refusal.
	if failed, refusing := s.WriteHealth(); failed < 4 || refusing != nil {
		t.Errorf("WriteHealth after a write went through: %d, %v; want at least 4, nil", failed, refusing)
	}
}
