package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioServer serves mcptest's server over stdin and stdout, writing its
// pid to a new line of AGENTMCP_TEST_PID_FILE, when the test binary is run
// as a stdio MCP server.
func stdioServer() int {
	if f := os.Getenv("AGENTMCP_TEST_PID_FILE"); f != "" {
		pf, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(pf, os.Getpid())
			pf.Close()
		}
	}
	var err error
	if os.Getenv("AGENTMCP_TEST_STDIO_SERVER") == "legacy-strict" {
		// A legacy server that exits on the 2026-07-28 probe.
		err = mcptest.ServeStrictLegacy(os.Stdin, os.Stdout)
	} else {
		err = mcptest.NewServer("stdio").Run(context.Background(), &mcp.StdioTransport{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// pids returns the pids written to a pid file so far.
func pids(t *testing.T, file string) []int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file: %v", err)
		}
		out = append(out, pid)
	}
	return out
}

// gone reports whether no process has the pid (a zombie counts as gone:
// it no longer runs). Processes the test started are its children and are
// reaped by the agent; a zombie would mean they were not.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestStdioServer: an agent keeps a stdio server: added with its command,
// stored with its environment sealed, the same command is the same server,
// closing (hibernating) stops the process, reopening starts it again, and
// removing stops it for good.
func TestStdioServer(t *testing.T) {
	const secret = "env-SECRET-value-71f2"
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "agent.db")
	pidFile := filepath.Join(dir, "pids")
	key := bytes.Repeat([]byte{7}, 32)
	open := func() store.Store {
		cipher, err := store.NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sqlite.Open(testCtx(t), dbPath, &sqlite.Options{Cipher: cipher})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	ctx := testCtx(t)
	a, err := agent.Open(ctx, st, "TestAgent", "stdio", nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := &agent.Command{Path: os.Args[0], Args: []string{"-test.run=^$"}, Dir: dir,
		Env: map[string]string{"AGENTMCP_TEST_STDIO_SERVER": "serve", "AGENTMCP_TEST_PID_FILE": pidFile, "API_TOKEN": secret}}
	if err := a.CheckAdd("local", "", &agent.AddOptions{Command: cmd}); err != nil {
		t.Fatalf("CheckAdd: %v", err)
	}
	res, err := a.AddMCPServer(ctx, "local", "", &agent.AddOptions{Command: cmd})
	if err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("AddMCPServer = %+v, %v", res, err)
	}
	call := func(a *agent.Agent, id string) {
		t.Helper()
		r, err := a.CallTool(ctx, id, "echo", map[string]any{"text": "hi"}, nil)
		if err != nil || r.IsError {
			t.Fatalf("echo over stdio: %+v, %v", r, err)
		}
	}
	call(a, res.ID)

	// The same name and command (whatever the environment) is the same
	// server; another directory is another one.
	again := *cmd
	again.Env = map[string]string{"AGENTMCP_TEST_STDIO_SERVER": "serve", "AGENTMCP_TEST_PID_FILE": pidFile}
	if r, err := a.AddMCPServer(ctx, "local", "", &agent.AddOptions{Command: &again}); err != nil || r.ID != res.ID {
		t.Errorf("adding the same command again = %+v, %v; want id %q", r, err, res.ID)
	}
	if got := pids(t, pidFile); len(got) != 1 {
		t.Fatalf("processes started: %v; want one", got)
	}
	// A URL and a command together are refused.
	if _, err := a.AddMCPServer(ctx, "both", "http://127.0.0.1:1/mcp", &agent.AddOptions{Command: cmd}); err == nil {
		t.Error("a URL and a command together were accepted")
	}

	// What is shown: the command and the names of its environment, never
	// the values.
	srv, _ := a.Server(res.ID)
	want := agent.MCPServer{Command: []string{os.Args[0], "-test.run=^$"}, Cwd: dir,
		EnvNames: []string{"AGENTMCP_TEST_PID_FILE", "AGENTMCP_TEST_STDIO_SERVER", "API_TOKEN"}}
	if diff := cmp.Diff(want, agent.MCPServer{Command: srv.Command, Cwd: srv.Cwd, EnvNames: srv.EnvNames, ServerURL: srv.ServerURL}); diff != "" {
		t.Errorf("shown server (-want +got):\n%s", diff)
	}
	state, _ := json.Marshal(a.MCPServers())
	if bytes.Contains(state, []byte(secret)) {
		t.Errorf("an environment value is shown: %s", state)
	}

	// Closing the agent (as hibernation does) stops the process.
	first := pids(t, pidFile)[0]
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !gone(first) {
		t.Fatalf("process %d still runs after the agent closed", first)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret)) {
		t.Error("an environment value is stored in plaintext")
	}

	// Reopened (a wake, or a restart): the server comes back with a new
	// process and a handshake.
	st = open()
	t.Cleanup(func() { st.Close() })
	b := openAgent(t, st, "stdio", nil)
	b.WaitForConnections(ctx)
	call(b, res.ID)
	got := pids(t, pidFile)
	if len(got) != 2 {
		t.Fatalf("processes started: %v; want a second one", got)
	}
	if err := b.RemoveMCPServer(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
	if !gone(got[1]) {
		t.Errorf("process %d still runs after the server was removed", got[1])
	}
}

