package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/mcptest"
	"github.com/agentmcp/agentmcp/internal/oauthtest"
	"github.com/agentmcp/agentmcp/internal/testutil"
	"github.com/agentmcp/agentmcp/store"
)

// TestLsNotes: ls shows what failed in a few words, never cut, and never
// an HTML page; --json carries the short form and the full detail.
func TestLsNotes(t *testing.T) {
	t.Setenv(envServer, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")

	// A long path, so that the raw error would pass 80 characters
	// before its useful end.
	refused := "http://" + testutil.RefusingAddr(t) + "/a/rather/long/path/to/an/mcp/endpoint/that/is/down"
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprint(w, "<html><body><h1>405 Not Allowed</h1><hr><center>nginx</center></body></html>")
	}))
	t.Cleanup(page.Close)

	runCmd(t, "add", "--db", db, "--id", "down", "down", refused, "--transport", "streamable-http")
	runCmd(t, "add", "--db", db, "--id", "web", "web", page.URL, "--transport", "streamable-http")

	r := runCmd(t, "ls", "--db", db)
	r.mustSucceed(t)
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		rows[strings.Fields(line)[0]] = line
	}
	if !regexp.MustCompile(`^down +down +failed .* ` + regexp.QuoteMeta(refused) + ` +cannot connect: connection refused$`).MatchString(rows["down"]) {
		t.Errorf("ls row of the refused server:\n%s", r.stdout)
	}
	if !strings.HasSuffix(rows["web"], "not an MCP endpoint (HTTP 405)") {
		t.Errorf("ls row of the HTML page:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "<") || strings.Contains(r.stdout, "nginx") {
		t.Errorf("ls shows the HTML page:\n%s", r.stdout)
	}

	r = runCmd(t, "ls", "--db", db, "--json")
	r.mustSucceed(t)
	var st agent.MCPServersState
	decode(t, r.stdout, &st)
	down := st.Servers["down"]
	if down.ErrorSummary == nil || *down.ErrorSummary != "cannot connect: connection refused" {
		t.Errorf("error_summary = %q", deref(down.ErrorSummary))
	}
	if down.Error == nil || !strings.Contains(*down.Error, "dial tcp") || !strings.Contains(*down.Error, "connection refused") {
		t.Errorf("error = %q, want the full detail", deref(down.Error))
	}
	if !strings.Contains(r.stdout, `"error_summary": "not an MCP endpoint (HTTP 405)"`) {
		t.Errorf("ls --json:\n%s", r.stdout)
	}
}

// TestLsOrder: ls lists servers in the agent's one order (by name without
// regard to case, then id), the order MCPServersState.Order gives to the
// API and the dashboard.
func TestLsOrder(t *testing.T) {
	t.Setenv(envServer, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	for _, a := range [][2]string{{"zeta", "b"}, {"Beta", "a2"}, {"alpha", "z"}, {"beta", "a1"}, {"Zeta", "a"}} {
		_, hs := serve(t, mcptest.Stateful)
		runCmd(t, "add", "--db", db, "--id", a[1], a[0], hs.URL, "--transport", "streamable-http").mustSucceed(t)
	}
	want := []string{"z", "a2", "a1", "a", "b"} // alpha, Beta, beta, Zeta, zeta
	r := runCmd(t, "ls", "--db", db)
	r.mustSucceed(t)
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^(\S+)\s`).FindAllStringSubmatch(r.stdout, -1)[1:] {
		got = append(got, m[1])
	}
	if !slices.Equal(got, want) {
		t.Errorf("ls order %v, want %v:\n%s", got, want, r.stdout)
	}
	r = runCmd(t, "ls", "--db", db, "--json")
	r.mustSucceed(t)
	var st agent.MCPServersState
	decode(t, r.stdout, &st)
	if !slices.Equal(st.Order, want) {
		t.Errorf("MCPServersState.Order = %v, want %v", st.Order, want)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestLsSignIn: a server waiting for sign-in reads as what to do, with
// the URL to open, not as an error.
func TestLsSignIn(t *testing.T) {
	t.Setenv(store.EnvSecretKey, "")
	t.Setenv(envServer, "")
	as := oauthtest.NewServer(t, nil)
	srv := mcptest.NewServer("private")
	res := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }), nil)
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	r := runCmd(t, "add", "--db", db, "private", res.URL, "--id", "private")
	r.mustSucceed(t)
	m := regexp.MustCompile(`open (\S+)\n$`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("add: %q", r.stdout)
	}
	r = runCmd(t, "ls", "--db", db)
	r.mustSucceed(t)
	if !regexp.MustCompile(`(?m)^private +private +authenticating .* sign-in needed: open ` + regexp.QuoteMeta(m[1]) + `$`).MatchString(r.stdout) {
		t.Errorf("ls:\n%s", r.stdout)
	}
}
