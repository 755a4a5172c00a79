package mcpclient_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStdio(t *testing.T) {
	var logs syncBuffer
	m := newManager(t, &mcpclient.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	pidFile := filepath.Join(t.TempDir(), "pid")
	connectReady(t, m, "local", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{
		Path: os.Args[0],
		Env:  []string{"AGENTMCP_TEST_STDIO_SERVER=serve", "AGENTMCP_TEST_PID_FILE=" + pidFile},
	}})
	ctx := testCtx(t)
	res, err := m.CallTool(ctx, "local", "echo", map[string]any{"text": "over stdio"}, nil)
	if err != nil || textOf(t, res) != "echo: over stdio" {
		t.Fatalf("echo: %v", err)
	}
	info, _ := m.Server("local")
	if info.Transport != mcpclient.TransportStdio || info.ProtocolVersion == "" {
		t.Errorf("transport %s, protocol %q", info.Transport, info.ProtocolVersion)
	}
	// The server's stderr reaches the logger.
	if !strings.Contains(logs.String(), "stdio test server starting") {
		t.Errorf("stderr not logged; logs:\n%s", logs.String())
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(data))

	// Closing shuts the process down and reaps it.
	if err := m.CloseConnection(ctx, "local"); err != nil {
		t.Fatalf("CloseConnection: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d still exists after close: %v", pid, err)
	}
	// It can be started again.
	if r, _ := m.ConnectToServer(ctx, "local"); r.State != mcpclient.StateConnected {
		t.Errorf("reconnect: %+v", r)
	}
}

// TestStdioStartFailure: a server that exits at once fails the handshake
// with what it said on stderr.
func TestStdioStartFailure(t *testing.T) {
	m := newManager(t, nil)
	ctx := testCtx(t)
	m.RegisterServer(ctx, "broken", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{
		Path: os.Args[0], Env: []string{"AGENTMCP_TEST_STDIO_SERVER=fail"}}})
	res, _ := m.ConnectToServer(ctx, "broken")
	if res.State != mcpclient.StateFailed || !strings.Contains(res.Err.Error(), "fatal: bad configuration") {
		t.Errorf("result %+v; want failed with the server's stderr", res)
	}
	m.RegisterServer(ctx, "missing", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{Path: "/nonexistent/mcp-server"}})
	if res, _ := m.ConnectToServer(ctx, "missing"); res.State != mcpclient.StateFailed {
		t.Errorf("missing program: %+v", res)
	}
}

// TestHeaders: custom headers go on every request of every HTTP transport,
// the SSE GET included, and never show in snapshots or errors.
func TestHeaders(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			hs, seen := headerRecorder(t, era.mode)
			m := newManager(t, nil)
			h := map[string][]string{"X-Tenant": {"t-secret-42"}, "Authorization": {"Bearer sk-secret"}}
			connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL, Transport: mcpclient.TransportOptions{Headers: h}})
			if _, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "x"}, nil); err != nil {
				t.Fatal(err)
			}
			m.CloseConnection(testCtx(t), "s1")
			reqs := seen()
			if len(reqs) < 3 {
				t.Fatalf("only %d requests", len(reqs))
			}
			var gets int
			for _, r := range reqs {
				if r.method == "GET" {
					gets++
				}
				if r.tenant != "t-secret-42" || r.auth != "Bearer sk-secret" {
					t.Errorf("%s request without the custom headers: %+v", r.method, r)
				}
			}
			if era.mode != mcptest.Stateless && gets == 0 { // legacy eras open a GET stream
				t.Errorf("no GET request seen")
			}
			// A failure does not reveal them either.
			hs.SetFault(500)
			res, _ := m.ConnectToServer(testCtx(t), "s1")
			for _, s := range []string{res.Err.Error(), fmtInfo(m)} {
				if strings.Contains(s, "secret") {
					t.Errorf("a header value leaked: %s", s)
				}
			}
		})
	}
}

type seenRequest struct{ method, tenant, auth string }

func headerRecorder(t *testing.T, mode mcptest.Mode) (*mcptest.HTTPServer, func() []seenRequest) {
	srv := mcptest.NewServer("s")
	real := mcptest.Handler(t, mode, func() *mcp.Server { return srv.Server })
	var mu sync.Mutex
	var seen []seenRequest
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, seenRequest{r.Method, r.Header.Get("X-Tenant"), r.Header.Get("Authorization")})
		mu.Unlock()
		real.ServeHTTP(w, r)
	}))
	return hs, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

func fmtInfo(m *mcpclient.Manager) string { return fmt.Sprintf("%+v", m.Servers()) }

