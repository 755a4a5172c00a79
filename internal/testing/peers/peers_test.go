package peers

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// callTimeout bounds one tools/list, as a safety net.
const callTimeout = 30 * time.Second

func TestEverythingHTTP(t *testing.T) {
	tests := []struct {
		mode      string
		path      string
		transport func(url string, hc *http.Client) mcp.Transport
	}{
		{
			mode: "sse",
			path: "/sse",
			transport: func(url string, hc *http.Client) mcp.Transport {
				return &mcp.SSEClientTransport{Endpoint: url, HTTPClient: hc}
			},
		},
		{
			mode: "streamableHttp",
			path: "/mcp",
			transport: func(url string, hc *http.Client) mcp.Transport {
				return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			srv := StartEverything(t, tt.mode)
			if want := "http://127.0.0.1:" + strconv.Itoa(srv.Port) + tt.path; srv.URL != want {
				t.Errorf("URL = %q, want %q", srv.URL, want)
			}
			checkLoopbackOnly(t, srv.Port)
			hc := newHTTPClient(t)
			requireTools(t, listTools(t, tt.transport(srv.URL, hc)), "echo", "get-sum")

			pid := srv.d.pid()
			srv.Stop()
			checkGone(t, pid, srv.Port)
			srv.Stop() // idempotent

			srv.Restart()
			if srv.d.pid() == pid {
				t.Errorf("Restart kept pid %d", pid)
			}
			checkLoopbackOnly(t, srv.Port)
			requireTools(t, listTools(t, tt.transport(srv.URL, hc)), "echo")

			pid = srv.d.pid()
			srv.Restart() // while running
			checkGone(t, pid, 0)
			requireTools(t, listTools(t, tt.transport(srv.URL, hc)), "echo")
		})
	}
}

func TestEverythingUnknownMode(t *testing.T) {
	rec := runRecorded(t, func(tb testing.TB) { StartEverything(tb, "websocket") })
	if !rec.failed || !strings.Contains(rec.msg, `unknown mode "websocket"`) {
		t.Errorf("StartEverything(websocket): failed=%v msg=%q, want a failure naming the mode", rec.failed, rec.msg)
	}
}

func TestStopConcurrent(t *testing.T) {
	srv := StartEverything(t, "streamableHttp")
	pid := srv.d.pid()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(srv.Stop)
	}
	wg.Wait()
	checkGone(t, pid, srv.Port)
}

func TestOAuthExample(t *testing.T) {
	t.Parallel()
	as := StartOAuthExample(t)
	if want := "http://localhost:" + strconv.Itoa(as.MCPPort) + "/mcp"; as.MCPURL != want {
		t.Errorf("MCPURL = %q, want %q", as.MCPURL, want)
	}
	checkLoopbackOnly(t, as.MCPPort)
	checkLoopbackOnly(t, as.AuthPort)
	hc := newHTTPClient(t)

	// The resource metadata must point at AuthURL, whose metadata names it as issuer.
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, hc, "http://localhost:"+strconv.Itoa(as.MCPPort)+"/.well-known/oauth-protected-resource/mcp", &prm)
	if diff := cmp.Diff([]string{as.MCPURL, as.AuthURL}, append([]string{prm.Resource}, prm.AuthorizationServers...)); diff != "" {
		t.Errorf("protected resource metadata (-want +got):\n%s", diff)
	}
	var asm struct {
		Issuer string `json:"issuer"`
	}
	getJSON(t, hc, as.AuthURL+".well-known/oauth-authorization-server", &asm)
	if asm.Issuer != as.AuthURL {
		t.Errorf("issuer = %q, want AuthURL %q", asm.Issuer, as.AuthURL)
	}

	// Without a token: 401.
	if _, err := connect(t, &mcp.StreamableClientTransport{Endpoint: as.MCPURL, HTTPClient: hc, MaxRetries: -1}); err == nil {
		t.Error("connect without a token succeeded, want 401")
	}

	// With go-sdk's authorization code flow against the auto-approving AS.
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{"http://localhost/callback"},
				// The demo AS does not say which method it registered and refuses
				// client_secret_basic, the RFC 7591 default.
				TokenEndpointAuthMethod: "none",
				ClientName:              "agentmcp peers test",
			},
		},
		AuthorizationCodeFetcher: headlessApproval(hc),
		AcceptUnadvertisedIss:    true,
		Client:                   hc,
	})
	if err != nil {
		t.Fatal(err)
	}
	transport := &mcp.StreamableClientTransport{Endpoint: as.MCPURL, HTTPClient: hc, OAuthHandler: h, MaxRetries: -1}
	requireTools(t, listTools(t, transport), "greet")

	pid := as.d.pid()
	as.Restart()
	checkGone(t, pid, 0)
	checkLoopbackOnly(t, as.MCPPort)
	pid = as.d.pid()
	as.Stop()
	checkGone(t, pid, as.MCPPort)
	if n := len(listeners(t, as.AuthPort)); n != 0 {
		t.Errorf("after Stop, %d sockets still listen on auth port %d", n, as.AuthPort)
	}
}