// TestStdioLegacyWake: an agent that wakes starts a legacy-only stdio
// server once, even one that exits on the 2026-07-28 probe: the era its
// process spoke is stored with the server (as its session to resume), so
// the wake goes straight to the legacy handshake. Only the first connect
// ever probes, and restarts such a server for the legacy handshake.
func TestStdioLegacyWake(t *testing.T) {
	dir := t.TempDir()
	dbPath, pidFile := filepath.Join(dir, "agent.db"), filepath.Join(dir, "pids")
	ctx := testCtx(t)
	st := openSQLite(t, dbPath)
	a, err := agent.Open(ctx, st, "TestAgent", "legacy", nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := &agent.Command{Path: os.Args[0], Args: []string{"-test.run=^$"},
		Env: map[string]string{"AGENTMCP_TEST_STDIO_SERVER": "legacy-strict", "AGENTMCP_TEST_PID_FILE": pidFile}}
	res, err := a.AddMCPServer(ctx, "legacy", "", &agent.AddOptions{Command: cmd})
	if err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("AddMCPServer = %+v, %v", res, err)
	}
	if got := pids(t, pidFile); len(got) != 2 {
		t.Errorf("first connect ever: processes started %v; want two (the probe, then the legacy handshake)", got)
	}
	if err := a.Close(ctx); err != nil { // as hibernation does
		t.Fatal(err)
	}
	for range 2 {
		before := len(pids(t, pidFile))
		b, err := agent.Open(ctx, st, "TestAgent", "legacy", nil)
		if err != nil {
			t.Fatal(err)
		}
		b.WaitForConnections(ctx)
		r, err := b.CallTool(ctx, res.ID, "echo", map[string]any{"text": "hi"}, nil)
		if err != nil || r.IsError {
			t.Fatalf("echo over stdio: %+v, %v", r, err)
		}
		if srv, _ := b.Server(res.ID); srv.ProtocolVersion != "2025-11-25" {
			t.Errorf("protocol %q; want 2025-11-25", srv.ProtocolVersion)
		}
		if err := b.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if got := pids(t, pidFile)[before:]; len(got) != 1 {
			t.Errorf("wake: processes started %v; want one", got)
		}
	}
}

// TestStdioFailureShowsCommand: a stdio server that fails its handshake
// is named by its command line as a shell would take it, never escaped as
// a URL.
func TestStdioFailureShowsCommand(t *testing.T) {
	a := openAgent(t, openSQLite(t, ""), "stdio-failure", nil)
	cmd := &agent.Command{Path: "/bin/false", Args: []string{"--flag", "a b", `c"d`, ""}}
	_, err := a.AddMCPServer(testCtx(t), "broken", "", &agent.AddOptions{Command: cmd, Retry: &mcpclient.RetryOptions{MaxAttempts: 1, DisableBackground: true}})
	if err == nil {
		t.Fatal("adding /bin/false succeeded")
	}
	if want := `command /bin/false --flag 'a b' 'c"d' ''`; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "%20") {
		t.Errorf("error %q; want it to name %s", err, want)
	}
}
