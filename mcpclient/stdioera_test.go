package mcpclient_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eraServer serves stdio in a protocol era of its own, each start noted as
// a line of AGENTMCP_TEST_START_FILE: in mode "legacy" a go-sdk server
// pinned to the legacy versions (it refuses the 2026-07-28 probe and stays
// up); in "legacy-strict" a scripted legacy server that exits on the
// probe; in "modern" a go-sdk server that speaks only 2026-07-28 (it refuses
// initialize).
func eraServer(mode string) int {
	if f := os.Getenv("AGENTMCP_TEST_START_FILE"); f != "" {
		out, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, os.Getpid())
		out.Close()
	}
	var err error
	switch mode {
	case "legacy":
		err = mcptest.NewLegacyServer("legacy").Run(context.Background(), &mcp.StdioTransport{})
	case "legacy-strict":
		err = mcptest.ServeStrictLegacy(os.Stdin, os.Stdout)
	case "modern":
		srv := mcp.NewServer(&mcp.Implementation{Name: "modern", Version: "1.0.0"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2026-07-28"}})
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "initialize" {
					return nil, &jsonrpc.Error{Code: -32602, Message: "unsupported protocol version"}
				}
				return next(ctx, method, req)
			}
		})
		err = srv.Run(context.Background(), &mcp.StdioTransport{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// starts returns how many processes noted their start in file.
func starts(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// TestStdioLegacyStartedOnce: a stdio server that speaks only the legacy
// protocol is started once per connect: on a reconnect, and on the first
// connect of a new Manager given the server's saved ServerInfo.Resume (an
// agent that wakes), the legacy handshake comes first, with no 2026-07-28
// probe that a server may exit on. Only the first connect ever of a
// server that exits on the probe starts it twice.
func TestStdioLegacyStartedOnce(t *testing.T) {
	for _, tc := range []struct {
		mode      string
		firstEver int
	}{{"legacy", 1}, {"legacy-strict", 2}} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx := testCtx(t)
			file := filepath.Join(t.TempDir(), "starts")
			opts := mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{Path: os.Args[0],
				Env: []string{"AGENTMCP_TEST_STDIO_SERVER=" + tc.mode, "AGENTMCP_TEST_START_FILE=" + file}}}
			m := newManager(t, nil)
			connectReady(t, m, "s", opts)
			if n := starts(t, file); n != tc.firstEver {
				t.Errorf("first connect ever: %d starts; want %d", n, tc.firstEver)
			}
			info, _ := m.Server("s")
			if info.ProtocolVersion != "2025-11-25" {
				t.Fatalf("protocol %q; want 2025-11-25", info.ProtocolVersion)
			}
			if info.Resume == nil || info.Resume.ProtocolVersion != "2025-11-25" || info.Resume.SessionID != "" {
				t.Errorf("resume %+v; want the era (2025-11-25) and no session", info.Resume)
			}

			before := starts(t, file)
			if err := m.CloseConnection(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			if r, _ := m.ConnectToServer(ctx, "s"); r.State != mcpclient.StateConnected {
				t.Fatalf("reconnect: %+v", r)
			}
			if n := starts(t, file) - before; n != 1 {
				t.Errorf("reconnect: %d starts; want 1", n)
			}

			// A new Manager (a restart, an agent that wakes) given what the
			// last one said.
			before = starts(t, file)
			opts.Resume = info.Resume
			m2 := newManager(t, nil)
			connectReady(t, m2, "s", opts)
			if n := starts(t, file) - before; n != 1 {
				t.Errorf("connect of a new Manager given the saved Resume: %d starts; want 1", n)
			}
			res, err := m2.CallTool(ctx, "s", "echo", map[string]any{"text": "once"}, nil)
			if err != nil || textOf(t, res) != "echo: once" {
				t.Fatalf("echo: %v", err)
			}
		})
	}
}

// TestStdioRememberedEraFails: a stdio server that no longer speaks the
// legacy era remembered for it (given as ServerOptions.Resume) is
// restarted for the 2026-07-28 handshake, and connects.
func TestStdioRememberedEraFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "starts")
	m := newManager(t, nil)
	connectReady(t, m, "s", mcpclient.ServerOptions{
		Command: &mcpclient.CommandOptions{Path: os.Args[0], Env: []string{"AGENTMCP_TEST_STDIO_SERVER=modern", "AGENTMCP_TEST_START_FILE=" + file}},
		Resume:  &mcpclient.Resume{ProtocolVersion: "2025-11-25", Result: &mcp.InitializeResult{ProtocolVersion: "2025-11-25"}},
	})
	info, _ := m.Server("s")
	if info.ProtocolVersion != "2026-07-28" || info.Resume != nil {
		t.Errorf("protocol %q, resume %+v; want 2026-07-28, no resume", info.ProtocolVersion, info.Resume)
	}
	if n := starts(t, file); n != 2 {
		t.Errorf("%d starts; want 2 (the legacy handshake, then the probe)", n)
	}
}
