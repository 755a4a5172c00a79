package sqlite

import (
	"crypto/rand"
	"path/filepath"
	"testing"

	"github.com/agentmcp/agentmcp/store"
)

// TestLegacyURLRow: a row written before URLs were split, with the whole
// URL (secrets included) in the url column, reads back the same, and the
// next write leaves only the public part in the column.
func TestLegacyURLRow(t *testing.T) {
	key := make([]byte, store.KeySize)
	rand.Read(key)
	cipher, err := store.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "legacy.db"), &Options{Cipher: cipher})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	const (
		ns     = "chat/alice"
		public = "https://mcp.example.com/mcp"
		legacy = "https://user:pw-SECRET@mcp.example.com/mcp?key=q-SECRET"
	)
	srv := store.Server{Namespace: ns, ID: "old", Name: "old", URL: public,
		Options: store.ServerOptions{Headers: map[string]string{"Authorization": "Bearer h"}}}
	if err := s.PutServer(ctx, srv); err != nil {
		t.Fatal(err)
	}
	// What earlier versions stored: the whole URL in the column, options
	// without a URL.
	if _, err := s.w.ExecContext(ctx, `UPDATE servers SET url = ? WHERE namespace = ? AND id = ?`, legacy, ns, "old"); err != nil {
		t.Fatal(err)
	}
	column := func() string {
		var u string
		if err := s.r.QueryRowContext(ctx, `SELECT url FROM servers WHERE namespace = ? AND id = ?`, ns, "old").Scan(&u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	read := func(when string) {
		t.Helper()
		got, err := s.GetServer(ctx, ns, "old")
		if err != nil || got.URL != legacy || got.Options.Headers["Authorization"] != "Bearer h" {
			t.Errorf("%s: GetServer = %q %v, %v; want %q and the header", when, got.URL, got.Options.Headers, err, legacy)
		}
		list, err := s.ListServers(ctx, ns)
		if err != nil || len(list) != 1 || list[0].URL != legacy {
			t.Errorf("%s: ListServers = %+v, %v", when, list, err)
		}
	}
	read("legacy row")
	if err := s.UpdateServer(ctx, ns, "old", func(*store.Server) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := column(); got != public {
		t.Errorf("url column after a write = %q, want %q", got, public)
	}
	read("rewritten row")
}
