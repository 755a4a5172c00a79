package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// callResult is the part of a CallToolResult the tests check.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func (c callResult) text() string {
	var parts []string
	for _, p := range c.Content {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n")
}

func TestCall(t *testing.T) {
	tests := []struct {
		name string
		mode mcptest.Mode
		args func(url string) []string
		want string
	}{
		{name: "echo", mode: mcptest.Stateless,
			args: func(u string) []string { return []string{u, "echo", "--args", `{"text":"hi"}`} },
			want: "echo: hi"},
		{name: "add/flags-first", mode: mcptest.Stateful,
			args: func(u string) []string { return []string{"--args", `{"a": 2, "b": 3}`, "--timeout", "1m", u, "add"} },
			want: "5"},
		{name: "add/tool-flag", mode: mcptest.Stateless,
			args: func(u string) []string { return []string{"--tool", "add", u, "-args={\"a\":40,\"b\":2}"} },
			want: "42"},
		{name: "echo/sse", mode: mcptest.SSE,
			args: func(u string) []string {
				return []string{"--transport", "sse", u, "echo", "--args", `{"text":"<&>"}`}
			},
			want: "echo: <&>"},
		{name: "no-args", mode: mcptest.Stateless,
			args: func(u string) []string { return []string{u, "increment"} },
			want: "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, hs := serve(t, tt.mode)
			r := runCmd(t, append([]string{"call"}, tt.args(hs.URL)...)...)
			r.mustSucceed(t)
			var got callResult
			decode(t, r.stdout, &got)
			if got.IsError || got.text() != tt.want {
				t.Errorf("result = %+v, want text %q", got, tt.want)
			}
			if !strings.HasPrefix(r.stdout, "{\n  \"") || !strings.Contains(r.stdout, "\n  \"content\": [\n    {\n") {
				t.Errorf("output is not the indented CallToolResult:\n%s", r.stdout)
			}
		})
	}
}

// TestCallIsError checks that a tool error is printed and fails the
// command.
func TestCallIsError(t *testing.T) {
	t.Parallel()
	_, hs := serve(t, mcptest.Stateless)
	r := runCmd(t, "call", hs.URL, "fail")
	line := r.errorLine(t, exitFailure)
	if want := `agentmcp: tool "fail" returned an error (isError); its result is on stdout`; line != want {
		t.Errorf("stderr = %q, want %q", line, want)
	}
	var got callResult
	decode(t, r.stdout, &got)
	if !got.IsError || got.text() != "it failed" {
		t.Errorf("result = %+v, want isError with \"it failed\"", got)
	}
}

// TestCallInterrupted cancels the context (what Ctrl-C does) during a call:
// the command reports it, and the server sees the call cancelled.
func TestCallInterrupted(t *testing.T) {
	t.Parallel()
	srv, hs := serve(t, mcptest.Stateless)
	t.Cleanup(srv.ReleaseSlow)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- runCtx(ctx, "call", hs.URL, "slow") }()
	waitFor(t, srv.SlowStarted, "the slow call to start")
	cancel()
	r := <-done
	line := r.errorLine(t, exitInterrupted)
	if line != "agentmcp: interrupted" || !errors.Is(r.err, context.Canceled) {
		t.Errorf("stderr = %q, err = %v; want interrupted", line, r.err)
	}
	waitFor(t, srv.SlowCancelled, "the server to see the call cancelled")
}

// TestCallTimeout checks --timeout. It waits for a real timer (there is a
// real network), but asserts no duration.
func TestCallTimeout(t *testing.T) {
	t.Parallel()
	srv, hs := serve(t, mcptest.Stateless)
	t.Cleanup(srv.ReleaseSlow)
	r := runCmd(t, "call", "--timeout", "200ms", hs.URL, "slow")
	line := r.errorLine(t, exitFailure)
	if !strings.Contains(line, "timed out after 200ms") {
		t.Errorf("stderr = %q, want a timeout", line)
	}
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestParseToolArgs(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "", want: "{}"},
		{in: "  ", want: "{}"},
		{in: `{"a": 1, "b": [1, 2.5e3]}`, want: `{"a":1,"b":[1,2.5e3]}`},
		{in: `{"big": 12345678901234567890}`, want: `{"big":12345678901234567890}`},
		{in: `{`, wantErr: "invalid JSON in --args"},
		{in: `{"a":1} {"b":2}`, wantErr: "more than one value"},
		{in: `{"a":1} x`, wantErr: "more than one value"},
		{in: `[1]`, wantErr: "must be a JSON object"},
		{in: `null`, wantErr: "must be a JSON object"},
		{in: `"x"`, wantErr: "must be a JSON object"},
	}
	for _, tt := range tests {
		got, err := parseToolArgs(tt.in)
		if tt.wantErr != "" {
			var uerr *usageError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &uerr) {
				t.Errorf("parseToolArgs(%q) = %s, %v; want a usage error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("parseToolArgs(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestToolName(t *testing.T) {
	tests := []struct {
		name       string
		flag       string
		rest       []string
		hasCommand bool
		want       string
		wantErr    string
	}{
		{name: "positional", rest: []string{"echo"}, want: "echo"},
		{name: "flag", flag: "echo", want: "echo"},
		{name: "both", flag: "echo", rest: []string{"add"}, wantErr: "given twice"},
		{name: "none/url", wantErr: "missing tool name (give it after the URL"},
		{name: "none/command", hasCommand: true, wantErr: "missing tool name (give it before --"},
		{name: "extra", rest: []string{"echo", "hi"}, wantErr: `unexpected argument "hi"`},
		{name: "extra/command", rest: []string{"http://x/mcp", "echo"}, hasCommand: true, wantErr: "too many arguments before --"},
		{name: "both/url", flag: "echo", rest: []string{"http://u:p@x/mcp?k=v"}, wantErr: `--tool "echo" and "http://x/mcp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toolName(tt.flag, tt.rest, tt.hasCommand)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("toolName = %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); err != nil || diff != "" {
				t.Errorf("toolName = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