func TestStdio(t *testing.T) {
	fsRoot := t.TempDir()
	memoryFile := filepath.Join(t.TempDir(), "graph.jsonl")
	tests := []struct {
		name string
		cmd  Command
		want []string
	}{
		{"everything", EverythingCommand(t), []string{"echo", "get-sum"}},
		{"memory", MemoryCommand(t, memoryFile), []string{"create_entities", "read_graph"}},
		{"filesystem", FilesystemCommand(t, fsRoot), []string{"list_allowed_directories", "read_text_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireTools(t, listTools(t, stdio(tt.cmd)), tt.want...)
		})
	}
}

func TestMemoryCommandFile(t *testing.T) {
	memoryFile := filepath.Join(t.TempDir(), "graph.jsonl")
	cmd := MemoryCommand(t, memoryFile)
	cs, err := connect(t, stdio(cmd))
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
		Name: "create_entities",
		Arguments: map[string]any{"entities": []any{map[string]any{
			"name": "agentmcp", "entityType": "program", "observations": []string{"speaks MCP"},
		}}},
	})
	if err != nil || res.IsError {
		t.Fatalf("create_entities: %v %+v", err, res)
	}
	cs.Close()
	data, err := os.ReadFile(memoryFile)
	if err != nil || !strings.Contains(string(data), `"agentmcp"`) {
		t.Errorf("memory file %s = %q, %v; want the entity", memoryFile, data, err)
	}
}

func TestConformanceOnNode22(t *testing.T) {
	c := ConformanceCommand(t, "--version")
	out, err := c.Cmd().CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "0.1.16" {
		t.Errorf("conformance --version = %q, %v; want 0.1.16", out, err)
	}
	v, err := exec.Command(Node22(t), "--version").Output()
	if err != nil || !strings.HasPrefix(string(v), "v22.") {
		t.Errorf("Node22 --version = %q, %v; want v22.*", v, err)
	}
}

func TestDirOverride(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	got, err := Dir()
	if err != nil || got != dir {
		t.Errorf("Dir() = %q, %v; want %q", got, err, dir)
	}
}

func TestDirDefault(t *testing.T) {
	t.Setenv(EnvDir, "")
	got, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	// go test runs in the package directory, two levels below the repo root.
	wd, _ := os.Getwd()
	if want := filepath.Join(wd, "..", "..", "..", ".cache", "npm", "node_modules"); got != filepath.Clean(want) {
		t.Errorf("Dir() = %q, want %q", got, want)
	}
	if _, err := os.Stat(Loopback()); err != nil {
		t.Errorf("Loopback(): %v", err)
	}
}

func TestRequireMissing(t *testing.T) {
	tests := []struct {
		name                string
		require             string
		wantSkip, wantFatal bool
	}{
		{"skip by default", "", true, false},
		{"fail when required", "1", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvDir, t.TempDir())
			t.Setenv(EnvRequire, tt.require)
			rec := runRecorded(t, func(tb testing.TB) { Require(tb) })
			if rec.skipped != tt.wantSkip || rec.failed != tt.wantFatal {
				t.Errorf("skipped=%v failed=%v, want %v %v (msg %q)", rec.skipped, rec.failed, tt.wantSkip, tt.wantFatal, rec.msg)
			}
			if !strings.Contains(rec.msg, "scripts/install-test-deps") {
				t.Errorf("message %q does not say how to install", rec.msg)
			}
		})
	}
}

func TestLogWriterAfterClose(t *testing.T) {
	rec := &recorder{TB: t}
	w := newLogWriter(rec, "srv")
	fmt.Fprint(w, "one\ntw")
	fmt.Fprint(w, "o\nthree")
	w.close()
	fmt.Fprint(w, "four\n") // after the test: dropped, no panic
	if diff := cmp.Diff([]string{"srv: one", "srv: two", "srv: three"}, rec.logs); diff != "" {
		t.Errorf("logged (-want +got):\n%s", diff)
	}
}

// stdio returns a transport that starts c. server-everything does not exit on stdin
// EOF while its roots/list request, sent 350 ms after initialization, awaits an answer,
// so a quick Close waits TerminateDuration before go-sdk sends SIGTERM; keep it short.
func stdio(c Command) *mcp.CommandTransport {
	return &mcp.CommandTransport{Command: c.Cmd(), TerminateDuration: time.Second}
}

