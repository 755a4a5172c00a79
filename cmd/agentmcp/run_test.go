package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestErrors checks that every failure is one line on stderr, with nothing
// on stdout and the right exit code.
func TestErrors(t *testing.T) {
	const secret = "Bearer do-not-print-0123456789"
	_, ok := serve(t, mcptest.Stateless)
	_, fault500 := serve(t, mcptest.Stateless)
	fault500.SetFault(http.StatusInternalServerError)
	_, fault401 := serve(t, mcptest.Stateful)
	fault401.SetFault(http.StatusUnauthorized)
	_, sse := serve(t, mcptest.SSE)
	down := closedURL(t)

	tests := []struct {
		name string
		args []string
		code int
		want []string // substrings of the line
	}{
		// Connection failures, with the server's state and error.
		{name: "unreachable", args: []string{"inspect", down},
			code: exitFailure, want: []string{"connecting to " + down + " failed (state failed)", "connection refused"}},
		{name: "unreachable/query", args: []string{"inspect", down + "?token=query-secret-value"},
			code: exitFailure, want: []string{"connecting to " + down + " failed (state failed)", "connection refused"}},
		{name: "500", args: []string{"inspect", fault500.URL},
			code: exitFailure, want: []string{"connecting to " + fault500.URL + " failed (state failed)", "500 Internal Server Error"}},
		{name: "500/call", args: []string{"call", fault500.URL, "echo"},
			code: exitFailure, want: []string{"(state failed)", "500"}},
		{name: "401", args: []string{"inspect", fault401.URL},
			code: exitFailure, want: []string{fault401.URL + " requires authorization (HTTP 401, state authenticating)", "--header 'Authorization: Bearer TOKEN'"}},
		{name: "401/with-token", args: []string{"inspect", "-header", "Authorization: " + secret, fault401.URL},
			code: exitFailure, want: []string{"rejected the credentials in --header Authorization (HTTP 401, state authenticating)"}},
		{name: "explicit-streamable-on-sse", args: []string{"inspect", "--transport", "streamable-http", sse.URL},
			code: exitFailure, want: []string{"(state failed)", "405"}},
		{name: "sse-on-streamable", args: []string{"inspect", "--transport", "sse", ok.URL},
			code: exitFailure, want: []string{"(state failed)"}},
		{name: "sse-modern", args: []string{"inspect", "--transport", "sse", "--protocol", "2026-07-28", sse.URL},
			code: exitFailure, want: []string{"cannot speak protocol version 2026-07-28"}},

		// Calls.
		{name: "unknown-tool", args: []string{"call", ok.URL, "nope"},
			code: exitFailure, want: []string{`tool "nope" not found on ` + ok.URL + " (it has: add, echo, fail, increment, progress, slow)"}},
		{name: "bad-json", args: []string{"call", ok.URL, "echo", "--args", `{"text":`},
			code: exitUsage, want: []string{"call: invalid JSON in --args: unexpected EOF", "(run 'agentmcp call -h' for usage)"}},
		{name: "args-not-object", args: []string{"call", ok.URL, "echo", "--args", `["hi"]`},
			code: exitUsage, want: []string{"--args must be a JSON object"}},
		{name: "missing-tool", args: []string{"call", ok.URL},
			code: exitUsage, want: []string{"missing tool name"}},
		{name: "tool-twice", args: []string{"call", "--tool", "echo", ok.URL, "add"},
			code: exitUsage, want: []string{`the tool is given twice: --tool "echo" and "add"`}},

		// Header syntax: the value is never quoted.
		{name: "header/no-colon", args: []string{"inspect", "--header", secret, ok.URL},
			code: exitUsage, want: []string{"invalid --header (#1): want 'Name: value', found no colon"}},
		{name: "header/bad-name", args: []string{"inspect", "--header", "X-Ok: 1", "--header", "Bad Name: " + secret, ok.URL},
			code: exitUsage, want: []string{`invalid --header (#2): "Bad Name" is not a valid header name`}},
		{name: "header/empty-name", args: []string{"inspect", "--header", ": " + secret, ok.URL},
			code: exitUsage, want: []string{`invalid --header (#1): "" is not a valid header name`}},
		{name: "header/control", args: []string{"inspect", "--header", "X-Token: " + secret + "\r\nX-Evil: 1", ok.URL},
			code: exitUsage, want: []string{`invalid --header "X-Token": its value contains a line break or control character`}},
		{name: "header/reserved", args: []string{"inspect", "--header", "mcp-session-id: " + secret, ok.URL},
			code: exitUsage, want: []string{`invalid --header "mcp-session-id": the transport sets it`}},
		{name: "header/stdio", args: []string{"inspect", "--header", "X-A: b", "--", "server"},
			code: exitUsage, want: []string{"--header applies to HTTP servers only"}},

		// Other flags and arguments.
		{name: "unknown-flag", args: []string{"inspect", "--bogus", ok.URL},
			code: exitUsage, want: []string{"inspect: flag provided but not defined: -bogus"}},
		{name: "unknown-flag/call", args: []string{"call", ok.URL, "echo", "-x"},
			code: exitUsage, want: []string{"call: flag provided but not defined: -x"}},
		{name: "flag-needs-value", args: []string{"inspect", ok.URL, "--header"},
			code: exitUsage, want: []string{"flag needs an argument: -header"}},
		{name: "unknown-transport", args: []string{"inspect", "--transport", "websocket", ok.URL},
			code: exitUsage, want: []string{`unknown transport "websocket" (want auto, streamable-http, sse or stdio)`}},
		{name: "stdio-with-url", args: []string{"inspect", "--transport", "stdio", ok.URL},
			code: exitUsage, want: []string{"--transport stdio needs a command after --"}},
		{name: "sse-with-command", args: []string{"inspect", "--transport", "sse", "--", "server"},
			code: exitUsage, want: []string{"--transport sse needs a URL"}},
		{name: "bad-protocol", args: []string{"inspect", "--protocol", "1999-01-01", ok.URL},
			code: exitUsage, want: []string{`unsupported protocol version "1999-01-01"`}},
		{name: "bad-timeout", args: []string{"inspect", "--timeout", "0", ok.URL},
			code: exitUsage, want: []string{"--timeout must be positive"}},
		{name: "missing-server", args: []string{"inspect"},
			code: exitUsage, want: []string{"missing server: give a URL, or -- and a command"}},
		{name: "missing-command", args: []string{"inspect", "--"},
			code: exitUsage, want: []string{"missing command after --"}},
		{name: "extra-argument", args: []string{"inspect", ok.URL, "more"},
			code: exitUsage, want: []string{`unexpected argument "more" after the URL`}},
		{name: "url-and-command", args: []string{"inspect", ok.URL + "?key=query-secret-value", "--", "server"},
			code: exitUsage, want: []string{`unexpected argument "` + ok.URL + `": give a URL or a command after --, not both`}},
		{name: "url-and-command/call", args: []string{"call", ok.URL, "echo", "--", "server"},
			code: exitUsage, want: []string{"too many arguments before --: want only TOOL"}},
		{name: "bad-scheme", args: []string{"inspect", "ftp://example.com/mcp"},
			code: exitUsage, want: []string{`invalid server URL: scheme "ftp"`}},
		{name: "no-scheme", args: []string{"inspect", "example.com/mcp"},
			code: exitUsage, want: []string{"invalid server URL: no scheme"}},
		{name: "bad-url", args: []string{"inspect", "http://a b/?token=" + secret},
			code: exitUsage, want: []string{"invalid server URL: invalid character"}},
		{name: "stdio-not-found", args: []string{"inspect", "--", "/nonexistent/agentmcp-test-server", "--token=" + secret},
			code: exitFailure, want: []string{`connecting to command "/nonexistent/agentmcp-test-server" failed (state failed)`}},
		{name: "version-args", args: []string{"version", "x"},
			code: exitUsage, want: []string{"version: takes no arguments"}},
		{name: "help-two", args: []string{"help", "a", "b"},
			code: exitUsage, want: []string{"help takes at most one command name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCmd(t, tt.args...)
			line := r.errorLine(t, tt.code)
			t.Log(line)
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("stderr = %q, want it to contain %q", line, w)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			for _, s := range []string{"do-not-print", "query-secret-value", "goroutine ", ".go:"} {
				if strings.Contains(line, s) {
					t.Errorf("stderr shows %q: %q", s, line)
				}
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"frobnicate"}, {"help", "frobnicate"}, {}} {
		r := runCmd(t, args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("%q: code %d, stdout %q; want %d and nothing", args, r.code, r.stdout, exitUsage)
		}
		if !strings.Contains(r.stderr, "Usage:\n  agentmcp <command> [arguments]") {
			t.Errorf("%q: stderr lacks the usage:\n%s", args, r.stderr)
		}
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "agentmcp: ") {
			t.Errorf("%q: the last line of stderr is %q, want the error", args, last)
		}
		if len(args) > 0 && !strings.Contains(last, `unknown command "frobnicate"`) {
			t.Errorf("%q: last line %q", args, last)
		}
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "Commands:\n  serve      host agents over HTTP"},
		{[]string{"help"}, "\n  mcp-config print the config"},
		{[]string{"help", "mcp-config"}, "--for HOST"},
		{[]string{"expose", "-h"}, "Deny wins"},
		{[]string{"--help"}, "Commands:\n"},
		{[]string{"-h"}, "Commands:\n"},
		{[]string{"help", "inspect"}, "agentmcp inspect [flags] -- COMMAND [ARG...]"},
		{[]string{"inspect", "-h"}, "agentmcp inspect [flags] URL\n"},
		{[]string{"inspect", "http://x/mcp", "--help"}, "Connection flags:"},
		{[]string{"call", "-help"}, "agentmcp call [flags] TOOL -- COMMAND [ARG...]"},
		{[]string{"help", "call"}, "--args JSON"},
		{[]string{"version", "-h"}, "agentmcp version\n"},
	}
	for _, tt := range tests {
		r := runCmd(t, tt.args...)
		r.mustSucceed(t)
		if !strings.Contains(r.stdout, tt.want) {
			t.Errorf("%q: stdout lacks %q:\n%s", tt.args, tt.want, r.stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := runCmd(t, args...)
		r.mustSucceed(t)
		if !strings.HasPrefix(r.stdout, "agentmcp 0.1.0 go") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("%q: stdout = %q", args, r.stdout)
		}
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\nb", "a; b"},
		{"a\r\n\r\nb\n", "a; b"},
		{"  a \n\t b\t", "a; b"},
		{"red \x1b[31mtext\x1b[0m", "red [31mtext[0m"},
		{"C1 \u009b31mcsi", "C1 31mcsi"},
		// Bidirectional controls would reorder the line: "txt.exe" shown
		// as "exe.txt", say.
		{"evil\u202etxt.exe", "eviltxt.exe"},
		{"\u2066a\u2067b\u2068c\u2069 \u202a\u202b\u202c\u202dd \u200e\u200f\u061ce", "abc d e"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCell: table cells drop bidirectional controls too.
func TestCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"name\u202egnp.exe", "namegnp.exe"},
		{"\u202e", "-"},
		{"a\tb", "a b"},
	}
	for _, tt := range tests {
		if got := cell(tt.in); got != tt.want {
			t.Errorf("cell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
