//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// serveWith starts serve on a fresh database and adds the server at url
// to its default agent as id.
func serveWith(t *testing.T, id, url string) *served {
	t.Helper()
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "agentmcp.db"))
	runCmd(t, "add", "--server", s.base, "--id", id, id, url).mustSucceed(t)
	return s
}

// TestCallThroughServeProgress: a call through a running serve shows the
// server's progress on stderr, as JSON lines when stderr is not a
// terminal, as a call of a URL does.
func TestCallThroughServeProgress(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	s := serveWith(t, "s", hs.URL)
	r := runCmd(t, "call", "--server", s.base, "s", "progress", "--args", `{"steps":2}`)
	if r.err != nil || !strings.Contains(r.stdout, "done in 2 steps") {
		t.Fatalf("call: %v\n%s", r.err, r.stdout)
	}
	want := `{"type":"progress","tool":"progress","progress":1,"total":2,"message":"step 1"}
{"type":"progress","tool":"progress","progress":2,"total":2,"message":"step 2"}
`
	if r.stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, want)
	}
}

// TestCallThroughServeProgressTerminal: on a terminal, the progress of a
// call through serve is a progress line.
func TestCallThroughServeProgressTerminal(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	s := serveWith(t, "s", hs.URL)
	p := openPTY(t)
	r := <-runInTerminal(t, p, "call", "--server", s.base, "s", "progress", "--args", `{"steps":2}`)
	if r.err != nil {
		t.Fatalf("call: %v\n%s", r.err, p.shown())
	}
	p.waitFor(t, "\rprogress: 50% (1/2) step 1\x1b[K")
	p.waitFor(t, "\rprogress: 100% (2/2) step 2\x1b[K")
}

// TestCallResultAfterProgress: on a terminal that shows both stderr and
// stdout, the progress line is cleared before the result is printed, so
// that the result starts a line of its own (it was printed after
// "100% (2/2) step 2").
func TestCallResultAfterProgress(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	s := serveWith(t, "s", hs.URL)
	p := openPTY(t)
	ctx, cancel := context.WithTimeout(withStdin(context.Background(), p.slave), time.Minute)
	defer cancel()
	if err := run(ctx, []string{"call", "--server", s.base, "s", "progress", "--args", `{"steps":2}`}, p.slave, p.slave); err != nil {
		t.Fatalf("call: %v\n%s", err, p.shown())
	}
	p.waitFor(t, "}\r\n") // the terminal turns \n into \r\n
	shown := p.shown()
	last := strings.LastIndex(shown, "step 2\x1b[K")
	result := strings.Index(shown, "{")
	if last < 0 || result < last || !strings.Contains(shown[last:result], "\r\x1b[K") {
		t.Errorf("the result is not on a line of its own after the progress line:\n%q", shown)
	}
}

// TestCallThroughServeForm: a form the server asks for during a call
// through serve is asked in the terminal, and the server gets the answer.
func TestCallThroughServeForm(t *testing.T) {
	hs := askServer(t)
	s := serveWith(t, "asker", hs.URL)
	p := openPTY(t)
	done := runInTerminal(t, p, "call", "--server", s.base, "asker", "ask")
	p.waitFor(t, "Server asker asks (tool ask): Who are you?")
	p.typeLine(t, "")
	p.waitFor(t, "color (one of")
	p.typeLine(t, "2")
	p.waitFor(t, "count (integer; default 3): ")
	p.typeLine(t, "")
	p.waitFor(t, "Your name (string; required): ")
	p.typeLine(t, "Ada")
	p.waitFor(t, "sure (boolean): ")
	p.typeLine(t, "no")
	r := <-done
	if r.err != nil || !strings.Contains(r.stdout, `\"content\":{\"color\":\"g\",\"count\":3,\"name\":\"Ada\",\"sure\":false}`) {
		t.Errorf("call: %v\n%s\nterminal:\n%s", r.err, r.stdout, p.shown())
	}
}

// TestCallThroughServeURL: a URL the server asks the user to open is shown
// in the terminal; Enter accepts.
func TestCallThroughServeURL(t *testing.T) {
	hs := askServer(t)
	s := serveWith(t, "asker", hs.URL)
	p := openPTY(t)
	done := runInTerminal(t, p, "call", "--server", s.base, "asker", "open")
	p.waitFor(t, "https://shop.example.com/link?id=7")
	p.waitFor(t, "Press Enter once you are done there")
	p.typeLine(t, "")
	r := <-done
	if r.err != nil || !strings.Contains(r.stdout, "url accept") {
		t.Errorf("call: %v\n%s\nterminal:\n%s", r.err, r.stdout, p.shown())
	}
}

// notifyBuffer is a buffer safe for concurrent use that signals each
// write.
type notifyBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (n *notifyBuffer) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.b.Write(p)
	select {
	case n.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (n *notifyBuffer) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.b.String()
}

// TestCallThroughServeElsewhere: without a terminal, a question of a call
// through serve is named on stderr (a JSON line: where to answer it, the
// dashboard and the API route) and the call waits for the answer, given
// here through the API as the dashboard gives it.
func TestCallThroughServeElsewhere(t *testing.T) {
	hs := askServer(t)
	s := serveWith(t, "asker", hs.URL)
	stderr := &notifyBuffer{wrote: make(chan struct{}, 1)}
	var stdout bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"call", "--server", s.base, "asker", "ask"}, &stdout, stderr) }()

	var line struct {
		Type, Tool, ID, Mode, Message, Dashboard, Answer string
	}
	for line.ID == "" {
		select {
		case <-stderr.wrote:
		case err := <-done:
			t.Fatalf("the call ended before asking: %v\n%s", err, stderr.String())
		case <-ctx.Done():
			t.Fatalf("no question named on stderr: %q", stderr.String())
		}
		if first, _, ok := strings.Cut(stderr.String(), "\n"); ok {
			if err := json.Unmarshal([]byte(first), &line); err != nil {
				t.Fatalf("stderr %q: %v", first, err)
			}
		}
	}
	agentURL := client.AgentURL(s.base, "agentmcp", "default")
	if line.Type != "elicitation" || line.Tool != "ask" || line.Mode != "form" || line.Message != "Who are you?" ||
		line.Dashboard != s.base+"/?agent=agentmcp%2Fdefault" || line.Answer != "POST "+agentURL+"/elicitations/"+line.ID {
		t.Errorf("stderr line: %+v", line)
	}
	c, err := client.New(agentURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	pending, err := c.Elicitations(ctx)
	if err != nil || len(pending) != 1 || pending[0].ID != line.ID || pending[0].CallID == "" {
		t.Fatalf("pending: %+v, %v", pending, err)
	}
	if err := c.AnswerElicitation(ctx, line.ID, api.ElicitationAnswer{Action: "decline"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("call: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `{\"action\":\"decline\"}`) {
		t.Errorf("stdout: %s", stdout.String())
	}
}
