package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// served is an agentmcp serve running in-process.
type served struct {
	base   string // http://127.0.0.1:PORT
	cancel context.CancelFunc
	done   chan struct{}
	res    result

	mu  sync.Mutex
	out bytes.Buffer // stdout after the dashboard line
}

// startServe runs agentmcp serve with args (and --addr 127.0.0.1:0) until
// the test ends or stop is called.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &served{cancel: cancel, done: make(chan struct{})}
	var stderr bytes.Buffer
	go func() {
		defer close(s.done)
		err := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), pw, &stderr)
		pw.Close()
		s.res = result{stderr: stderr.String(), err: err, code: exitCode(err)}
	}()
	sc := bufio.NewScanner(pr)
	re := regexp.MustCompile(`dashboard at (http://127\.0\.0\.1:\d+)/`)
	// The start-up lines end with where the agents' MCP endpoints are:
	// read up to it, so that the test reads s.out while nothing writes.
	for sc.Scan() {
		s.out.WriteString(sc.Text() + "\n")
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			s.base = m[1]
		}
		if s.base != "" && strings.Contains(sc.Text(), "every agent's MCP endpoint is") {
			break
		}
	}
	if s.base == "" {
		cancel()
		<-s.done
		t.Fatalf("serve did not start: %s %+v", s.out.String(), s.res)
	}
	go func() {
		for sc.Scan() {
			s.mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// stop interrupts serve, as Ctrl-C does, and waits for it to return.
func (s *served) stop() result {
	s.cancel()
	<-s.done
	s.mu.Lock()
	s.res.stdout = s.out.String()
	s.mu.Unlock()
	return s.res
}

// waitReady waits, on the agent's WebSocket, until server id is ready.
func waitReady(t *testing.T, base, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, client.AgentURL(base, "agentmcp", "default"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ready := make(chan struct{}, 1)
	dispose := c.OnMCPUpdate(func(st api.MCPServersState) {
		if st.Servers[id].State == "ready" {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	})
	defer dispose()
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatalf("server %s never became ready: %+v", id, c.MCPServers().Servers)
	}
}

// TestServeRestart: the terminal commands against a running serve; serve
// stopped (as by Ctrl-C) and started again on the same database shows the
// same servers, reconnected.
func TestServeRestart(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	srv, hs := serve(t, mcptest.Stateful)
	db := filepath.Join(t.TempDir(), "agentmcp.db")

	s := startServe(t, "--db", db)
	r := runCmd(t, "add", "s", hs.URL, "--id", "s", "--server", s.base, "--header", "X-Api-Key: very-secret-value")
	r.mustSucceed(t)
	if r.stdout != "added s as s: ready\n" {
		t.Errorf("add: %q", r.stdout)
	}
	r = runCmd(t, "ls", "--server", s.base)
	r.mustSucceed(t)
	if !regexp.MustCompile(`(?m)^s\s+s\s+ready\s+streamable-http\s+6\s+http://127`).MatchString(r.stdout) {
		t.Errorf("ls:\n%s", r.stdout)
	}
	r = runCmd(t, "call", "s", "echo", "--args", `{"text":"hi"}`, "--server", s.base)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, `"text": "echo: hi"`) {
		t.Errorf("call:\n%s", r.stdout)
	}
	stopped := s.stop()
	if stopped.err != nil || !strings.Contains(stopped.stdout, "agentmcp serve: stopped") {
		t.Fatalf("stop: %+v", stopped)
	}
	if n := strings.Count(stopped.stderr, "AGENTMCP_SECRET_KEY is not set"); n != 1 {
		t.Errorf("%d warnings about AGENTMCP_SECRET_KEY:\n%s", n, stopped.stderr)
	}
	if strings.Contains(stopped.stderr+stopped.stdout, "very-secret-value") {
		t.Errorf("a header value was printed")
	}

	srv.AddTool("late") // seen after the restart
	s2 := startServe(t, "--db", db)
	if !strings.Contains(s2.out.String(), "agents from ") {
		t.Errorf("restart: %s", s2.out.String())
	}
	waitReady(t, s2.base, "s")
	r = runCmd(t, "ls", "--server", s2.base)
	r.mustSucceed(t)
	if !regexp.MustCompile(`(?m)^s\s+s\s+ready\s+streamable-http\s+7\s`).MatchString(r.stdout) {
		t.Errorf("ls after the restart:\n%s", r.stdout)
	}
	r = runCmd(t, "tools", "--server", s2.base, "s")
	r.mustSucceed(t)
	if !regexp.MustCompile(`(?m)^s\s+late\s+Added later\.`).MatchString(r.stdout) {
		t.Errorf("tools:\n%s", r.stdout)
	}
	r = runCmd(t, "rm", "s", "--server", s2.base)
	r.mustSucceed(t)
	r = runCmd(t, "ls", "--server", s2.base)
	if r.stdout != "no servers (add one with: agentmcp add NAME URL)\n" {
		t.Errorf("ls after rm: %q", r.stdout)
	}
}

// TestServeToken: with a token, the terminal commands need it.
func TestServeToken(t *testing.T) {
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "a.db"), "--token", "tok-42")
	if !strings.Contains(s.out.String(), "/?token=tok-42") {
		t.Errorf("no dashboard link with the token: %s", s.out.String())
	}
	r := runCmd(t, "ls", "--server", s.base)
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, "wants an access token") {
		t.Errorf("without token: %s", line)
	}
	runCmd(t, "ls", "--server", s.base, "--token", "tok-42").mustSucceed(t)
	t.Setenv(envToken, "tok-42")
	runCmd(t, "ls", "--server", s.base).mustSucceed(t)
}

