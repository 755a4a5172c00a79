package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestAddRefusals: through a running serve and on a database, add gives a
// new server its name as its id; refuses, storing nothing, a URL that is
// no MCP endpoint and one that cannot be reached (unless
// --keep-if-unreachable); and refuses a name another server has, naming
// it, unless --replace.
func TestAddRefusals(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	refused := "http://" + fixture.RefusingAddr(t) + "/mcp"
	one := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("one").Server }).URL
	two := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("two").Server }).URL

	s := startServe(t, "--db", filepath.Join(t.TempDir(), "served.db"))
	for _, target := range [][]string{{"--server", s.base}, {"--db", filepath.Join(t.TempDir(), "direct.db")}} {
		t.Run(target[0], func(t *testing.T) {
			add := func(args ...string) result {
				return runCmd(t, append(append([]string{"add"}, target...), args...)...)
			}
			ls := func() string {
				r := runCmd(t, append([]string{"ls"}, target...)...)
				r.mustSucceed(t)
				return r.stdout
			}
			line := add("web", notFound.URL+"/mpc").errorLine(t, exitFailure)
			if want := "agentmcp: web is not an MCP endpoint: " + notFound.URL + "/mpc answered HTTP 404 Not Found; check the URL's path (nothing was saved)"; line != want {
				t.Errorf("not an MCP endpoint:\n got %s\nwant %s", line, want)
			}
			line = add("down", refused).errorLine(t, exitFailure)
			if !strings.Contains(line, "connection refused; nothing was saved (add --keep-if-unreachable to keep it and retry it in the background)") {
				t.Errorf("unreachable: %s", line)
			}
			if out := ls(); !strings.HasPrefix(out, "no servers") {
				t.Errorf("stored after the refusals:\n%s", out)
			}
			if r := add("--keep-if-unreachable", "down", refused); r.code != exitFailure || !strings.Contains(ls(), "down ") {
				t.Errorf("--keep-if-unreachable: %+v\n%s", r, ls())
			}

			r := add("My Docs", one)
			r.mustSucceed(t)
			if r.stdout != "added My Docs as my-docs: ready\n" {
				t.Errorf("add: %q", r.stdout)
			}
			line = add("My Docs", two).errorLine(t, exitFailure)
			if want := `agentmcp: a server named "My Docs" already exists (id my-docs, ` + one + `): remove it first (agentmcp rm my-docs) or add --replace to replace it`; line != want {
				t.Errorf("name in use:\n got %s\nwant %s", line, want)
			}
			r = add("--replace", "My Docs", two)
			r.mustSucceed(t)
			if r.stdout != "added My Docs as my-docs: ready\n" {
				t.Errorf("replace: %q", r.stdout)
			}
			if out := ls(); strings.Count(out, "My Docs") != 1 || !strings.Contains(out, two) || strings.Contains(out, one) {
				t.Errorf("ls after replace:\n%s", out)
			}
		})
	}
}
