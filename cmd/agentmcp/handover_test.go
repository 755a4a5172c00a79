package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestAddDBHandOver: with serve running on a database, add --db stores
// the server and hands the change to serve, whose awake agent has it at
// once; a serve that stopped leaves no PATH.serve behind.
func TestAddDBHandOver(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	url := func(name string) string {
		return mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer(name).Server }).URL
	}
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	s := startServe(t, "--db", db)
	runCmd(t, "add", "--server", s.base, "one", url("one")).mustSucceed(t)

	// The dashboard's stream keeps the agent awake.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := client.Dial(ctx, client.AgentURL(s.base, "agentmcp", "default"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ready := make(chan struct{}, 1)
	defer conn.OnMCPUpdate(func(st api.MCPServersState) {
		if st.Servers["two"].State == "ready" {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	})()

	r := runCmd(t, "add", "--db", db, "two", url("two"))
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "added two as two: ready\n") || !strings.Contains(r.stdout, "agentmcp serve (pid ") || !strings.Contains(r.stdout, s.base+") took the change in") {
		t.Errorf("add --db: %q", r.stdout)
	}
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatalf("serve's awake agent never had the server added with --db: %+v", conn.MCPServers().Servers)
	}
	s.stop()
	if _, err := os.Stat(db + ".serve"); !os.IsNotExist(err) {
		t.Errorf("%s.serve after serve stopped: %v", db, err)
	}
	// No serve: nothing to hand over, nothing said.
	r = runCmd(t, "add", "--db", db, "three", url("three"))
	r.mustSucceed(t)
	if r.stdout != "added three as three: ready\n" {
		t.Errorf("add --db without serve: %q", r.stdout)
	}
}