// TestTerminalDB: the terminal commands on a database directly.
func TestTerminalDB(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	r := runCmd(t, "add", "--db", db, "s", hs.URL, "--transport", "streamable-http")
	r.mustSucceed(t)
	m := regexp.MustCompile(`^added s as (\S+): ready\n$`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("add: %q", r.stdout)
	}
	id := m[1]
	r = runCmd(t, "ls", "--db", db, "--json", "--connect")
	r.mustSucceed(t)
	var st agent.MCPServersState
	decode(t, r.stdout, &st)
	if st.Servers[id].State != "ready" || len(st.Tools) != 6 {
		t.Errorf("ls --json: %+v", st)
	}
	// A server may be named instead of its id.
	r = runCmd(t, "call", "--db", db, "s", "add", "--args", `{"a":1,"b":2}`)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, `"text": "3"`) {
		t.Errorf("call:\n%s", r.stdout)
	}
	r = runCmd(t, "call", "--db", db, "s", "nope")
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, `tool "nope" not found on server `+id) {
		t.Errorf("unknown tool: %s", line)
	}
	r = runCmd(t, "call", "--db", db, "s", "fail")
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, "isError") {
		t.Errorf("fail: %s", line)
	}
	r = runCmd(t, "rm", "--db", db, "nope")
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, `no server "nope"`) {
		t.Errorf("rm nope: %s", line)
	}
	runCmd(t, "rm", "--db", db, id).mustSucceed(t)
	r = runCmd(t, "tools", "--db", db)
	r.mustSucceed(t)
	if !strings.HasPrefix(r.stdout, "no tools") {
		t.Errorf("tools after rm: %q", r.stdout)
	}
}

