package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestAddSuggestsScheme: a server URL without its scheme is refused with
// the URL it was likely meant to be.
func TestAddSuggestsScheme(t *testing.T) {
	t.Setenv(envServer, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	for _, tt := range []struct{ in, want string }{
		{"127.0.0.1:3101/mcp", "did you mean http://127.0.0.1:3101/mcp?"},
		{"localhost:3101/mcp", "did you mean http://localhost:3101/mcp?"},
		{"docs.example.com/mcp?key=secret", "did you mean https://docs.example.com/mcp?"},
	} {
		r := runCmd(t, "add", "--db", db, "x", tt.in)
		if line := r.errorLine(t, exitUsage); !strings.Contains(line, tt.want) || strings.Contains(line, "secret") {
			t.Errorf("add x %s: %s; want %q", tt.in, line, tt.want)
		}
	}
}

// TestConnectFailureText: add and reconnect say what failed in short (as
// ls does), with the server's name, what happens to the server and the
// command that tries it again (never an API route), then the whole error,
// each once; a stdio server's command is shown as typed.
func TestConnectFailureText(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")

	r := runCmd(t, "add", "--db", db, "--keep-if-unreachable", "--id", "broken", "broken", "--", "/bin/false", "a b")
	line := r.errorLine(t, exitFailure)
	want := `agentmcp: adding broken: the server exited with status 1. It is saved: agentmcp serve retries it; to try it now: agentmcp reconnect --db ` + shellWord(db) +
		` broken. Detail: failed to connect to MCP server at command /bin/false 'a b': calling "initialize": EOF; stdio server exited with status 1`
	if line != want {
		t.Errorf("add of a failing stdio server:\n%s\nwant\n%s", line, want)
	}
	runCmd(t, "rm", "--db", db, "broken").mustSucceed(t)

	_, hs := serve(t, mcptest.Stateful)
	runCmd(t, "add", "--db", db, "--id", "docs", "docs", hs.URL, "--transport", "streamable-http").mustSucceed(t)
	hs.Stop()
	s := startServe(t, "--db", db)
	r = runCmd(t, "reconnect", "--server", s.base, "docs")
	line = r.errorLine(t, exitFailure)
	prefix := `agentmcp: reconnecting docs: cannot connect: connection refused. It keeps being retried in the background (agentmcp ls shows the next try); to try it now: agentmcp reconnect --server ` +
		s.base + ` docs. Detail: failed to connect to MCP server at ` + hs.URL + `: `
	if !strings.HasPrefix(line, prefix) || strings.Count(line, "reconnecting") != 1 || strings.Count(line, "failed to connect") != 1 || strings.Contains(line, "POST .../") {
		t.Errorf("reconnect through serve:\n%s\nwant it to start\n%s", line, prefix)
	}
}
