package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pg is the PostgreSQL server of the tests of --postgres, started by the
// first that asks for a database.
var pg = pgtest.New()

func TestMain(m *testing.M) {
	os.Exit(pg.Main(m)) // goleak too
}

// result is what one run of the command produced.
type result struct {
	stdout, stderr string
	err            error
	code           int
}

// runCmd runs agentmcp in-process with args, bounded as a safety net.
func runCmd(t testing.TB, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return runCtx(ctx, args...)
}

func runCtx(ctx context.Context, args ...string) result {
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, &stdout, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err, code: exitCode(err)}
}

// mustSucceed fails the test unless r is a success with nothing on stderr.
func (r result) mustSucceed(t testing.TB) {
	t.Helper()
	if r.err != nil || r.code != 0 || r.stderr != "" {
		t.Fatalf("run failed: code %d, err %v, stderr %q", r.code, r.err, r.stderr)
	}
}

// errorLine returns the one line on stderr, failing the test unless there
// is exactly one, in the agentmcp: format, and the exit code is want.
func (r result) errorLine(t testing.TB, want int) string {
	t.Helper()
	if r.code != want {
		t.Errorf("exit code %d, want %d (err %v)", r.code, want, r.err)
	}
	if r.err == nil {
		t.Errorf("err = nil, want an error")
	}
	line, ok := strings.CutSuffix(r.stderr, "\n")
	if !ok || strings.Contains(line, "\n") || !strings.HasPrefix(line, "agentmcp: ") {
		t.Errorf("stderr = %q, want one line \"agentmcp: ...\"", r.stderr)
	}
	return line
}

// serve hosts a fresh mcptest server named "s" in mode.
func serve(t testing.TB, mode mcptest.Mode) (*mcptest.Server, *mcptest.HTTPServer) {
	t.Helper()
	srv := mcptest.NewServer("s")
	return srv, serveServer(t, mode, srv.Server)
}

// serveServer hosts srv in mode. It is mcptest.Serve without what only
// Restart needs: Serve's bookkeeping of the servers it hands out races
// with requests from another process (TestBinary) under -race.
func serveServer(t testing.TB, mode mcptest.Mode, srv *mcp.Server) *mcptest.HTTPServer {
	t.Helper()
	return mcptest.ServeHandler(t, mcptest.Handler(t, mode, func() *mcp.Server { return srv }))
}

// headerRecorder records the headers of every request it passes on.
type headerRecorder struct {
	next http.Handler

	mu   sync.Mutex
	seen []http.Header
}

func (h *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Clone())
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

func (h *headerRecorder) headers() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.seen...)
}

// closedURL returns an MCP URL on 127.0.0.1 where nothing listens.
func closedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}

// decode decodes JSON output into v, failing the test if it is not one
// JSON document.
func decode(t testing.TB, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("output has more than one JSON document:\n%s", out)
	}
}

// topLevelKeys returns the keys of the JSON object out, in order.
func topLevelKeys(t testing.TB, out string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
			continue
		}
		if depth == 1 {
			keys = append(keys, tok.(string))
			// Skip the value.
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("decoding the value of %q: %v", tok, err)
			}
		}
	}
	return keys
}