func TestTerminalErrors(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	db := filepath.Join(t.TempDir(), "x.db")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0"}, exitUsage, "set an access token"},
		{[]string{"serve", "--addr", ":0"}, exitUsage, "set an access token"},
		{[]string{"serve", "--db", db, "--postgres", "postgres://x"}, exitUsage, "not both"},
		{[]string{"serve", "--agent", "Bad/x"}, exitUsage, "kebab-case"},
		// --origin takes bare origins only; anything else could never
		// match, and is refused rather than dropped.
		{[]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--origin", "http://localhost:5173/"}, exitUsage, `--origin "http://localhost:5173/"`},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--origin", "localhost:5173"}, exitUsage, `--origin "localhost:5173"`},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--origin", "http://localhost:5173", "--origin", "http://x.example/app"}, exitUsage, `--origin "http://x.example/app"`},
		{[]string{"serve", "--public-url", "ftp://x.example"}, exitUsage, "want an http(s) URL"},
		{[]string{"add", "--db", db, "--public-url", "agents.example.com", "s", "http://x/"}, exitUsage, "want an http(s) URL"},
		{[]string{"ls", "--public-url", "https://agents.example.com"}, exitUsage, "--public-url is for --db"},
		{[]string{"add", "s"}, exitUsage, "want NAME and URL"},
		{[]string{"add", "s", "ftp://x"}, exitUsage, "scheme"},
		{[]string{"add", "s", "http://x/", "--header", "Mcp-Session-Id: 1"}, exitUsage, "the transport sets it"},
		{[]string{"add", "s", "http://x/", "--transport", "stdio"}, exitUsage, "unknown transport"},
		{[]string{"add", "--db", db, "s", "http://10.0.0.1/mcp"}, exitFailure, "Blocked URL"},
		{[]string{"ls", "--server", "http://127.0.0.1:1"}, exitFailure, "no agentmcp serve at http://127.0.0.1:1"},
		{[]string{"ls", "--db", db, "--server", "http://x"}, exitUsage, "one of --server, --db"},
		{[]string{"ls", "--agent", "nope"}, exitUsage, "class/name"},
		{[]string{"rm"}, exitUsage, "want one SERVER"},
		{[]string{"call", "s", "echo", "--header", "A: b"}, exitUsage, "apply to a URL"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "echo", "--db", db}, exitUsage, "apply to a SERVER"},
		{[]string{"import"}, exitUsage, "want one FILE"},
		{[]string{"add", "s", "--"}, exitUsage, "want a COMMAND"},
		{[]string{"add", "s", "x", "--", "cmd"}, exitUsage, "want NAME before --"},
		{[]string{"add", "--env", "SECRET_VALUE_1", "s", "--", "cmd"}, exitUsage, "is not NAME=VALUE"},
		{[]string{"add", "--env", "K=v", "s", "http://x/"}, exitUsage, "--env and --cwd are for a stdio server"},
		{[]string{"serve", "--allow-stdio-servers", "--db", db}, exitUsage, "needs an access token"},
	}
	for _, tt := range tests {
		r := runCmd(t, tt.args...)
		if line := r.errorLine(t, tt.code); !strings.Contains(line, tt.want) {
			t.Errorf("%q: %s, want %q", tt.args, line, tt.want)
		}
	}
}

func TestImport(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	t.Setenv("IMPORT_TEST_KEY", "k-123456789")
	os.WriteFile(cfg, []byte(`{
		"servers": {
			"Local Test": {"type": "http", "url": "`+hs.URL+`", "headers": {"X-Key": "${env:IMPORT_TEST_KEY}"}},
			"nocmd": {"type": "stdio"},
			"asks": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${input:token}"}},
			"unset": {"url": "https://example.com/${NOT_SET_ANYWHERE}/mcp"}
		},
		"inputs": []
	}`), 0o600)
	db := filepath.Join(dir, "agentmcp.db")
	r := runCmd(t, "import", "--db", db, "--dry-run", cfg)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "would add Local Test as local-test (http://127.0.0.1") {
		t.Errorf("dry run:\n%s", r.stdout)
	}
	r = runCmd(t, "import", "--db", db, cfg)
	r.mustSucceed(t)
	want := []string{
		"added Local Test as local-test: ready",
		"skipped asks: header Authorization asks for input (${input:token})",
		"skipped nocmd: no \"command\"",
		"skipped unset: url uses ${NOT_SET_ANYWHERE}, which is not set",
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(want) {
		t.Fatalf("import:\n%s", r.stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want %q...", i, lines[i], w)
		}
	}
	// Again: nothing changes.
	r = runCmd(t, "import", "--db", db, cfg)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "added Local Test as local-test: ready") {
		t.Errorf("import again:\n%s", r.stdout)
	}
	r = runCmd(t, "ls", "--db", db)
	if strings.Count(r.stdout, "local-test") != 1 {
		t.Errorf("ls:\n%s", r.stdout)
	}
}

