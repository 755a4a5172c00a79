package explain_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/explain"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectErr registers url with a fresh Manager and returns the error of
// one connection attempt.
func connectErr(t *testing.T, ctx context.Context, opts *mcpclient.Options, so mcpclient.ServerOptions) error {
	t.Helper()
	m := newManager(t, opts)
	if _, err := m.RegisterServer(testCtx(t), "s1", so); err != nil {
		return err
	}
	res, err := m.ConnectToServer(ctx, "s1")
	if err != nil {
		return err
	}
	if res.Err == nil {
		t.Fatalf("ConnectToServer = %+v; want a failure", res)
	}
	return res.Err
}

// TestSummaryRealFailures provokes each failure for real, on
// 127.0.0.1, and checks the short message and that the detail keeps the
// chain but no HTML.
func TestSummaryRealFailures(t *testing.T) {
	status := func(code int, contentType, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(code)
			fmt.Fprint(w, body)
		}
	}
	const page = "<!DOCTYPE html>\n<html><head><title>405 Not Allowed</title></head><body><h1>Method Not Allowed</h1></body></html>"
	streamable := mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP}

	t.Run("connection refused", func(t *testing.T) {
		err := connectErr(t, testCtx(t), nil, mcpclient.ServerOptions{URL: "http://" + fixture.RefusingAddr(t) + "/mcp"})
		if got, want := explain.Summary(err), "cannot connect: connection refused"; got != want {
			t.Errorf("Summary(%v) = %q, want %q", err, got, want)
		}
	})
	t.Run("HTML 405 page", func(t *testing.T) {
		hs := httptest.NewServer(status(http.StatusMethodNotAllowed, "text/html; charset=utf-8", page))
		t.Cleanup(hs.Close)
		err := connectErr(t, testCtx(t), nil, mcpclient.ServerOptions{URL: hs.URL, Transport: streamable})
		if got, want := explain.Summary(err), "not an MCP endpoint (HTTP 405)"; got != want {
			t.Errorf("Summary(%v) = %q, want %q", err, got, want)
		}
		if strings.Contains(err.Error(), "<") || strings.Contains(err.Error(), "Not Allowed</") {
			t.Errorf("detail shows the HTML page: %v", err)
		}
	})
	t.Run("HTML page without content type", func(t *testing.T) {
		hs := httptest.NewServer(status(http.StatusNotFound, "", page))
		t.Cleanup(hs.Close)
		err := connectErr(t, testCtx(t), nil, mcpclient.ServerOptions{URL: hs.URL, Transport: streamable})
		if got, want := explain.Summary(err), "not an MCP endpoint (HTTP 404)"; got != want {
			t.Errorf("Summary(%v) = %q, want %q", err, got, want)
		}
		if strings.Contains(err.Error(), "<") {
			t.Errorf("detail shows the HTML page: %v", err)
		}
	})
	t.Run("plain text body stays in the detail", func(t *testing.T) {
		hs := httptest.NewServer(status(http.StatusBadGateway, "text/plain", "upstream is down"))
		t.Cleanup(hs.Close)
		err := connectErr(t, testCtx(t), nil, mcpclient.ServerOptions{URL: hs.URL, Transport: streamable})
		if got, want := explain.Summary(err), "server error (HTTP 502 Bad Gateway)"; got != want {
			t.Errorf("Summary(%v) = %q, want %q", err, got, want)
		}
		if !strings.Contains(err.Error(), "upstream is down") {
			t.Errorf("detail lost the body: %v", err)
		}
	})
	t.Run("sign-in", func(t *testing.T) {
		srv := mcptest.NewServer("s")
		hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
		hs.SetFault(http.StatusUnauthorized)
		err := connectErr(t, testCtx(t), nil, mcpclient.ServerOptions{URL: hs.URL})
		if got, want := explain.Summary(err), "the server asks for sign-in"; got != want {
			t.Errorf("Summary(%v) = %q, want %q", err, got, want)
		}
	})
	t.Run("TLS unknown authority", func(t *testing.T) {
		hs := httptest.NewUnstartedServer(http.NotFoundHandler())
		hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
		hs.StartTLS()
		t.Cleanup(hs.Close)
		err := connectErr(t, testCtx(t), nil, mcpclient.ServerOptions{URL: hs.URL, Transport: streamable})
		if got, want := explain.Summary(err), "TLS failure: certificate signed by an unknown authority"; got != want {
			t.Errorf("Summary(%v) = %q, want %q", err, got, want)
		}
	})
	t.Run("plain HTTP on a TLS client", func(t *testing.T) {
		// net/http reports this one as an untyped error: the summary
		// falls back to the innermost message, which says it well.
		hs := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(hs.Close)
		url := strings.Replace(hs.URL, "http://", "https://", 1)
		err := connectErr(t, testCtx(t), nil, mcpclient.ServerOptions{URL: url, Transport: streamable})
		if got, want := explain.Summary(err), "http: server gave HTTP response to HTTPS client"; got != want {
			t.Errorf("Summary(%v) = %q, want %q", err, got, want)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(hs.Close)
		t.Cleanup(func() { close(release) })
		err := connectErr(t, testCtx(t), &mcpclient.Options{ConnectTimeout: 50 * time.Millisecond},
			mcpclient.ServerOptions{URL: hs.URL, Transport: streamable})
		if got, want := explain.Summary(err), "server timed out"; got != want {
			t.Errorf("Summary(%v) = %q, want %q", err, got, want)
		}
	})
	t.Run("blocked URL", func(t *testing.T) {
		guard, err := netguard.New(&netguard.Policy{BlockLoopback: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = connectErr(t, testCtx(t), &mcpclient.Options{Guard: guard}, mcpclient.ServerOptions{URL: "http://127.0.0.1:1/mcp"})
		got := explain.Summary(err)
		if !strings.HasPrefix(got, "blocked URL: ") || !strings.Contains(got, "loopback") {
			t.Errorf("Summary(%v) = %q, want blocked URL: ...loopback...", err, got)
		}
	})
}

// TestSummaryStdio starts stdio servers that cannot run or that exit
// during the handshake, for real: the summary names the cause (the
// program, the exit status and the last stderr line), not the closed
// connection it shows as.
func TestSummaryStdio(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	notExec := filepath.Join(dir, "server.txt")
	if err := os.WriteFile(notExec, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	badFormat := filepath.Join(dir, "server.bin")
	if err := os.WriteFile(badFormat, []byte{0, 1, 2, 3}, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cmd  mcpclient.CommandOptions
		want string
	}{
		{"not in PATH", mcpclient.CommandOptions{Path: "agentmcp-no-such-server"}, "command not found: agentmcp-no-such-server"},
		{"no such file", mcpclient.CommandOptions{Path: filepath.Join(dir, "missing", "server")}, "command not found: " + filepath.Join(dir, "missing", "server")},
		{"relative to its directory", mcpclient.CommandOptions{Path: "./server", Dir: dir}, "command not found: ./server"},
		{"not executable", mcpclient.CommandOptions{Path: notExec}, "command not executable: " + notExec},
		{"no working directory", mcpclient.CommandOptions{Path: sh, Dir: filepath.Join(dir, "nope")},
			"working directory not usable: " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"exits with a status", mcpclient.CommandOptions{Path: sh, Args: []string{"-c", "echo starting >&2; echo 'fatal: API_KEY is not set' >&2; exit 3"}},
			"the server exited with status 3: fatal: API_KEY is not set"},
		{"not a program", mcpclient.CommandOptions{Path: badFormat}, "the server exited with status 127: fork/exec " + badFormat + ": exec format error"},
		{"exits silently", mcpclient.CommandOptions{Path: sh, Args: []string{"-c", "exit 0"}}, "the server exited with status 0"},
		{"killed", mcpclient.CommandOptions{Path: sh, Args: []string{"-c", "kill -9 $$"}}, "the server was killed (signal: killed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "not a program" && runtime.GOOS != "linux" {
				t.Skip("the supervisor, which reports the failed start as its exit, runs on Linux")
			}
			cmd := tt.cmd
			err := connectErr(t, testCtx(t), nil, mcpclient.ServerOptions{Command: &cmd})
			if got := explain.Summary(err); got != tt.want {
				t.Errorf("Summary(%v) = %q, want %q", err, got, tt.want)
			}
		})
	}
}

// TestSummaryTypes covers errors that cannot be provoked on
// 127.0.0.1 alone (DNS) or that come from deeper layers.
func TestSummaryTypes(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"dns not found", fmt.Errorf("calling %q: %w", "initialize", &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "mcp.example.invalid", IsNotFound: true}}),
			"DNS lookup failed: no such host mcp.example.invalid"},
		{"dns other", &net.DNSError{Err: "server misbehaving", Name: "mcp.example.com"}, "DNS lookup failed for mcp.example.com"},
		{"session expired", fmt.Errorf("%w (%w): %w", mcpclient.ErrSessionExpired, mcp.ErrSessionMissing,
			&mcpclient.HTTPError{Method: "POST", URL: "http://h/mcp", StatusCode: 404}), "session expired"},
		{"protocol", fmt.Errorf("discover: %w: first SSE event is \"x\"", mcpclient.ErrProtocol),
			"protocol error: the server sent something that is not valid MCP"},
		{"interrupted", &mcpclient.InterruptedCallError{ServerID: "s", Method: "tools/call", Name: "t", Err: mcp.ErrConnectionClosed},
			"the call was interrupted; it may or may not have run"},
		{"jsonrpc", fmt.Errorf("tools/list: %w", &jsonrpc.Error{Code: -32603, Message: "database\x1b[31m down"}),
			"the server answered with an error: database[31m down"},
		{"HTTP 405 with JSON-RPC error", &mcpclient.HTTPError{StatusCode: 405, JSONRPC: &jsonrpc.Error{Code: -32601, Message: "no such method"}},
			"the server refused the request (HTTP 405): no such method"},
		{"403 without challenge", &mcpclient.HTTPError{StatusCode: 403}, "access denied (HTTP 403)"},
		{"403 with challenge", &mcpclient.HTTPError{StatusCode: 403, WWWAuthenticate: []string{`Bearer error="insufficient_scope"`}},
			"the server asks for sign-in"},
		{"auth required", &mcpclient.AuthRequiredError{ServerID: "s", AuthURL: "https://as/authorize?state=secret", Err: errors.New("401")},
			"the server asks for sign-in"},
		{"deadline", fmt.Errorf("initialize: %w", context.DeadlineExceeded), "server timed out"},
		{"unknown", fmt.Errorf("a: %w", fmt.Errorf("b: %w", errors.New("the actual cause"))), "the actual cause"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := explain.Summary(tt.err); got != tt.want {
				t.Errorf("Summary(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}
