package mcpclient_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	// The test binary doubles as a stdio MCP server for the stdio tests.
	if mode := os.Getenv("AGENTMCP_TEST_STDIO_SERVER"); strings.HasPrefix(mode, "legacy") || mode == "modern" {
		os.Exit(eraServer(mode))
	} else if mode != "" {
		os.Exit(stdioServer(mode))
	}
	if mode := os.Getenv("AGENTMCP_TEST_STDIO_PARENT"); mode != "" {
		os.Exit(stdioParent())
	}
	// The stdio servers and supervisors started are this binary: under
	// the race detector each would sleep a second as it exits.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}

// stdioServer serves mcptest's server over stdin and stdout, or, in mode
// "fail", complains on stderr and exits as a misconfigured server would.
func stdioServer(mode string) int {
	if mode == "fail" {
		fmt.Fprintln(os.Stderr, "fatal: bad configuration")
		return 3
	}
	if f := os.Getenv("AGENTMCP_TEST_PID_FILE"); f != "" {
		os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	fmt.Fprintln(os.Stderr, "stdio test server starting")
	switch mode {
	case "crash":
		// A server that dies at once on every start, saying why.
		fmt.Fprintln(os.Stderr, "crash: cannot open the database")
		return 2
	case "spawn-child":
		// A server that starts a process of its own (as npx starts node),
		// which stays in its process group.
		if err := spawnChild(false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "linger-escape":
		// A server that lingers, with a child that left its process
		// group (a session of its own) and never reads stdin.
		if err := spawnChild(true); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "noisy":
		// What careless servers print on stdout before they serve: a
		// banner, log lines (one bracketed, one JSON but not JSON-RPC),
		// control characters, blank lines; more than are logged.
		fmt.Println("Note: server starting\x1b[31m")
		fmt.Println("[INFO] listening on stdio")
		fmt.Println(`{"level":"info","msg":"ready"}`)
		fmt.Println()
		for i := range 20 {
			fmt.Printf("noise %d\n", i)
		}
	case "noisy-exit":
		// A misconfigured server that says why on stdout, and exits.
		fmt.Println("Error: API_KEY is not set\u202e")
		return 1
	}
	server := mcptest.NewServer("stdio")
	if mode == "env" {
		// A server that says what environment it was given.
		mcp.AddTool(server.Server, &mcp.Tool{Name: "env", Description: "Lists its environment."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
			})
	}
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if mode == "exit-badly" {
		return 7 // a server that fails on shutdown
	}
	if mode == "linger" || mode == "linger-escape" {
		// A server that does not exit when its stdin closes (or is too
		// slow to): only a signal ends it.
		select {}
	}
	return 0
}

// spawnChild starts a long sleep, in a session of its own when setsid,
// its pid in AGENTMCP_TEST_CHILD_PID_FILE.
func spawnChild(setsid bool) error {
	child := exec.Command("sleep", "600")
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := child.Start(); err != nil {
		return err
	}
	return os.WriteFile(os.Getenv("AGENTMCP_TEST_CHILD_PID_FILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o644)
}

// newManager returns a Manager closed when the test ends.
func newManager(t testing.TB, opts *mcpclient.Options) *mcpclient.Manager {
	t.Helper()
	m := mcpclient.New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// testCtx is a context bounded as a safety net.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connectReady registers, connects and discovers a server, failing the
// test unless it ends ready.
func connectReady(t testing.TB, m *mcpclient.Manager, id string, opts mcpclient.ServerOptions) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := m.RegisterServer(ctx, id, opts); err != nil {
		t.Fatal(err)
	}
	res, err := m.ConnectToServer(ctx, id)
	if err != nil || res.State != mcpclient.StateConnected {
		t.Fatalf("ConnectToServer(%s) = %+v, %v; want connected", id, res, err)
	}
	d, err := m.DiscoverIfConnected(ctx, id, nil)
	if err != nil || !d.Success || d.State != mcpclient.StateReady {
		t.Fatalf("DiscoverIfConnected(%s) = %+v, %v; want ready", id, d, err)
	}
}

func inProcess(s *mcptest.Server) mcpclient.InProcessFactory {
	return func(context.Context, map[string]any) (*mcp.Server, error) { return s.Server, nil }
}

// textOf returns the first text content of a tool result.
func textOf(t testing.TB, r *mcp.CallToolResult) string {
	t.Helper()
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	t.Fatalf("no text in result %+v", r)
	return ""
}

// stdioParent is a process that runs a stdio server (mode linger-escape,
// which does not exit when its stdin closes, with a child out of its
// process group; their pids in AGENTMCP_TEST_PID_FILE and
// AGENTMCP_TEST_CHILD_PID_FILE), says "ready" on stdout once the server is, and
// waits to be killed.
func stdioParent() int {
	m := mcpclient.New(nil)
	ctx := context.Background()
	m.RegisterServer(ctx, "s", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{Path: os.Args[0],
		Env: []string{"AGENTMCP_TEST_STDIO_SERVER=linger-escape", "AGENTMCP_TEST_PID_FILE=" + os.Getenv("AGENTMCP_TEST_PID_FILE"),
			"AGENTMCP_TEST_CHILD_PID_FILE=" + os.Getenv("AGENTMCP_TEST_CHILD_PID_FILE")}}})
	if res, err := m.ConnectToServer(ctx, "s"); err != nil || res.State != mcpclient.StateConnected {
		fmt.Fprintln(os.Stderr, "connect:", res.Err, err)
		return 1
	}
	fmt.Println("ready")
	select {}
}