func TestParseConfig(t *testing.T) {
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"TOKEN": "abc"}[k]
		return v, ok
	}
	tests := []struct {
		name, doc string
		want      []string // name=url|type|headers or name!skip
		err       string
	}{
		{"claude desktop", `{"mcpServers":{"fs":{"command":"npx","args":["x"]},"web":{"url":"https://a.example/mcp"}}}`,
			[]string{"fs$npx x||", "web=https://a.example/mcp|auto|"}, ""},
		{"mcp.json with types", `{"mcpServers":{"a":{"type":"sse","url":"https://a/sse"},"b":{"type":"streamable-http","url":"https://b/"},"c":{"type":"stdio","command":"x"},"d":{"type":"websocket","url":"wss://d/"}}}`,
			[]string{"a=https://a/sse|sse|", "b=https://b/|streamable-http|", "c$x||", "d!unknown type"}, ""},
		{"stdio with env", `{"mcpServers":{"m":{"command":"node","args":["--key=${TOKEN}"],"env":{"K":"${TOKEN}","L":"${NOPE:-d}"},"cwd":"/srv"},"n":{"command":"x","env":{"K":"${NOPE}"}},"o":{"type":"stdio"}}}`,
			[]string{"m$node --key=abc|K=abc L=d|/srv", "n!env K uses ${NOPE}, which is not set", `o!no "command"`}, ""},
		{"vscode", `{"servers":{"gh":{"type":"http","url":"https://gh/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}},"inputs":[]}`,
			[]string{"gh=https://gh/mcp|auto|Authorization:Bearer abc"}, ""},
		{"defaults", `{"servers":{"x":{"url":"https://${HOST:-h.example}/mcp"}}}`, []string{"x=https://h.example/mcp|auto|"}, ""},
		{"workspace variable", `{"servers":{"x":{"url":"https://h/${workspaceFolder}"}}}`, []string{"x!url uses ${workspaceFolder}, which is not set"}, ""},
		{"no url", `{"servers":{"x":{"type":"http"}}}`, []string{`x!no "url"`}, ""},
		{"not an entry", `{"servers":{"x":[1]}}`, []string{"x!not a server entry"}, ""},
		{"both", `{"servers":{},"mcpServers":{}}`, nil, "both"},
		{"neither", `{"x":{}}`, nil, `no "mcpServers"`},
		{"not JSON", `{`, nil, "not a JSON configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig([]byte(tt.doc), env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v", got)
			}
			for i, w := range tt.want {
				g := got[i]
				var s string
				switch {
				case g.skip != "":
					s = g.name + "!" + g.skip
				case g.req.Command != "":
					var env []string
					for k, v := range g.req.Env {
						env = append(env, k+"="+v)
					}
					slices.Sort(env)
					s = g.name + "$" + strings.Join(append([]string{g.req.Command}, g.req.Args...), " ") + "|" + strings.Join(env, " ") + "|" + g.req.Cwd
				default:
					s = g.name + "=" + g.req.URL + "|" + g.req.Transport.Type + "|"
					for k, v := range g.req.Transport.Headers {
						s += k + ":" + v
					}
				}
				if !strings.HasPrefix(s, w) {
					t.Errorf("entry %d: %q, want %q...", i, s, w)
				}
			}
		})
	}
}

