package sqlite_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// TestReadOnly: a read-only Store opened beside the Store that owns the
// file reads what the owner writes, refuses every write with
// store.ErrUnavailable at once (without holding up the owner's next
// write), creates no file, and refuses a database not migrated.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")

	if _, err := sqlite.Open(ctx, filepath.Join(dir, "none.db"), &sqlite.Options{ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read-only open of a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read-only open made the missing file: %v", err)
	}
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, db, &sqlite.Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "migrations pending") {
		t.Fatalf("read-only open of an empty file: %v, want migrations pending", err)
	}

	owner, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	srv := store.Server{Namespace: "a/b", ID: "one", Name: "one", URL: "http://127.0.0.1:1/mcp"}
	if err := owner.PutServer(ctx, srv); err != nil {
		t.Fatal(err)
	}
	ro, err := sqlite.Open(ctx, db, &sqlite.Options{ReadOnly: true, BusyTimeout: time.Minute, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := ro.ListServers(ctx, "a/b")
	if err != nil || len(got) != 1 || got[0].ID != "one" {
		t.Fatalf("read-only ListServers: %+v, %v", got, err)
	}
	two := srv
	two.ID = "two"
	if err := ro.PutServer(ctx, two); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("read-only PutServer: %v, want store.ErrUnavailable", err)
	}
	if err := ro.DeleteServer(ctx, "a/b", "one"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("read-only DeleteServer: %v, want store.ErrUnavailable", err)
	}
	// The owner writes on (the read-only Store's refused writes took no
	// lock), and the read-only Store sees it.
	if err := owner.PutServer(ctx, two); err != nil {
		t.Fatalf("the owner's write after the read-only Store's: %v", err)
	}
	if got, err := ro.ListServers(ctx, "a/b"); err != nil || len(got) != 2 {
		t.Fatalf("read-only ListServers after the owner's write: %+v, %v", got, err)
	}
}
