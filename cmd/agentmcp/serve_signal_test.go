package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestServeSignals: serve stopped while an agent is busy (a call in
// flight) says what it waits for; on Ctrl-C a second Ctrl-C stops it at
// once (the drain timeout is far off), while after SIGTERM it drains:
// it ends once the call is over.
func TestServeSignals(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	bin := buildBinary(t)
	for _, tt := range []struct {
		name   string
		first  syscall.Signal
		second syscall.Signal // 0: none, the call is released instead
	}{
		{"interrupt twice", syscall.SIGINT, syscall.SIGINT},
		{"terminate drains", syscall.SIGTERM, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			up := mcptest.NewServer("s")
			hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return up.Server })
			cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "a.db"), "--drain-timeout", "10m")
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-exited
			})
			started := regexp.MustCompile(`dashboard at (http://127\.0\.0\.1:\d+)/`)
			sc := bufio.NewScanner(out)
			var base string
			for sc.Scan() {
				if m := started.FindStringSubmatch(sc.Text()); m != nil {
					base = m[1]
					break
				}
			}
			go func() { io.Copy(io.Discard, out); exited <- cmd.Wait() }()
			if base == "" {
				t.Fatalf("serve did not start: %s", stderr.String())
			}
			post := func(path, body string) (*http.Response, error) {
				req, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				return http.DefaultClient.Do(req)
			}
			resp, err := post("/agents/test/a/servers", `{"name":"s","url":"`+hs.URL+`","id":"s"}`)
			if err != nil || resp.StatusCode >= 300 {
				t.Fatalf("add: %v %v", resp, err)
			}
			resp.Body.Close()
			go func() {
				if resp, err := post("/agents/test/a/servers/s/tools/call", `{"name":"slow","arguments":{}}`); err == nil {
					resp.Body.Close()
				}
			}()
			select {
			case <-up.SlowStarted:
			case <-ctx.Done():
				t.Fatal("the slow call did not start")
			}

			cmd.Process.Signal(tt.first)
			waitLogged(ctx, t, stderr, "waiting for busy agents", "test/a: ", "in flight")
			if tt.second != 0 {
				cmd.Process.Signal(tt.second)
				waitLogged(ctx, t, stderr, "stopping now")
			} else {
				// Draining: the call finishes, then serve ends by itself.
				select {
				case err := <-exited:
					exited <- err
					t.Fatalf("serve ended during the drain with a call in flight: %v\n%s", err, stderr.String())
				default:
				}
				up.ReleaseSlow()
			}
			select {
			case err := <-exited:
				exited <- err
			case <-ctx.Done():
				t.Fatalf("serve did not stop:\n%s", stderr.String())
			}
		})
	}
}

// waitLogged waits until the log holds every one of want on one line.
func waitLogged(ctx context.Context, t *testing.T, log *lockedBuffer, want ...string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, line := range strings.Split(log.String(), "\n") {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(line, w)
			}
			if ok {
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the log never said %q:\n%s", want, log.String())
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
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
