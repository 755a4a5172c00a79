package searcheval_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/searcheval"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

var record = flag.Bool("record", false, "list the reference servers' tools and write testdata/reference.json")

// listReference starts each pinned reference server over stdio and lists
// its tools.
func listReference(t *testing.T) []searcheval.Server {
	t.Helper()
	peers.Require(t)
	cmds := []struct {
		id  string
		cmd peers.Command
	}{
		{"everything", peers.EverythingCommand(t)},
		{"memory", peers.MemoryCommand(t, "")},
		{"filesystem", peers.FilesystemCommand(t, t.TempDir())},
	}
	var out []searcheval.Server
	for _, c := range cmds {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		client := mcp.NewClient(&mcp.Implementation{Name: "searcheval", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: c.cmd.Cmd()}, nil)
		if err != nil {
			cancel()
			t.Fatalf("connecting to %s: %v", c.id, err)
		}
		res, err := cs.ListTools(ctx, nil)
		cs.Close()
		cancel()
		if err != nil {
			t.Fatalf("tools/list of %s: %v", c.id, err)
		}
		out = append(out, searcheval.Server{ID: c.id, Tools: res.Tools})
	}
	return out
}

// TestReferenceCatalogs: testdata/reference.json is what the pinned
// reference servers list. With -record it is written from them.
func TestReferenceCatalogs(t *testing.T) {
	live := listReference(t)
	path := filepath.Join("testdata", "reference.json")
	if *record {
		b, err := json.MarshalIndent(live, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(searcheval.Reference(), live); diff != "" {
		t.Errorf("the reference servers list other tools than testdata/reference.json (go test -record writes it) (-recorded +live):\n%s", diff)
	}
}
