package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// TestLsNotes: ls shows what failed in a few words, never cut, and never
// an HTML page; --json carries the short form and the full detail.
func TestLsNotes(t *testing.T) {
	t.Setenv(envServer, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")

	// A long path, so that the raw error would pass 80 characters
	// before its useful end.
	refused := "http://" + fixture.RefusingAddr(t) + "/a/rather/long/path/to/an/mcp/endpoint/that/is/down"
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprint(w, "<html><body><h1>405 Not Allowed</h1><hr><center>nginx</center></body></html>")
	}))
	t.Cleanup(page.Close)

	runCmd(t, "add", "--db", db, "--id", "down", "down", refused, "--transport", "streamable-http", "--keep-if-unreachable")
	// add refuses a URL that is no MCP endpoint: the library stores it,
	// as a server that later answers so would be.
	storeFailed(t, db, "web", page.URL)

	r := runCmd(t, "ls", "--db", db, "--connect")
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

	r = runCmd(t, "ls", "--db", db, "--json", "--connect")
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

// TestLsDormant: ls --db reads the stored servers without sending
// anything to them (each is not-connected, its tools "-"), as do rm and
// reconnect for the servers they do not act on; ls --db --connect
// connects first and shows current states and tools.
func TestLsDormant(t *testing.T) {
	t.Setenv(store.EnvSecretKey, "")
	t.Setenv(envServer, "")
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	servers := map[string]*mcptest.HTTPServer{}
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The rows are written directly, so that no server has been sent
	// anything before the commands run.
	for _, id := range []string{"a", "b", "c"} {
		srv := mcptest.NewServer(id)
		hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
		servers[id] = hs
		row := store.Server{Namespace: server.DefaultAgent, ID: id, Name: id, URL: hs.URL,
			Options: store.ServerOptions{TransportType: string(mcpclient.TransportStreamableHTTP)}}
		if err := st.PutServer(ctx, row); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	sent := func() map[string]int64 {
		out := map[string]int64{}
		for id, hs := range servers {
			out[id] = hs.Requests.Load()
		}
		return out
	}
	none := map[string]int64{"a": 0, "b": 0, "c": 0}

	r := runCmd(t, "ls", "--db", db)
	r.mustSucceed(t)
	for _, id := range []string{"a", "b", "c"} {
		if !regexp.MustCompile(`(?m)^` + id + ` +` + id + ` +not-connected +- +- +http://127\.0\.0\.1:\d+/mcp +-$`).MatchString(r.stdout) {
			t.Errorf("ls --db row of %s:\n%s", id, r.stdout)
		}
	}
	r = runCmd(t, "ls", "--db", db, "--json")
	r.mustSucceed(t)
	var state agent.MCPServersState
	decode(t, r.stdout, &state)
	if state.Servers["a"].State != "not-connected" || len(state.Tools) != 0 {
		t.Errorf("ls --db --json: %+v", state)
	}
	if diff := cmp.Diff(none, sent()); diff != "" {
		t.Fatalf("requests sent by ls --db (-want +got):\n%s", diff)
	}

	runCmd(t, "rm", "--db", db, "c").mustSucceed(t)
	if diff := cmp.Diff(none, sent()); diff != "" {
		t.Errorf("requests sent by rm --db (-want +got):\n%s", diff)
	}
	r = runCmd(t, "reconnect", "--db", db, "b")
	r.mustSucceed(t)
	if r.stdout != "b (b): ready\n" {
		t.Errorf("reconnect: %q", r.stdout)
	}
	if got := sent(); got["a"] != 0 || got["b"] == 0 || got["c"] != 0 {
		t.Errorf("requests after reconnect --db b: %v, want some to b only", got)
	}

	r = runCmd(t, "ls", "--db", db, "--connect")
	r.mustSucceed(t)
	for _, id := range []string{"a", "b"} {
		if !regexp.MustCompile(`(?m)^` + id + ` +` + id + ` +ready +streamable-http +6 +`).MatchString(r.stdout) {
			t.Errorf("ls --db --connect row of %s:\n%s", id, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\nc ") {
		t.Errorf("ls after rm c:\n%s", r.stdout)
	}
	if got := sent(); got["a"] == 0 || got["c"] != 0 {
		t.Errorf("requests after ls --db --connect: %v, want some to a", got)
	}

	r = runCmd(t, "ls", "--connect")
	if line := r.errorLine(t, exitUsage); !strings.Contains(line, "--connect is for --db and --postgres") {
		t.Errorf("ls --connect without a database: %s", line)
	}
}

// TestRetryNote: how ls says when a failed server is tried again.
func TestRetryNote(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tt := range []struct {
		in   time.Duration
		want string
	}{
		{-3 * time.Second, "retrying now"},
		{200 * time.Millisecond, "retrying now"},
		{13*time.Second + 300*time.Millisecond, "retrying, next try in 13 s"},
		{2 * time.Minute, "retrying, next try in 2 min"},
		{4*time.Minute + 5*time.Second, "retrying, next try in 4 min 5 s"},
	} {
		if got := retryNote(now.Add(tt.in), now); got != tt.want {
			t.Errorf("retryNote(now+%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLsRetrying: through a running serve, a failed server that is being
// retried says so, with when the next try is (ls), and ls --json has the
// time as nextRetryAt.
func TestLsRetrying(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	_, hs := serve(t, mcptest.Stateful)
	runCmd(t, "add", "--db", db, "--id", "down", "down", hs.URL, "--transport", "streamable-http").mustSucceed(t)
	hs.Stop()
	s := startServe(t, "--db", db)

	re := regexp.MustCompile(`(?m)^down +down +failed .* (connection refused|the server closed the connection); retrying, next try in \d+ s$`)
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for {
		r := runCmd(t, "ls", "--server", s.base)
		r.mustSucceed(t)
		if re.MatchString(r.stdout) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ls never showed the retry:\n%s", r.stdout)
		}
	}
	for {
		r := runCmd(t, "ls", "--server", s.base, "--json")
		r.mustSucceed(t)
		var st agent.MCPServersState
		decode(t, r.stdout, &st)
		if d := st.Servers["down"]; d.State == "failed" && d.NextRetryAt != nil {
			if !strings.Contains(r.stdout, `"nextRetryAt": "`) {
				t.Errorf("ls --json:\n%s", r.stdout)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ls --json never had nextRetryAt:\n%s", r.stdout)
		}
	}
}

// storeFailed stores a server of the default agent in the database at db
// with the library's own AddMCPServer, which keeps a server whatever its
// first connection did (add refuses some).
func storeFailed(t *testing.T, db, id, url string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := agent.Open(ctx, st, "agentmcp", "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	opts := &agent.AddOptions{ID: id, Transport: mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP},
		Retry: &mcpclient.RetryOptions{MaxAttempts: 1}}
	if _, err := a.AddMCPServer(ctx, id, url, opts); err == nil {
		t.Fatalf("%s connected", url)
	}
}
