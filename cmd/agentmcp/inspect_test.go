package main

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// inspected is the part of inspect's output the tests check.
type inspected struct {
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	ProtocolVersion string         `json:"protocolVersion"`
	Transport       string         `json:"transport"`
	SessionID       string         `json:"sessionId"`
	Instructions    string         `json:"instructions"`
	Capabilities    map[string]any `json:"capabilities"`
	Tools           []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
	Prompts           []struct{ Name string } `json:"prompts"`
	Resources         []struct{ URI string }  `json:"resources"`
	ResourceTemplates []struct {
		URITemplate string `json:"uriTemplate"`
	} `json:"resourceTemplates"`
}

func (o *inspected) toolNames() []string {
	var names []string
	for _, t := range o.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

var mcptestTools = []string{"add", "echo", "fail", "increment", "progress", "slow"}

func TestInspect(t *testing.T) {
	tests := []struct {
		name          string
		mode          mcptest.Mode
		flags         []string
		wantVersion   string
		wantTransport string
		wantSession   bool
	}{
		{name: "stateless", mode: mcptest.Stateless, wantVersion: "2026-07-28", wantTransport: "streamable-http"},
		{name: "stateless/pinned", mode: mcptest.Stateless, flags: []string{"--protocol", "2025-11-25"},
			wantVersion: "2025-11-25", wantTransport: "streamable-http", wantSession: false},
		{name: "stateful", mode: mcptest.Stateful, wantVersion: "2025-11-25", wantTransport: "streamable-http", wantSession: true},
		{name: "stateful/explicit", mode: mcptest.Stateful, flags: []string{"--transport", "streamable-http"},
			wantVersion: "2025-11-25", wantTransport: "streamable-http", wantSession: true},
		{name: "stateful/pinned", mode: mcptest.Stateful, flags: []string{"-protocol=2025-06-18"},
			wantVersion: "2025-06-18", wantTransport: "streamable-http", wantSession: true},
		{name: "sse/auto-fallback", mode: mcptest.SSE, wantVersion: "2025-11-25", wantTransport: "sse"},
		{name: "sse/explicit", mode: mcptest.SSE, flags: []string{"--transport", "sse"}, wantVersion: "2025-11-25", wantTransport: "sse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, hs := serve(t, tt.mode)
			r := runCmd(t, append(append([]string{"inspect"}, tt.flags...), hs.URL)...)
			r.mustSucceed(t)

			var got inspected
			decode(t, r.stdout, &got)
			if got.ServerInfo.Name != "s" || got.ServerInfo.Version != "1.0.0" {
				t.Errorf("serverInfo = %+v, want s 1.0.0", got.ServerInfo)
			}
			if got.ProtocolVersion != tt.wantVersion {
				t.Errorf("protocolVersion = %q, want %q", got.ProtocolVersion, tt.wantVersion)
			}
			if got.Transport != tt.wantTransport {
				t.Errorf("transport = %q, want %q", got.Transport, tt.wantTransport)
			}
			if (got.SessionID != "") != tt.wantSession {
				t.Errorf("sessionId = %q, want one: %v", got.SessionID, tt.wantSession)
			}
			if got.Instructions != "Test server s." {
				t.Errorf("instructions = %q", got.Instructions)
			}
			for _, c := range []string{"tools", "prompts", "resources"} {
				if _, ok := got.Capabilities[c]; !ok {
					t.Errorf("capabilities %v lack %q", got.Capabilities, c)
				}
			}
			if diff := cmp.Diff(mcptestTools, got.toolNames()); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			for _, tool := range got.Tools {
				if tool.InputSchema["type"] != "object" {
					t.Errorf("tool %s: inputSchema %v, want an object schema", tool.Name, tool.InputSchema)
				}
			}
			if len(got.Prompts) != 1 || got.Prompts[0].Name != "greet" {
				t.Errorf("prompts = %+v, want greet", got.Prompts)
			}
			if len(got.Resources) != 1 || got.Resources[0].URI != "test://static" {
				t.Errorf("resources = %+v, want test://static", got.Resources)
			}
			if len(got.ResourceTemplates) != 1 || got.ResourceTemplates[0].URITemplate != "test://items/{id}" {
				t.Errorf("resourceTemplates = %+v, want test://items/{id}", got.ResourceTemplates)
			}
		})
	}
}

