package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// Example shows a server's life in the store: added while its OAuth flow is
// pending, its state nonce taken once by the callback, then moved to a
// stable id with its OAuth data.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agentmcp-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	cipher, err := store.CipherFromEnv() // nil without AGENTMCP_SECRET_KEY
	if err != nil {
		panic(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "agentmcp.db"), &sqlite.Options{Cipher: cipher})
	if err != nil {
		panic(err)
	}
	defer st.Close()

	const ns = "chat/alice"
	err = st.PutServer(ctx, store.Server{
		Namespace: ns, ID: "x1y2z3w4", Name: "GitHub", URL: "https://mcp.github.example/",
		AuthURL: "https://github.example/login/oauth/authorize?state=n1",
		Options: store.ServerOptions{Headers: map[string]string{"X-Team": "core"}},
	})
	if err != nil {
		panic(err)
	}
	err = st.KVPut(ctx, ns, "x1y2z3w4", "state/n1", []byte(`{"nonce":"n1"}`), time.Now().Add(10*time.Minute))
	if err != nil {
		panic(err)
	}

	// The OAuth callback: the state is single-use.
	_, err = st.KVTake(ctx, ns, "x1y2z3w4", "state/n1")
	fmt.Println("first take:", err)
	_, err = st.KVTake(ctx, ns, "x1y2z3w4", "state/n1")
	fmt.Println("second take is not found:", errors.Is(err, store.ErrNotFound))
	err = st.UpdateServer(ctx, ns, "x1y2z3w4", func(s *store.Server) error {
		s.AuthURL = ""
		return nil
	})
	if err != nil {
		panic(err)
	}

	// The caller now names the server "github": its row and OAuth data move.
	if err := st.KVPut(ctx, ns, "x1y2z3w4", "cid/token", []byte(`{"access_token":"..."}`), time.Time{}); err != nil {
		panic(err)
	}
	if err := st.RenameServer(ctx, ns, "x1y2z3w4", "github"); err != nil {
		panic(err)
	}
	servers, err := st.ListServers(ctx, ns)
	if err != nil {
		panic(err)
	}
	keys, err := st.KVList(ctx, ns, "github", "")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %q %q keys=%d\n", servers[0].ID, servers[0].Name, servers[0].AuthURL, len(keys))
	// Output:
	// first take: <nil>
	// second take is not found: true
	// github "GitHub" "" keys=1
}
