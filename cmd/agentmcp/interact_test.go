//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// pty is a real pseudo-terminal: the command gets the slave as its stdin
// and stderr; the test reads what it shows and types on the master.
type pty struct {
	master, slave *os.File

	mu   sync.Mutex
	out  bytes.Buffer
	more chan struct{} // signalled after each read
	done chan struct{}
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var n int
	rc, err := m.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ierr error
	rc.Control(func(fd uintptr) {
		if ierr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ierr == nil {
			n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if ierr != nil {
		m.Close()
		t.Fatal(ierr)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	p := &pty{master: m, slave: s, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		s.Close()
		m.Close()
		<-p.done
	})
	return p
}

// waitFor waits until the terminal has shown want (after the first skip
// bytes), and returns the end of the output so far.
func (p *pty) waitFor(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second) // a safety net
	for {
		p.mu.Lock()
		got := p.out.String()
		p.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		select {
		case <-p.more:
		case <-timeout:
			t.Fatalf("the terminal never showed %q; it shows:\n%s", want, got)
		}
	}
}

func (p *pty) shown() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *pty) typeLine(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(p.master, s+"\n"); err != nil {
		t.Fatal(err)
	}
}

// runInTerminal runs agentmcp with the pty as stdin and stderr.
// The command is interrupted if the test ends first.
func runInTerminal(t *testing.T, p *pty, args ...string) <-chan result {
	ch := make(chan result, 1)
	finished := make(chan struct{})
	ctx, cancel := context.WithTimeout(withStdin(context.Background(), p.slave), time.Minute)
	go func() {
		defer close(finished)
		var stdout bytes.Buffer
		err := run(ctx, args, &stdout, p.slave)
		ch <- result{stdout: stdout.String(), err: err, code: exitCode(err)}
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	return ch
}

// askServer serves a tool "ask" that asks for a form and returns the
// answer, and "open" that asks the user to open a URL.
func askServer(t *testing.T) *mcptest.HTTPServer {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","title":"Your name"},
		"count":{"type":"integer","default":3},
		"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},
		"sure":{"type":"boolean"}},
		"required":["name","color"]}`)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var s any
			json.Unmarshal(schema, &s)
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "Who are you?", RequestedSchema: s})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicit: " + err.Error()}}}, nil
			}
			b, _ := json.Marshal(r)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "open", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Sign in to the shop",
				URL: "https://shop.example.com/link?id=7", ElicitationID: "e1"})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicit: " + err.Error()}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "url " + r.Action}}}, nil
		})
	return serveServer(t, mcptest.Stateful, srv)
}

// TestCallTerminalForm: a form elicitation during call is asked in the
// terminal, field by field, and the server receives what was typed.
func TestCallTerminalForm(t *testing.T) {
	p := openPTY(t)
	hs := askServer(t)
	done := runInTerminal(t, p, "call", hs.URL, "ask")

	p.waitFor(t, "Who are you?")
	p.waitFor(t, "[a]ccept")
	p.typeLine(t, "a")
	// The fields come in the order of the schema the server sent.
	p.waitFor(t, "color (one of: 1) Red, 2) Green; required): ")
	p.typeLine(t, "") // required: asked again
	p.waitFor(t, "this field is required")
	p.typeLine(t, "Green")
	p.waitFor(t, "count (integer; default 3): ")
	p.typeLine(t, "many")
	p.waitFor(t, "want a whole number")
	p.typeLine(t, "") // keeps the default
	p.waitFor(t, "Your name (string; required): ")
	p.typeLine(t, "Ada")
	p.waitFor(t, "sure (boolean): ")
	p.typeLine(t, "yes")

	r := <-done
	if r.err != nil {
		t.Fatalf("call: %v\nterminal:\n%s", r.err, p.shown())
	}
	var res mcp.CallToolResult
	decode(t, r.stdout, &res)
	text := res.Content[0].(*mcp.TextContent).Text
	var got struct {
		Action  string
		Content map[string]any
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	want := map[string]any{"name": "Ada", "count": float64(3), "color": "g", "sure": true}
	if got.Action != "accept" || fmt.Sprint(got.Content) != fmt.Sprint(want) {
		t.Errorf("the server received %s %v, want accept %v", got.Action, got.Content, want)
	}
}

// TestCallTerminalDecline: the user may decline a form.
func TestCallTerminalDecline(t *testing.T) {
	p := openPTY(t)
	hs := askServer(t)
	done := runInTerminal(t, p, "call", hs.URL, "ask")
	p.waitFor(t, "[a]ccept")
	p.typeLine(t, "d")
	r := <-done
	if r.err != nil || !strings.Contains(r.stdout, `{\"action\":\"decline\"}`) {
		t.Errorf("call: %v\n%s", r.err, r.stdout)
	}
}

