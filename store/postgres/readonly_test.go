package postgres

import (
	"testing"

	"github.com/agentmcp/agentmcp/store"
)

// TestReadOnly: a Store opened ReadOnly on a new database applies the
// migrations, then reads what another Store wrote and writes nothing:
// every write fails, and the database is unchanged.
func TestReadOnly(t *testing.T) {
	ctx := t.Context()
	dsn := pg.Database(t)
	ro, err := Open(ctx, dsn, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rw, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	const ns = "agentmcp/default"
	if err := rw.PutServer(ctx, store.Server{Namespace: ns, ID: "kept", Name: "kept", URL: "http://127.0.0.1:1/mcp"}); err != nil {
		t.Fatal(err)
	}
	if err := ro.PutServer(ctx, store.Server{Namespace: ns, ID: "new", Name: "new", URL: "http://127.0.0.1:2/mcp"}); err == nil {
		t.Error("PutServer on a read-only store: nil error")
	}
	if err := ro.DeleteServer(ctx, ns, "kept"); err == nil {
		t.Error("DeleteServer on a read-only store: nil error")
	}
	rows, err := ro.ListServers(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ID != "kept" {
		t.Errorf("ListServers on the read-only store: %+v, want kept alone", rows)
	}
}
