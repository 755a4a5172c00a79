package stdio_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient/stdio"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func serverCmd(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AGENTMCP_TEST_STDIO_SERVER="+mode)
	return cmd
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1.0.0"}, nil)
}

// TestOutputExplainsFailedStart: a server that exits before its handshake
// fails the connection, and Output quotes what it wrote on stdout and
// stderr.
func TestOutputExplainsFailedStart(t *testing.T) {
	tr := &stdio.Transport{Command: serverCmd("fail")}
	if tr.Output() != "" {
		t.Errorf("Output before Connect = %q, want empty", tr.Output())
	}
	if _, err := newClient().Connect(testCtx(t), tr, nil); err == nil {
		t.Fatal("Connect succeeded; want the server's exit")
	}
	want := `server stdout had a line that is not JSON-RPC: "Error: API_KEY is not set"; server stderr: fatal: bad configuration`
	if got := tr.Output(); got != want {
		t.Errorf("Output = %q\nwant     %q", got, want)
	}
}

// TestOutputWithOwnStderr: a Command whose Stderr is set keeps it; Output
// then speaks of stdout only.
func TestOutputWithOwnStderr(t *testing.T) {
	var stderr strings.Builder
	cmd := serverCmd("fail")
	cmd.Stderr = &stderr
	tr := &stdio.Transport{Command: cmd}
	if _, err := newClient().Connect(testCtx(t), tr, nil); err == nil {
		t.Fatal("Connect succeeded; want the server's exit")
	}
	if got := tr.Output(); strings.Contains(got, "stderr") || !strings.Contains(got, "API_KEY") {
		t.Errorf("Output = %q; want the stdout line only", got)
	}
	if got := stderr.String(); got != "fatal: bad configuration\n" {
		t.Errorf("the command's Stderr got %q", got)
	}
}

// TestMaxLineLength: a line over the cap fails the connection's Read
// with transport.ErrProtocol, quoting its start.
func TestMaxLineLength(t *testing.T) {
	tr := &stdio.Transport{Command: serverCmd("long"), MaxLineLength: 1024}
	conn, err := tr.Connect(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Read(testCtx(t))
	if !errors.Is(err, transport.ErrProtocol) || !strings.Contains(err.Error(), "over the limit of 1024 bytes") {
		t.Fatalf("Read: %v; want ErrProtocol for the long line", err)
	}
}

// countBytes is a transport.Counter.
type countBytes struct{ sent, received int }

func (c *countBytes) Sent(n int)     { c.sent += n }
func (c *countBytes) Received(n int) { c.received += n }

// TestCounter: the Counter sees the bytes of the messages both ways.
func TestCounter(t *testing.T) {
	var c countBytes
	session, err := newClient().Connect(testCtx(t), &stdio.Transport{Command: serverCmd("serve"), Counter: &c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.ListTools(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	// initialize, notifications/initialized and tools/list out; two
	// answers in, the tools list holding the tool's name.
	if c.sent < 100 || c.received < 100 {
		t.Errorf("counted %d bytes sent, %d received", c.sent, c.received)
	}
}

// TestStarterClosed: a closed Starter starts nothing.
func TestStarterClosed(t *testing.T) {
	starter := stdio.NewStarter()
	starter.Close()
	starter.Close() // a second Close is a no-op
	_, err := newClient().Connect(testCtx(t), &stdio.Transport{Command: serverCmd("serve"), Starter: starter}, nil)
	if !errors.Is(err, stdio.ErrStarterClosed) {
		t.Fatalf("Connect: %v; want ErrStarterClosed", err)
	}
}

// TestStarterCloseWaits: Close returns once the processes it started are
// reaped, so a session closed concurrently lets it return.
func TestStarterCloseWaits(t *testing.T) {
	starter := stdio.NewStarter()
	cmd := serverCmd("serve")
	session, err := newClient().Connect(testCtx(t), &stdio.Transport{Command: cmd, Starter: starter}, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		starter.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while its process runs")
	default:
	}
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	<-closed
	if cmd.ProcessState == nil {
		t.Error("the process was not reaped")
	}
}

// TestExit: a server that exits during its handshake leaves its exit
// status and last stderr line in Exit; one stopped by Close leaves
// nothing there; a program that cannot run fails Connect with os/exec's
// typed error, not an exit.
func TestExit(t *testing.T) {
	tr := &stdio.Transport{Command: serverCmd("fail")}
	if tr.Exit() != nil {
		t.Errorf("Exit before Connect = %v", tr.Exit())
	}
	if _, err := newClient().Connect(testCtx(t), tr, nil); err == nil {
		t.Fatal("Connect succeeded; want the server's exit")
	}
	var exit *stdio.ExitError
	if !errors.As(tr.Exit(), &exit) || *exit != (stdio.ExitError{Code: 1, Stderr: "fatal: bad configuration"}) {
		t.Errorf("Exit = %#v; want status 1 with the stderr line", tr.Exit())
	}

	ok := &stdio.Transport{Command: serverCmd("serve")}
	cs, err := newClient().Connect(testCtx(t), ok, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs.Close()
	if ok.Exit() != nil {
		t.Errorf("Exit of a server stopped by Close = %v; want nil", ok.Exit())
	}

	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		cmd  *exec.Cmd
		want error
	}{
		{"no such program", exec.Command(dir + "/missing"), fs.ErrNotExist},
		{"not executable", exec.Command("/dev/null"), fs.ErrPermission},
	} {
		tr := &stdio.Transport{Command: tt.cmd}
		_, err := newClient().Connect(testCtx(t), tr, nil)
		var ee *exec.Error
		if !errors.As(err, &ee) || !errors.Is(err, tt.want) || ee.Name != tt.cmd.Path {
			t.Errorf("%s: Connect = %v; want an *exec.Error for %s wrapping %v", tt.name, err, tt.cmd.Path, tt.want)
		}
	}
}

// TestStartFailureUnderSupervisor: a program the supervisor cannot start
// (it is executable but no program) is the supervisor's exit with status
// 127 and the reason on stderr, not the supervisor's death.
func TestStartFailureUnderSupervisor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the supervisor runs on Linux")
	}
	path := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(path, []byte{0, 1, 2, 3}, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := &stdio.Transport{Command: exec.Command(path)}
	_, err := newClient().Connect(testCtx(t), tr, nil)
	if err == nil || strings.Contains(err.Error(), "died") {
		t.Errorf("Connect = %v; want the failed start, not the supervisor's death", err)
	}
	var exit *stdio.ExitError
	if !errors.As(tr.Exit(), &exit) || exit.Code != 127 || !strings.Contains(exit.Stderr, "exec format error") {
		t.Errorf("Exit = %#v; want status 127 with the reason", tr.Exit())
	}
}