// connect opens a client session that is closed when the test ends; go test's
// -timeout bounds it.
func connect(t *testing.T, transport mcp.Transport) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "agentmcp-peers-test", Version: "v0.0.0"}, nil)
	// Not a ctx with a timeout: go-sdk's SSEClientTransport runs its event stream on
	// the ctx given to Connect, so cancelling it right after Connect ends the session.
	cs, err := client.Connect(t.Context(), transport, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

// listTools connects, lists the tools and disconnects.
func listTools(t *testing.T, transport mcp.Transport) []string {
	t.Helper()
	cs, err := connect(t, transport)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func requireTools(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("tools %q lack %q", got, name)
		}
	}
}

// newHTTPClient returns a client whose idle connections are closed at the end of the
// test, for goleak.
func newHTTPClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func getJSON(t *testing.T, hc *http.Client, u string, v any) {
	t.Helper()
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// headlessApproval follows the authorization URL to the demo AS, which approves at
// once, and reads the code from the redirect instead of following it.
func headlessApproval(hc *http.Client) auth.AuthorizationCodeFetcher {
	noRedirect := *hc
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			return nil, fmt.Errorf("authorize: %s, want 302", resp.Status)
		}
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			return nil, err
		}
		q := loc.Query()
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// checkLoopbackOnly checks that something listens on port and only on 127.0.0.1.
func checkLoopbackOnly(t *testing.T, port int) {
	t.Helper()
	addrs := listeners(t, port)
	if len(addrs) == 0 {
		t.Errorf("nothing listens on TCP port %d", port)
	}
	for _, a := range addrs {
		if a != netip.MustParseAddr("127.0.0.1") {
			t.Errorf("TCP port %d listens on %v, want 127.0.0.1 only", port, a)
		}
	}
}

// checkGone checks that no process of the group pid is left and, if port is not 0,
// that nothing listens on port any more.
func checkGone(t *testing.T, pid, port int) {
	t.Helper()
	if pid == 0 {
		t.Fatal("no process was running")
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d after Stop: kill(0) = %v, want ESRCH", pid, err)
	}
	if port != 0 {
		if addrs := listeners(t, port); len(addrs) != 0 {
			t.Errorf("after Stop, port %d still listens on %v", port, addrs)
		}
	}
}

// listeners returns the local addresses of the sockets in state LISTEN on TCP port,
// from /proc/net/tcp and /proc/net/tcp6 (this network namespace).
func listeners(t *testing.T, port int) []netip.Addr {
	t.Helper()
	var addrs []netip.Addr
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for _, line := range lines[1:] { // after the header
			// sl local_address rem_address st ...: "0: 0100007F:0BB8 00000000:0000 0A ..."
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "0A" { // TCP_LISTEN
				continue
			}
			hexAddr, hexPort, _ := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); err != nil || int(p) != port {
				continue
			}
			a, err := parseProcAddr(hexAddr)
			if err != nil {
				t.Fatalf("%s: %q: %v", file, line, err)
			}
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// parseProcAddr decodes an address of /proc/net/tcp{,6}: the bytes of each 32-bit word
// in host order, which is little-endian on the machines we run on.
func parseProcAddr(s string) (netip.Addr, error) {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.Addr{}, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(b); i += 4 {
		slices.Reverse(b[i : i+4])
	}
	a, _ := netip.AddrFromSlice(b)
	return a.Unmap(), nil
}

func TestParseProcAddr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0100007F", "127.0.0.1"},
		{"00000000", "0.0.0.0"},
		{"00000000000000000000000000000000", "::"},
		{"00000000000000000000000001000000", "::1"},
		{"0000000000000000FFFF00000100007F", "127.0.0.1"},
	}
	for _, tt := range tests {
		got, err := parseProcAddr(tt.in)
		if err != nil || got.String() != tt.want {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// recorder is a testing.TB whose Skip and Fatal end only the goroutine they run on,
// so a test can check that a helper skips or fails.
type recorder struct {
	testing.TB
	mu              sync.Mutex
	skipped, failed bool
	msg             string
	logs            []string
}

func (r *recorder) Helper() {}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Skip(args ...any) {
	r.mu.Lock()
	r.skipped, r.msg = true, fmt.Sprint(args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// runRecorded runs f on its own goroutine with a recorder and waits for it.
func runRecorded(t *testing.T, f func(testing.TB)) *recorder {
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(rec)
	}()
	<-done
	return rec
}
