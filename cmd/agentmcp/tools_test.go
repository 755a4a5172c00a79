package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestToolsStats: tools --stats prints each server's tools and what their
// definitions cost (bytes of JSON, estimated tokens), and the total, in a
// table and as JSON; the bytes are those of the definitions as listed.
func TestToolsStats(t *testing.T) {
	t.Setenv(envServer, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	for _, name := range []string{"one", "two"} {
		srv := mcptest.NewServer(name)
		if name == "two" {
			srv.AddTool("extra")
		}
		url := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server }).URL
		runCmd(t, "add", "--db", db, "--id", "id-"+name, name, url).mustSucceed(t)
	}
	r := runCmd(t, "tools", "--db", db, "--stats", "--json")
	r.mustSucceed(t)
	var got struct {
		Servers []struct {
			ServerID             string
			Tools, Bytes, Tokens int
		}
		Total struct{ Tools, Bytes, Tokens int }
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	r = runCmd(t, "tools", "--db", db, "--json")
	r.mustSucceed(t)
	var tools []struct {
		ServerID string `json:"serverId"`
	}
	json.Unmarshal([]byte(r.stdout), &tools)
	if len(got.Servers) != 2 || got.Servers[0].ServerID != "id-one" || got.Servers[0].Tools != 6 || got.Servers[1].Tools != 7 ||
		got.Total.Tools != 13 || got.Total.Bytes != got.Servers[0].Bytes+got.Servers[1].Bytes || got.Servers[0].Bytes == 0 ||
		got.Servers[1].Bytes <= got.Servers[0].Bytes || got.Total.Tokens != (got.Total.Bytes+3)/4 || len(tools) != 13 {
		t.Errorf("--stats --json: %+v", got)
	}
	r = runCmd(t, "tools", "--db", db, "--stats")
	r.mustSucceed(t)
	if !regexp.MustCompile(`(?m)^\s+id-one\s+one\s+6\s+\d+\s+\d+\s*$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^\s+total\s+13\s+`+strconv.Itoa(got.Total.Bytes)+`\s+`+strconv.Itoa(got.Total.Tokens)).MatchString(r.stdout) {
		t.Errorf("--stats:\n%s", r.stdout)
	}
}
