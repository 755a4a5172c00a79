package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioServer serves mcptest's server over stdin and stdout, its pid
// written to AGENTMCP_TEST_PID_FILE, when the test binary is run as a
// stdio MCP server.
func stdioServer() int {
	if f := os.Getenv("AGENTMCP_TEST_PID_FILE"); f != "" {
		os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	if err := mcptest.NewServer("stdio").Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStdioAdd: adding a stdio server through the API is refused unless
// the server allows it, and then still from a browser page of another
// origin (a trusted one included) and without a token; an allowed add runs
// the command, and its environment values never show in answers, frames
// or logs; removing it stops the process.
func TestStdioAdd(t *testing.T) {
	t.Parallel()
	const secret = "env-SECRET-b81d"
	pidFile := filepath.Join(t.TempDir(), "pid")
	body, _ := json.Marshal(api.AddRequest{Name: "local", ID: "local", Command: os.Args[0], Args: []string{"-test.run=^$"},
		Env: map[string]string{"AGENTMCP_TEST_STDIO_SERVER": "1", "AGENTMCP_TEST_PID_FILE": pidFile, "API_TOKEN": secret}})
	auth := "Authorization: Bearer tok"

	refused := func(e *env, why string, hdr ...string) {
		t.Helper()
		status, _, b := e.do("POST", agentPath+"/servers", string(body), hdr...)
		if status != 403 {
			t.Fatalf("%s: status %d, want 403: %s", why, status, b)
		}
		if code := apiError(t, b).Code; code != api.CodeStdioNotAllowed && code != api.CodeCrossOrigin {
			t.Errorf("%s: code %s", why, code)
		}
		if ids := e.stored("test/a"); len(ids) != 0 {
			t.Errorf("%s: stored %v", why, ids)
		}
		if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the command was run", why)
		}
	}

	off := newEnv(t, &Options{Token: "tok"})
	off.create("test", "a", auth)
	refused(off, "without AllowStdioServers", auth)
	if status, _, b := off.do("POST", agentPath+"/servers", string(body), auth); apiError(t, b).Code != api.CodeStdioNotAllowed {
		t.Errorf("without AllowStdioServers: %d %s", status, b)
	}

	noToken := newEnv(t, &Options{AllowStdioServers: true})
	noToken.create("test", "a")
	refused(noToken, "without a token")

	var logs lockedBuffer
	e := newEnv(t, &Options{Token: "tok", AllowStdioServers: true, TrustedOrigins: []string{"http://localhost:5173"},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	e.create("test", "a", auth)
	refused(e, "cross-site", auth, "Sec-Fetch-Site: cross-site", "Origin: https://evil.example")
	refused(e, "trusted origin", auth, "Sec-Fetch-Site: same-site", "Origin: http://localhost:5173")
	refused(e, "another origin, old browser", auth, "Origin: http://localhost:5173")

	ctx := testCtx(t)
	ws, _, err := websocket.Dial(ctx, client.AgentURL(e.ts.URL, "test", "a"), &websocket.DialOptions{HTTPHeader: map[string][]string{"Authorization": {"Bearer tok"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	status, _, b := e.do("POST", agentPath+"/servers", string(body), auth, "Sec-Fetch-Site: same-origin", "Origin: "+e.ts.URL)
	if status != 201 {
		t.Fatalf("allowed add: %d %s", status, b)
	}
	var frames [][]byte
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("reading frames: %v", err)
		}
		frames = append(frames, data)
		if bytes.Contains(data, []byte(`"state":"ready"`)) && bytes.Contains(data, []byte(`"env_names"`)) {
			break
		}
	}
	_, _, list := e.do("GET", agentPath+"/servers", "", auth)
	_, _, one := e.do("GET", agentPath+"/servers/local", "", auth)
	if !bytes.Contains(one, []byte("API_TOKEN")) || !bytes.Contains(one, []byte(`"command"`)) {
		t.Errorf("the server shows no command or env names: %s", one)
	}
	status, _, called := e.do("POST", agentPath+"/servers/local/tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, auth)
	if status != 200 || !strings.Contains(string(called), "echo: hi") {
		t.Errorf("call over stdio: %d %s", status, called)
	}
	for what, out := range map[string][]byte{"add answer": b, "list": list, "get": one, "frames": bytes.Join(frames, nil), "logs": []byte(logs.String())} {
		if bytes.Contains(out, []byte(secret)) {
			t.Errorf("the env value shows in the %s", what)
		}
	}

	pid := readPid(t, pidFile)
	if status, _, b := e.do("DELETE", agentPath+"/servers/local", "", auth); status != 204 {
		t.Fatalf("remove: %d %s", status, b)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("process %d still runs after the server was removed", pid)
	}
}

// TestDashboardStdioServer: the dashboard shows a stdio server's command
// line and env names, never an env value, and removes it (stopping its
// process).
func TestDashboardStdioServer(t *testing.T) {
	ctx, problems := browser(t)
	const secret = "env-SECRET-d00d"
	pidFile := filepath.Join(t.TempDir(), "pid")
	e := newEnv(t, &Options{DefaultAgent: "test/a", Token: "tok", AllowStdioServers: true})
	body, _ := json.Marshal(api.AddRequest{Name: "local", ID: "local", Command: os.Args[0], Args: []string{"-test.run=^$"},
		Env: map[string]string{"AGENTMCP_TEST_STDIO_SERVER": "1", "AGENTMCP_TEST_PID_FILE": pidFile, "API_TOKEN": secret}})
	if status, _, b := e.do("POST", agentPath+"/servers", string(body), "Authorization: Bearer tok"); status != 201 {
		t.Fatalf("add: %d %s", status, b)
	}
	row := `#servers tr[data-server-id="local"]`
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.ts.URL+"/?token=tok"),
		chromedp.WaitVisible(chromedp.CSS(row+` .state[data-state="ready"]`)),
	); err != nil {
		t.Fatalf("opening the dashboard: %v (problems: %v)", err, problems())
	}
	cell, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" td.url")))
	if err != nil {
		t.Fatal(err)
	}
	if want := "$ " + os.Args[0] + " '-test.run=^$'"; !strings.HasPrefix(cell, want) || !strings.Contains(cell, "API_TOKEN") {
		t.Errorf("command cell %q, want %q... with the env names", cell, want)
	}
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil || strings.Contains(html, secret) {
		t.Errorf("the page shows the env value (%v)", err)
	}
	pid := readPid(t, pidFile)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row+` button.remove`)),
		chromedp.Click(chromedp.CSS(row+` button.remove-confirm`)), // Remove asks first
		chromedp.WaitVisible(chromedp.CSS(`#no-servers`)),
	); err != nil {
		t.Fatalf("removing: %v (problems: %v)", err, problems())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("process %d still runs after the dashboard removed its server", pid)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %v", p)
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestDashboardAddStdioServer: with stdio adds allowed, the dashboard's
// add form adds a command (args, env, cwd) that becomes ready, and its env
// value is never on the page, not even left in the form; without them the
// form has no command fields.
func TestDashboardAddStdioServer(t *testing.T) {
	ctx, problems := browser(t)
	const secret = "env-SECRET-f00d"
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	e := newEnv(t, &Options{DefaultAgent: "test/a", Token: "tok", AllowStdioServers: true})
	row := `#servers tr[data-server-id="local"]`
	if err := chromedp.Do(ctx,
		chromedp.Navigate(e.ts.URL+"/?token=tok"),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-status="open"]`)),
		chromedp.Click(chromedp.CSS(`#add-kind input[value="command"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#add-form input[name="command"]`)),
		chromedp.SendKeys(chromedp.CSS(`#add-form input[name="name"]`), "local"),
		chromedp.SendKeys(chromedp.CSS(`#add-form input[name="id"]`), "local"),
		chromedp.SendKeys(chromedp.CSS(`#add-form input[name="command"]`), os.Args[0]),
		chromedp.SendKeys(chromedp.CSS(`#add-form input[name="cwd"]`), dir),
		chromedp.SendKeys(chromedp.CSS(`#add-form textarea[name="args"]`), "-test.run=^$\n-test.count=1"),
		chromedp.SendKeys(chromedp.CSS(`#add-form textarea[name="env"]`),
			"AGENTMCP_TEST_STDIO_SERVER=1\nAGENTMCP_TEST_PID_FILE="+pidFile+"\nAPI_TOKEN="+secret),
		chromedp.Click(chromedp.CSS(`#add-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(row+` .state[data-state="ready"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#add-result[data-outcome="ok"]`)),
	); err != nil {
		t.Fatalf("adding a command through the form: %v (problems: %v)", err, problems())
	}
	cell, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(row+" td.url")))
	if err != nil {
		t.Fatal(err)
	}
	if want := "$ " + os.Args[0] + " '-test.run=^$' -test.count=1"; !strings.HasPrefix(cell, want) || !strings.Contains(cell, "API_TOKEN") {
		t.Errorf("command cell %q, want %q... with the env names", cell, want)
	}
	// The server runs in the working directory given.
	pid := readPid(t, pidFile)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // stop anything left
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil && cwd != dir {
		t.Errorf("server cwd %q, want %q", cwd, dir)
	}
	page, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`document.documentElement.outerHTML + [...document.querySelectorAll("input, textarea")].map((i) => i.value).join("\n")`))
	if err != nil || strings.Contains(page, secret) {
		t.Errorf("the page shows the env value (%v)", err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row+` button.remove`)),
		chromedp.Click(chromedp.CSS(row+` button.remove-confirm`)), // Remove asks first
		chromedp.WaitVisible(chromedp.CSS(`#no-servers`)),
	); err != nil {
		t.Fatalf("removing: %v (problems: %v)", err, problems())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still runs after the dashboard removed its server", pid)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %v", p)
	}

	// Without stdio adds (no flag, or no token to require), the form has
	// no command fields: only URL servers.
	for _, opts := range []*Options{{DefaultAgent: "test/a", Token: "tok"}, {DefaultAgent: "test/a", AllowStdioServers: true}} {
		e := newEnv(t, opts)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(e.ts.URL+"/?token=tok"),
			chromedp.WaitVisible(chromedp.CSS(`#status[data-status="open"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#add-form input[name="url"]`)),
		); err != nil {
			t.Fatalf("opening the dashboard (%+v): %v", opts, err)
		}
		fields, err := chromedp.Run(ctx, chromedp.Evaluate[int](
			`document.querySelectorAll('#add-kind, #add-form [name="command"], #add-form [name="env"], #add-form [name="args"], #add-form [name="cwd"]').length`))
		if err != nil {
			t.Fatal(err)
		}
		if fields != 0 {
			t.Errorf("the form has %d command fields with %+v", fields, opts)
		}
	}
}