// TestTerminalDBOAuth: a server that needs OAuth, added with --db, is
// stored with the callback URL of the agentmcp serve that will run on the
// database (--public-url, by default serve's default address), and that
// serve completes its authorization.
func TestTerminalDBOAuth(t *testing.T) {
	t.Setenv(store.EnvSecretKey, "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	as := oauthtest.NewServer(t, nil)
	srv := mcptest.NewServer("private")
	res := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }), nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	added := regexp.MustCompile(`^added private as private: authorization needed; open (\S+)\n$`)

	// callbackURL returns the stored callback URL of the server, and the
	// redirect URI of the authorization URL add printed.
	callbackURL := func(db, authURL string) (stored, redirect string) {
		t.Helper()
		st, err := sqlite.Open(ctx, db, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		row, err := st.GetServer(ctx, "agentmcp/default", "private")
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(authURL)
		if err != nil {
			t.Fatal(err)
		}
		return row.CallbackURL, u.Query().Get("redirect_uri")
	}

	// --public-url names the callback host.
	db2 := filepath.Join(t.TempDir(), "public.db")
	r := runCmd(t, "add", "--db", db2, "--public-url", "https://agents.example.com/", "private", res.URL, "--id", "private")
	r.mustSucceed(t)
	m := added.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("add --public-url: %q", r.stdout)
	}
	const public = "https://agents.example.com/agents/agentmcp/default/callback"
	if stored, redirect := callbackURL(db2, m[1]); stored != public || redirect != public {
		t.Errorf("with --public-url: stored callback URL %q, redirect_uri %q; want %q", stored, redirect, public)
	}

	// By default, serve's default address.
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	r = runCmd(t, "add", "--db", db, "private", res.URL, "--id", "private")
	r.mustSucceed(t)
	m = added.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("add: %q", r.stdout)
	}
	authURL := m[1]
	const local = defaultServer + "/agents/agentmcp/default/callback"
	if stored, redirect := callbackURL(db, authURL); stored != local || redirect != local {
		t.Errorf("stored callback URL %q, redirect_uri %q; want %q", stored, redirect, local)
	}

	// serve on the database waits for the authorization, shows where to
	// authorize, and completes it when the browser comes back to the
	// callback (on serve's actual address: the test cannot take 8787).
	s := startServe(t, "--db", db)
	c, err := client.New(client.AgentURL(s.base, "agentmcp", "default"), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.MCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := st.Servers["private"]; p.State != "authenticating" || p.AuthURL == nil || *p.AuthURL != authURL {
		t.Fatalf("under serve: %+v, want authenticating with the auth URL %s", p, authURL)
	}
	loc, err := as.VisitAuthURL(ctx, authURL)
	if err != nil {
		t.Fatal(err)
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != local {
		t.Fatalf("the authorization server redirects to %s", loc)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+loc.Path+"?"+loc.RawQuery, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("callback: %d", resp.StatusCode)
	}
	waitReady(t, s.base, "private")
}

// TestServePublicURL: without a token, serve answers requests for the
// host of its --public-url (the OAuth callbacks come back with it), and
// still refuses other hosts.
func TestServePublicURL(t *testing.T) {
	t.Setenv(envToken, "")
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "a.db"), "--public-url", "https://agents.example.com/")
	get := func(host, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", s.base+path, nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, b := get("agents.example.com", "/"); status != http.StatusOK {
		t.Errorf("dashboard for the public host: %d %s", status, b)
	}
	// The callback route answers (no such agent here), not host_not_allowed.
	status, b := get("agents.example.com", "/agents/agentmcp/default/callback?state=s:x&code=c")
	if status != http.StatusNotFound || !strings.Contains(b, api.CodeUnknownAgent) {
		t.Errorf("callback for the public host: %d %s", status, b)
	}
	if status, b := get("other.example.com", "/"); status != http.StatusForbidden || !strings.Contains(b, api.CodeHostNotAllowed) {
		t.Errorf("another host: %d %s", status, b)
	}
	res := s.stop()
	if !strings.Contains(res.stderr, "--public-url without an access token") {
		t.Errorf("no warning about serving agents.example.com without a token:\n%s", res.stderr)
	}
}