// TestCallTerminalURL: a URL elicitation shows the URL and waits for
// Enter. An answer it does not know gets the prompt again: the command read
// that line and still waits; only Enter accepts, and the server's tool
// then ends.
func TestCallTerminalURL(t *testing.T) {
	p := openPTY(t)
	hs := askServer(t)
	done := runInTerminal(t, p, "call", hs.URL, "open")
	const prompt = "Press Enter once you are done there, or type d to decline, c to cancel: "
	p.waitFor(t, "Sign in to the shop")
	p.waitFor(t, "https://shop.example.com/link?id=7")
	p.waitFor(t, prompt)
	p.typeLine(t, "later")
	p.waitFor(t, "answer a (accept), d (decline) or c (cancel)\r\n"+prompt) // the terminal ends lines with CR LF
	// The command has printed its prompt again after reading "later": it
	// cannot have answered the server since, as no other line was typed.
	select {
	case r := <-done:
		t.Fatalf("the call ended before Enter: %+v\nterminal:\n%s", r, p.shown())
	default:
	}
	p.typeLine(t, "")
	r := <-done
	if r.err != nil || !strings.Contains(r.stdout, "url accept") {
		t.Errorf("call: %v\n%s", r.err, r.stdout)
	}
	if n := strings.Count(p.shown(), prompt); n != 2 {
		t.Errorf("the prompt was shown %d times, want 2:\n%s", n, p.shown())
	}
}

// TestCallProgressTerminal: progress notifications are shown as a
// progress line on a terminal stderr.
func TestCallProgressTerminal(t *testing.T) {
	p := openPTY(t)
	_, hs := serve(t, mcptest.Stateful)
	done := runInTerminal(t, p, "call", hs.URL, "progress", "--args", `{"steps":3}`)
	r := <-done
	if r.err != nil || !strings.Contains(r.stdout, "done in 3 steps") {
		t.Fatalf("call: %v\n%s", r.err, r.stdout)
	}
	p.waitFor(t, "\r\x1b[K") // the line is cleared at the end
	shown := p.shown()
	for i := 1; i <= 3; i++ {
		want := fmt.Sprintf("\rprogress: %.0f%% (%d/3) step %d\x1b[K", 100*float64(i)/3, i, i)
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal does not show %q:\n%q", want, shown)
		}
	}
}

// TestCallProgressJSON: without a terminal, progress notifications are JSON
// lines on stderr.
func TestCallProgressJSON(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	r := runCmd(t, "call", hs.URL, "progress", "--args", `{"steps":2}`)
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := `{"type":"progress","tool":"progress","progress":1,"total":2,"message":"step 1"}
{"type":"progress","tool":"progress","progress":2,"total":2,"message":"step 2"}
`
	if r.stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, want)
	}
}

// TestCallElicitationNoTerminal: without a terminal, a call whose server
// asks for input fails at once, naming the dashboard.
func TestCallElicitationNoTerminal(t *testing.T) {
	hs := askServer(t)
	for _, tool := range []string{"ask", "open"} {
		r := runCmd(t, "call", hs.URL, tool)
		line := r.errorLine(t, exitFailure)
		if !strings.Contains(line, "stdin is not a terminal") || !strings.Contains(line, "dashboard") {
			t.Errorf("%s: %s", tool, line)
		}
	}
}

// TestCallTerminalDB: a call on a server of an agent opened from a
// database asks the server's form in the terminal too.
func TestCallTerminalDB(t *testing.T) {
	t.Setenv(envServer, "")
	hs := askServer(t)
	db := t.TempDir() + "/agentmcp.db"
	runCmd(t, "add", "--db", db, "--id", "asker", "asker", hs.URL).mustSucceed(t)
	p := openPTY(t)
	done := runInTerminal(t, p, "call", "--db", db, "asker", "ask")
	p.waitFor(t, "Server asker asks (tool ask): Who are you?")
	p.typeLine(t, "")
	p.waitFor(t, "color (one of")
	p.typeLine(t, "1")
	p.waitFor(t, "count (integer; default 3): ")
	p.typeLine(t, "7")
	p.waitFor(t, "Your name (string; required): ")
	p.typeLine(t, "Bo")
	p.waitFor(t, "sure (boolean): ")
	p.typeLine(t, "")
	r := <-done
	if r.err != nil || !strings.Contains(r.stdout, `\"content\":{\"color\":\"r\",\"count\":7,\"name\":\"Bo\"}`) {
		t.Errorf("call: %v\n%s\nterminal:\n%s", r.err, r.stdout, p.shown())
	}
}

// TestHelpCallTimeout: help call gives one default timeout.
func TestHelpCallTimeout(t *testing.T) {
	r := runCmd(t, "help", "call")
	out := r.stdout + r.stderr
	if strings.Contains(out, "30s") || !strings.Contains(out, "(default 60s)") {
		t.Errorf("help call:\n%s", out)
	}
}