// TestInspectShape checks the key order, the indentation and the empty
// lists of a server that offers nothing.
func TestInspectShape(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "empty", Version: "0.0.1"}, nil)
	hs := serveServer(t, mcptest.Stateful, srv)
	r := runCmd(t, "inspect", hs.URL)
	r.mustSucceed(t)

	want := []string{"serverInfo", "protocolVersion", "transport", "sessionId", "instructions",
		"capabilities", "tools", "prompts", "resources", "resourceTemplates"}
	if diff := cmp.Diff(want, topLevelKeys(t, r.stdout)); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	for _, s := range []string{"\n  \"tools\": [],\n", "\n  \"prompts\": [],\n", "\n  \"resources\": [],\n", "\n  \"resourceTemplates\": []\n"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, r.stdout)
		}
	}
	// Run it again: the same server gives the same document, apart from
	// the session id.
	r2 := runCmd(t, "inspect", hs.URL)
	r2.mustSucceed(t)
	var a, b map[string]any
	decode(t, r.stdout, &a)
	decode(t, r2.stdout, &b)
	delete(a, "sessionId")
	delete(b, "sessionId")
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs differ (-first +second):\n%s", diff)
	}
}

// TestInspectHeaders checks that --header reaches the server on every
// request, the SSE GET included, and that its value is never printed.
func TestInspectHeaders(t *testing.T) {
	const secret = "s3cret-token-0123456789"
	for _, mode := range []mcptest.Mode{mcptest.Stateless, mcptest.Stateful, mcptest.SSE} {
		t.Run(modeName(mode), func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer("s")
			rec := &headerRecorder{next: mcptest.Handler(t, mode, func() *mcp.Server { return srv.Server })}
			hs := mcptest.ServeHandler(t, rec)
			r := runCmd(t, "inspect",
				"--header", "Authorization: Bearer "+secret,
				"--header", "X-Tenant:  acme ", // spaces around the value are trimmed
				"--header", "x-multi: one", "--header", "X-Multi: two",
				hs.URL)
			r.mustSucceed(t)
			if strings.Contains(r.stdout, secret) {
				t.Errorf("stdout shows the header value:\n%s", r.stdout)
			}
			seen := rec.headers()
			if len(seen) == 0 {
				t.Fatal("the server saw no requests")
			}
			for i, h := range seen {
				if got := h.Get("Authorization"); got != "Bearer "+secret {
					t.Errorf("request %d: Authorization = %q", i, got)
				}
				if got := h.Get("X-Tenant"); got != "acme" {
					t.Errorf("request %d: X-Tenant = %q, want acme", i, got)
				}
				if diff := cmp.Diff([]string{"one", "two"}, h.Values("X-Multi")); diff != "" {
					t.Errorf("request %d: X-Multi (-want +got):\n%s", i, diff)
				}
			}
			if mode == mcptest.SSE && !slices.ContainsFunc(seen, func(h http.Header) bool {
				return strings.Contains(h.Get("Accept"), "text/event-stream")
			}) {
				t.Error("no SSE GET was seen")
			}

			// Failures do not show it either.
			hs.SetFault(http.StatusInternalServerError)
			r = runCmd(t, "inspect", "--header", "Authorization: Bearer "+secret, hs.URL)
			line := r.errorLine(t, exitFailure)
			if strings.Contains(line, secret) || strings.Contains(r.stdout, secret) {
				t.Errorf("the header value is shown: %q", line)
			}
		})
	}
}

func modeName(m mcptest.Mode) string {
	switch m {
	case mcptest.Stateless:
		return "stateless"
	case mcptest.Stateful:
		return "stateful"
	case mcptest.SSE:
		return "sse"
	}
	return "unknown"
}

// TestAllowPrivate: private addresses are refused unless --allow-private;
// the refusal is made before any connection (nothing listens there).
func TestAllowPrivate(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(t.Context(), []string{"inspect", "--timeout", "200ms", "http://10.255.255.1/mcp"}, &out, &errb)
	if err == nil || !strings.Contains(errb.String(), "Blocked URL") {
		t.Errorf("private address without the flag: %v, %q", err, errb.String())
	}
	out.Reset()
	errb.Reset()
	err = run(t.Context(), []string{"inspect", "--allow-private", "--timeout", "200ms", "http://169.254.169.254/mcp"}, &out, &errb)
	if err == nil || !strings.Contains(errb.String(), "Blocked URL") {
		t.Errorf("metadata address with --allow-private: %v, %q", err, errb.String())
	}
}

// TestOneShotEndsSession checks that inspect and call end the session they
// opened on a stateful server (a DELETE), rather than leaving it for the
// server to expire.
func TestOneShotEndsSession(t *testing.T) {
	for _, cmd := range [][]string{{"inspect"}, {"call", "--tool", "echo", "--args", `{"text":"hi"}`}} {
		t.Run(cmd[0], func(t *testing.T) {
			t.Parallel()
			srv, hs := serve(t, mcptest.Stateful)
			runCmd(t, append(cmd, hs.URL)...).mustSucceed(t)
			all, ended := hs.Sessions()
			if len(all) != 1 || !slices.Equal(all, ended) {
				t.Errorf("sessions handed out %q, ended by the client %q; want one, ended", all, ended)
			}
			var open int
			for range srv.Sessions() {
				open++
			}
			if open != 0 {
				t.Errorf("the server still has %d sessions", open)
			}
		})
	}
}
