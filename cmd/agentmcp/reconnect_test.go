package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestReconnect: agentmcp reconnect connects a stored server again, on a
// database and through a running serve, and says in short why it cannot.
func TestReconnect(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	hs.SetFault(http.StatusBadGateway)
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	runCmd(t, "add", "--db", db, "--id", "s", "s", hs.URL, "--transport", "streamable-http", "--keep-if-unreachable")

	r := runCmd(t, "reconnect", "--db", db, "s")
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, "reconnecting s: server error (HTTP 502 Bad Gateway)") {
		t.Errorf("reconnect while the server fails: %s", line)
	}
	hs.SetFault(0)
	r = runCmd(t, "reconnect", "--db", db, "s")
	r.mustSucceed(t)
	if r.stdout != "s (s): ready\n" {
		t.Errorf("reconnect: %q", r.stdout)
	}
	r = runCmd(t, "reconnect", "--db", db, "nosuch")
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, `no server "nosuch"`) {
		t.Errorf("reconnect nosuch: %s", line)
	}

	s := startServe(t, "--db", db)
	waitReady(t, s.base, "s")
	r = runCmd(t, "reconnect", "--server", s.base, "s")
	r.mustSucceed(t)
	if r.stdout != "s (s): ready\n" {
		t.Errorf("reconnect through serve: %q", r.stdout)
	}
}

// TestUnknownAgent: reading an agent that does not exist is an error
// naming the agents that do, on a database and through serve; it never
// creates an empty agent.
func TestUnknownAgent(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	_, hs := serve(t, mcptest.Stateful)
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	runCmd(t, "add", "--db", db, "--agent", "team/alpha", "--id", "s", "s", hs.URL).mustSucceed(t)

	for _, args := range [][]string{
		{"ls", "--db", db, "--agent", "nosuch/agent"},
		{"tools", "--db", db, "--agent", "nosuch/agent"},
		{"rm", "--db", db, "--agent", "nosuch/agent", "s"},
		{"call", "--db", db, "--agent", "nosuch/agent", "s", "echo"},
	} {
		r := runCmd(t, args...)
		line := r.errorLine(t, exitFailure)
		if !strings.Contains(line, "there is no agent nosuch/agent in "+db+" (agents: agentmcp/default, team/alpha)") ||
			!strings.Contains(line, "agentmcp add --agent nosuch/agent") {
			t.Errorf("%s: %s", args[0], line)
		}
	}
	// Nothing was created; the default agent and team/alpha are read.
	runCmd(t, "ls", "--db", db).mustSucceed(t)
	r := runCmd(t, "ls", "--db", db, "--agent", "team/alpha", "--connect")
	r.mustSucceed(t)
	if !regexp.MustCompile(`(?m)^s +s +ready `).MatchString(r.stdout) {
		t.Errorf("ls team/alpha:\n%s", r.stdout)
	}

	s := startServe(t, "--db", db)
	r = runCmd(t, "ls", "--server", s.base, "--agent", "nosuch/agent")
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, "there is no agent nosuch/agent in agentmcp serve at "+s.base+" (agents: agentmcp/default, team/alpha)") {
		t.Errorf("ls through serve: %s", line)
	}
}
