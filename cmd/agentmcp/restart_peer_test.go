package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

// TestServeRestartWithPeer: serve stopped, the reference server (a real
// process) restarted, serve started again: the server is ready with its
// tools after exactly one fresh handshake, although the reference server
// answers the old session with "400 No valid session ID provided". A
// proxy on 127.0.0.1 counts the handshakes.
func TestServeRestartWithPeer(t *testing.T) {
	peers.Require(t)
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	ps := peers.StartEverything(t, "streamableHttp")
	px, counts := mcptest.CountingProxy(t, ps.URL)
	db := filepath.Join(t.TempDir(), "agentmcp.db")

	s := startServe(t, "--db", db)
	runCmd(t, "add", "everything", px.URL, "--id", "ev", "--server", s.base).mustSucceed(t)
	if r := s.stop(); r.err != nil {
		t.Fatalf("stop: %+v", r)
	}
	ps.Restart()
	before := counts.Handshakes.Load()

	s2 := startServe(t, "--db", db)
	waitReady(t, s2.base, "ev")
	if n := counts.Handshakes.Load() - before; n != 1 {
		t.Errorf("%d handshakes after both restarted, want 1", n)
	}
	r := runCmd(t, "tools", "--server", s2.base, "ev")
	r.mustSucceed(t)
	if !regexp.MustCompile(`(?m)^ev\s+echo\s`).MatchString(r.stdout) {
		t.Errorf("tools:\n%s", r.stdout)
	}
	r = runCmd(t, "call", "ev", "echo", "--args", `{"message":"both"}`, "--server", s2.base)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "Echo: both") {
		t.Errorf("call:\n%s", r.stdout)
	}
}