// TestCloseAllConnections closes every server even when one fails to close,
// and reports that failure.
func TestCloseAllConnections(t *testing.T) {
	m := newManager(t, nil)
	connectReady(t, m, "good", mcpclient.ServerOptions{InProcess: inProcess(mcptest.NewServer("good"))})
	connectReady(t, m, "bad", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{
		Path: os.Args[0], Env: []string{"AGENTMCP_TEST_STDIO_SERVER=exit-badly"}}})
	connectReady(t, m, "good2", mcpclient.ServerOptions{InProcess: inProcess(mcptest.NewServer("good2"))})

	rec := record(m)
	var afterDispose atomic.Int64
	dispose := m.Subscribe(func(ev mcpclient.Event) {
		if ev.Kind == mcpclient.EventRemoved {
			afterDispose.Add(1)
		}
	})
	err := m.CloseAllConnections(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("CloseAllConnections = %v; want the bad server's failure", err)
	}
	for _, info := range m.Servers() {
		if info.State != mcpclient.StateNotConnected {
			t.Errorf("%s is %s after CloseAllConnections", info.ID, info.State)
		}
	}
	if len(m.Servers()) != 3 {
		t.Errorf("registrations lost: %d left", len(m.Servers()))
	}
	for _, id := range []string{"good", "bad", "good2"} {
		rec.waitFor(t, id+" not connected", stateIs(id, mcpclient.StateNotConnected))
		rec.pos = 0
	}
	// A disposed listener hears nothing published after dispose.
	dispose()
	dispose() // idempotent
	m.RemoveServer(testCtx(t), "good")
	if err := m.Close(testCtx(t)); err != nil { // delivers what is queued
		t.Fatal(err)
	}
	if n := afterDispose.Load(); n != 0 {
		t.Errorf("%d events after dispose", n)
	}
}

// TestStdioNoise: a stdio server that prints lines that are not JSON-RPC
// messages on stdout (a banner, log lines) still connects; the lines are
// skipped, and logged up to a bound, sanitised.
func TestStdioNoise(t *testing.T) {
	var logs syncBuffer
	m := newManager(t, &mcpclient.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	connectReady(t, m, "noisy", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{
		Path: os.Args[0],
		Env:  []string{"AGENTMCP_TEST_STDIO_SERVER=noisy"},
	}})
	res, err := m.CallTool(testCtx(t), "noisy", "echo", map[string]any{"text": "through the noise"}, nil)
	if err != nil || textOf(t, res) != "echo: through the noise" {
		t.Fatalf("echo: %v", err)
	}
	out := logs.String()
	if n := strings.Count(out, "not a JSON-RPC message to stdout; skipped"); n != 10 {
		t.Errorf("%d skipped lines logged, want 10 (the bound); logs:\n%s", n, out)
	}
	for _, want := range []string{`line="Note: server starting[31m"`, `line="[INFO] listening on stdio"`,
		`line="{\"level\":\"info\",\"msg\":\"ready\"}"`, "skipping them without logging past 10"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "noise 19") {
		t.Errorf("logs hold a control character or more lines than the bound:\n%s", out)
	}
}

// TestStdioNoiseQuoted: a stdio server that explains on stdout why it
// exits fails the connection with that line quoted, sanitised.
func TestStdioNoiseQuoted(t *testing.T) {
	m := newManager(t, nil)
	ctx := testCtx(t)
	m.RegisterServer(ctx, "broken", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{
		Path: os.Args[0],
		Env:  []string{"AGENTMCP_TEST_STDIO_SERVER=noisy-exit"},
	}})
	res, err := m.ConnectToServer(ctx, "broken")
	if err != nil {
		t.Fatal(err)
	}
	msg := fmt.Sprint(res.Err)
	if res.State != mcpclient.StateFailed || !strings.Contains(msg, `server stdout had a line that is not JSON-RPC: "Error: API_KEY is not set"`) {
		t.Errorf("state %s, error %q; want failed, quoting the line", res.State, msg)
	}
	if strings.Contains(msg, "invalid character") || strings.Contains(msg, "\u202e") {
		t.Errorf("error %q", msg)
	}
}

// TestCloseLingeringServer: a stdio server that does not exit when its
// stdin closes is ended by SIGTERM, and Close reports no error for the
// signal it sent itself (a busy machine makes any server slow to exit);
// the process is gone afterwards.
func TestCloseLingeringServer(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := newManager(t, nil)
	connectReady(t, m, "slow", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{
		Path: os.Args[0], Env: []string{"AGENTMCP_TEST_STDIO_SERVER=linger", "AGENTMCP_TEST_PID_FILE=" + pidFile}}})
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CloseConnection(testCtx(t), "slow"); err != nil {
		t.Errorf("CloseConnection = %v; want nil (the server was ended by our SIGTERM)", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still there after CloseConnection (kill 0: %v)", pid, err)
	}
}
