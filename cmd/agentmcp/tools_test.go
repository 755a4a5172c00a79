package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestToolsSorted: tools lists by server name, then tool name, whatever
// order the servers were added and list their tools in.
func TestToolsSorted(t *testing.T) {
	t.Setenv(envServer, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	for _, name := range []string{"zeta", "alpha"} {
		srv := mcptest.NewServer(name)
		srv.AddTool("aaa-late") // sorts first, listed last
		url := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server }).URL
		runCmd(t, "add", "--db", db, "--id", "id-"+name, name, url).mustSucceed(t)
	}
	r := runCmd(t, "tools", "--db", db)
	r.mustSucceed(t)
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^(id-\w+)\s+(\S+)`).FindAllStringSubmatch(r.stdout, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	want := []string{"id-alpha aaa-late", "id-alpha add", "id-alpha echo", "id-alpha fail", "id-alpha increment", "id-alpha progress", "id-alpha slow",
		"id-zeta aaa-late", "id-zeta add", "id-zeta echo", "id-zeta fail", "id-zeta increment", "id-zeta progress", "id-zeta slow"}
	if len(got) != len(want) {
		t.Fatalf("tools:\n%s", r.stdout)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: %q, want %q\n%s", i, got[i], want[i], r.stdout)
		}
	}
}

// TestLsAfterWake: ls through serve of a hibernated agent waits for the
// servers its asking woke, rather than showing them connecting.
func TestLsAfterWake(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "agentmcp.db"))
	for _, name := range []string{"one", "two", "three"} {
		srv := mcptest.NewServer(name)
		url := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server }).URL
		runCmd(t, "add", "--server", s.base, name, url).mustSucceed(t)
	}
	hibernate := func() {
		// The last ls's stream may not have ended on serve's side yet (it
		// keeps the agent awake): poll, within a safety net.
		deadline := time.Now().Add(30 * time.Second)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			res, err := http.Post(client.AgentURL(s.base, "agentmcp", "default")+"/hibernate", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode == http.StatusNoContent {
				return
			}
			if res.StatusCode != http.StatusConflict || time.Now().After(deadline) {
				t.Fatalf("hibernate: %s", res.Status)
			}
			<-tick.C
		}
	}
	for range 3 {
		hibernate()
		r := runCmd(t, "ls", "--server", s.base)
		r.mustSucceed(t)
		if n := strings.Count(r.stdout, " ready "); n != 3 {
			t.Fatalf("ls after a wake:\n%s", r.stdout)
		}
	}
}
