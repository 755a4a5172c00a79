package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// TestCacheSize: every connection, the writer's and the readers', has the
// 256 KiB page cache.
func TestCacheSize(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "cache.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, db := range []struct {
		name string
		q    func() (int, error)
	}{
		{"writer", func() (n int, err error) { err = s.w.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&n); return }},
		{"reader", func() (n int, err error) { err = s.r.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&n); return }},
	} {
		n, err := db.q()
		if err != nil || n != -256 {
			t.Errorf("%s: cache_size %d, %v; want -256", db.name, n, err)
		}
	}
}
