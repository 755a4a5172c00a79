package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

// process is a node program of a test: its stdout lines on a channel, its
// stdin writable, its stderr in the test log; killed (by PID) and waited
// for when the test ends.
type process struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func start(t *testing.T, c peers.Command) *process {
	t.Helper()
	cmd := c.Cmd()
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
	cmd.Env = append(cmd.Env, c.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	})
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		wg.Wait()
		cmd.Wait()
		if s := stderr.String(); s != "" {
			t.Logf("stderr of %s:\n%s", filepath.Base(c.Args[0]), s)
		}
	})
	return p
}

// next returns the next stdout line, failing the test at its end.
func (p *process) next(ctx context.Context) string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the program ended")
		}
		return l
	case <-ctx.Done():
		p.t.Fatal("no output from the program")
	}
	return ""
}

// step reads stdout lines until the JSON line of step, into v.
func (p *process) step(ctx context.Context, step string, v any) {
	p.t.Helper()
	for {
		l := p.next(ctx)
		var s struct{ Step string }
		if json.Unmarshal([]byte(l), &s) == nil && s.Step == step {
			if err := json.Unmarshal([]byte(l), v); err != nil {
				p.t.Fatal(err)
			}
			return
		}
		p.t.Logf("program: %s", l)
	}
}

func (p *process) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestTypeScriptClient: the official TypeScript SDK's client (pinned in
// test/npm) lists, calls a tool on each upstream server, gets a prompt,
// reads a resource, answers an upstream elicitation, cancels a slow call
// (the upstream server sees it), and gets list_changed when a server is
// added. The SDK speaks 2025-11-25 at most: the session era.
func TestTypeScriptClient(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	script, err := filepath.Abs("testdata/tsclient.mjs")
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, peers.Command{Path: peers.Node22(t), Args: []string{script, peers.Require(t), e.URL}})

	var basics struct {
		ProtocolVersion                     string
		Tools                               []string
		EchoA, EchoB, Prompt, Resource, Ask string
	}
	p.step(ctx, "basics", &basics)
	if basics.ProtocolVersion != eraSessions {
		t.Errorf("protocol version %q; want %s", basics.ProtocolVersion, eraSessions)
	}
	for _, want := range []string{"tool_alpha_echo", "tool_beta_echo", "tool_beta_ask"} {
		if !slices.Contains(basics.Tools, want) {
			t.Errorf("tools/list has no %s: %v", want, basics.Tools)
		}
	}
	if basics.EchoA != "echo: a" || basics.EchoB != "echo: b" || basics.Prompt != "Hello, Ada!" ||
		basics.Resource != "static content" || basics.Ask != "accept:Grace" {
		t.Errorf("basics = %+v", basics)
	}

	var slow struct{}
	p.step(ctx, "slow", &slow)
	select {
	case <-e.alpha.SlowStarted:
	case <-ctx.Done():
		t.Fatal("the slow call did not reach the upstream server")
	}
	p.send("cancel")
	select {
	case <-e.alpha.SlowCancelled:
	case <-ctx.Done():
		t.Fatal("the upstream server did not see the cancellation")
	}
	var cancelled struct{ Error string }
	p.step(ctx, "cancelled", &cancelled)
	if cancelled.Error == "" {
		t.Error("the cancelled call returned a result")
	}

	gamma := mcptest.NewServer("gamma")
	gammaHTTP := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return gamma.Server })
	if _, err := e.a.AddMCPServer(ctx, "gamma", gammaHTTP.URL, &agent.AddOptions{ID: "gamma"}); err != nil {
		t.Fatal(err)
	}
	for {
		var changed struct{ Tools []string }
		p.step(ctx, "changed", &changed)
		if slices.Contains(changed.Tools, "tool_gamma_echo") {
			break
		}
	}
	p.send("quit")
}

// TestInspectorCLI: the MCP Inspector's command-line mode (pinned in
// test/npm) lists the gateway's tools and calls one.
func TestInspectorCLI(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	run := func(args ...string) string {
		t.Helper()
		c := peers.InspectorCommand(t, append([]string{e.URL, "--transport", "http"}, args...)...)
		cmd := exec.CommandContext(ctx, c.Path, c.Args...)
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"), "NO_COLOR=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %v: %v\n%s\n%s", args, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	var list struct {
		Tools []struct{ Name, Title, Description string }
	}
	out := run("--method", "tools/list")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools/list output: %v\n%s", err, out)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"tool_alpha_echo", "tool_beta_echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("the inspector lists no %s: %v", want, names)
		}
	}
	out = run("--method", "tools/call", "--tool-name", "tool_beta_echo", "--tool-arg", "text=from the inspector")
	if !strings.Contains(out, "echo: from the inspector") {
		t.Errorf("tools/call output:\n%s", out)
	}
}
