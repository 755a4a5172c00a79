package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/internal/mcptest"
	"github.com/agentmcp/agentmcp/internal/peers"
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
	target, _ := url.Parse(ps.URL)
	var handshakes atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target.Host})
	proxy.FlushInterval = -1
	px := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), `"method":"initialize"`) {
			handshakes.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	db := filepath.Join(t.TempDir(), "agentmcp.db")

	s := startServe(t, "--db", db)
	runCmd(t, "add", "everything", px.URL, "--id", "ev", "--server", s.base).mustSucceed(t)
	if r := s.stop(); r.err != nil {
		t.Fatalf("stop: %+v", r)
	}
	ps.Restart()
	before := handshakes.Load()

	s2 := startServe(t, "--db", db)
	waitReady(t, s2.base, "ev")
	if n := handshakes.Load() - before; n != 1 {
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
