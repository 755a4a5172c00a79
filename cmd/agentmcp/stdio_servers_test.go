package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

// liveChildren returns, by parent pid, the pids of the processes that are
// not zombies, from /proc.
func liveChildren(t *testing.T) map[int][]int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	children := map[int][]int{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	return children
}

// childrenOf returns the pids of the processes whose parent is ppid and
// whose command line contains match, from /proc.
func childrenOf(t *testing.T, ppid int, match string) []int {
	t.Helper()
	var out []int
	for _, pid := range liveChildren(t)[ppid] {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if strings.Contains(string(cmdline), match) {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// waitState waits, on the agent's WebSocket, until ok holds for the
// state (checked on the first state and on every change).
func waitState(t *testing.T, base, what string, ok func(api.MCPServersState) bool) api.MCPServersState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // safety net
	defer cancel()
	c, err := client.Dial(ctx, client.AgentURL(base, "agentmcp", "default"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(chan api.MCPServersState, 1)
	dispose := c.OnMCPUpdate(func(st api.MCPServersState) {
		if ok(st) {
			select {
			case got <- st:
			default:
			}
		}
	})
	defer dispose()
	select {
	case st := <-got:
		return st
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %+v", what, c.MCPServers().Servers)
		return api.MCPServersState{}
	}
}

func allReady(ids ...string) func(api.MCPServersState) bool {
	return func(st api.MCPServersState) bool {
		for _, id := range ids {
			if st.Servers[id].State != "ready" {
				return false
			}
		}
		return true
	}
}

// TestStdioServers: a Claude Desktop config with the reference memory,
// filesystem and everything servers over stdio and one URL server is
// imported whole; serve has them all ready, calls a tool of each, brings
// them back after a restart, restarts a server whose process was killed,
// stops the process of a removed one, shows the stderr of one that exits
// at once, and never shows or stores in plaintext an env value.
func TestStdioServers(t *testing.T) {
	peers.Require(t)
	const secret = "memo-SECRET-env-4e1f"
	t.Setenv("AGENTMCP_SECRET_KEY", "stdio test key 0123456789")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	_, hs := serve(t, mcptest.Stateful)
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	os.Mkdir(files, 0o755)
	os.WriteFile(filepath.Join(files, "hello.txt"), []byte("hello from the filesystem server"), 0o644)

	type entry struct {
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		URL     string            `json:"url,omitempty"`
	}
	toEntry := func(c peers.Command, extra map[string]string) entry {
		e := entry{Command: c.Path, Args: c.Args, Env: map[string]string{}}
		for _, kv := range c.Env {
			k, v, _ := strings.Cut(kv, "=")
			e.Env[k] = v
		}
		for k, v := range extra {
			e.Env[k] = v
		}
		return e
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]entry{
		"memory":     toEntry(peers.MemoryCommand(t, filepath.Join(dir, "memory.jsonl")), map[string]string{"MEMO_TOKEN": secret}),
		"filesystem": toEntry(peers.FilesystemCommand(t, files), nil),
		"everything": toEntry(peers.EverythingCommand(t), nil),
		"remote":     {URL: hs.URL},
	}})
	cfgFile := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(cfgFile, cfg, 0o600)
	db := filepath.Join(dir, "agentmcp.db")
	ids := []string{"everything", "filesystem", "memory", "remote"}

	r := runCmd(t, "import", "--db", db, cfgFile)
	r.mustSucceed(t)
	for _, id := range ids {
		if !strings.Contains(r.stdout, "added "+id+" as "+id+": ready") {
			t.Errorf("import:\n%s", r.stdout)
		}
	}
	// A server that exits at once on every start: stored, failing, its
	// stderr in its error.
	node := peers.EverythingCommand(t).Path
	runCmd(t, "add", "--db", db, "--id", "broken", "--keep-if-unreachable", "broken", "--", node, "-e", "console.error('boom: MEMO_API_KEY is not set'); process.exit(3)")

	s := startServe(t, "--db", db)
	st := waitState(t, s.base, "every server ready", allReady(ids...))
	for _, id := range []string{"everything", "filesystem", "memory"} {
		if got := st.Servers[id]; got.Transport != "stdio" || len(got.Command) == 0 || got.ServerURL != "" {
			t.Errorf("%s: %+v", id, got)
		}
	}
	st = waitState(t, s.base, "the broken server's stderr", func(st api.MCPServersState) bool {
		e := st.Servers["broken"].Error
		return e != nil && strings.Contains(*e, "boom: MEMO_API_KEY is not set")
	})
	calls := []struct{ id, tool, args, want string }{
		{"memory", "read_graph", `{}`, "entities"},
		{"filesystem", "read_text_file", `{"path":"` + filepath.Join(files, "hello.txt") + `"}`, "hello from the filesystem server"},
		{"everything", "echo", `{"message":"over stdio"}`, "over stdio"},
		{"remote", "echo", `{"text":"over http"}`, "over http"},
	}
	call := func(base string) {
		t.Helper()
		for _, c := range calls {
			r := runCmd(t, "call", c.id, c.tool, "--args", c.args, "--server", base)
			if r.err != nil || !strings.Contains(r.stdout, c.want) {
				t.Errorf("call %s %s: %+v", c.id, c.tool, r)
			}
		}
	}
	call(s.base)
	// serve was not started with --allow-stdio-servers: its API refuses
	// stdio servers.
	if r := runCmd(t, "add", "--server", s.base, "other", "--", node, "-v"); r.err == nil || !strings.Contains(r.stderr, "--allow-stdio-servers") {
		t.Errorf("add of a stdio server through serve's API: %+v", r)
	}
	me := os.Getpid()
	procs := func() map[string][]int {
		return map[string][]int{
			"memory":     childrenOf(t, me, "server-memory"),
			"filesystem": childrenOf(t, me, "server-filesystem"),
			"everything": childrenOf(t, me, "server-everything"),
		}
	}
	before := procs()
	for id, pids := range before {
		if len(pids) != 1 {
			t.Fatalf("%s: processes %v; want one", id, pids)
		}
	}

	// Restart serve: every process stops, and all come back.
	if r := s.stop(); r.err != nil {
		t.Fatalf("stop: %+v", r)
	}
	for id, pids := range before {
		fixture.WaitGone(t, pids[0], id+" after serve stopped")
	}
	start := time.Now()
	s = startServe(t, "--db", db)
	waitState(t, s.base, "every server ready after the restart", allReady(ids...))
	t.Logf("serve restarted with 3 stdio servers (node) and a URL one: all ready after %v (a figure, not a bound)", time.Since(start).Round(time.Millisecond))
	call(s.base)
	after := procs()

	// Kill a server's process: it is started again, and ready.
	old := after["everything"][0]
	killed := time.Now()
	syscall.Kill(old, syscall.SIGKILL)
	fixture.WaitGone(t, old, "the killed everything server")
	waitState(t, s.base, "everything restarted", func(st api.MCPServersState) bool {
		p := childrenOf(t, me, "server-everything")
		return st.Servers["everything"].State == "ready" && len(p) == 1 && p[0] != old
	})
	t.Logf("a killed stdio server was ready again %v after the kill (a figure, not a bound)", time.Since(killed).Round(time.Millisecond))
	r = runCmd(t, "call", "everything", "echo", "--args", `{"message":"again"}`, "--server", s.base)
	if !strings.Contains(r.stdout, "again") {
		t.Errorf("call after the restart: %+v", r)
	}

	// rm stops the process.
	runCmd(t, "rm", "memory", "--server", s.base).mustSucceed(t)
	fixture.WaitGone(t, after["memory"][0], "the removed memory server")

	// The env value is nowhere to be seen: API, frames (the state), logs,
	// the database.
	r = runCmd(t, "ls", "--server", s.base, "--json")
	res, err := http.Get(s.base + "/agents/agentmcp/default/servers")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	body := string(b)
	stopped := s.stop()
	raw, _ := os.ReadFile(db)
	for what, out := range map[string]string{"ls": r.stdout, "api": body, "serve output": stopped.stdout + stopped.stderr, "database": string(raw)} {
		if strings.Contains(out, secret) {
			t.Errorf("the env value shows in the %s", what)
		}
	}
	if !strings.Contains(body, "MEMO_TOKEN") && !strings.Contains(body, "filesystem") {
		t.Errorf("servers answer: %s", body)
	}
}

// TestStdioServersDieWithServe: kill -9 of agentmcp serve leaves no stdio
// server process behind, nor any process a server started: one server is
// a shell that runs the memory server and leaves two processes that
// ignore SIGTERM and stdin, one of them out of its process group.
func TestStdioServersDieWithServe(t *testing.T) {
	peers.Require(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	ev := peers.EverythingCommand(t)
	mem := peers.MemoryCommand(t, "")
	add := func(id string, c peers.Command) {
		args := []string{"add", "--db", db, "--keep-awake", "--id", id}
		for _, kv := range c.Env {
			args = append(args, "--env", kv)
		}
		args = append(append(append(args, id, "--"), c.Path), c.Args...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("add %s: %v\n%s", id, err, out)
		}
	}
	add("everything", ev)
	add("memory", mem)
	setsid, err := exec.LookPath("setsid")
	if err != nil {
		t.Skipf("no setsid: %v", err)
	}
	script, err := filepath.Abs("testdata/leaves-children.sh")
	if err != nil {
		t.Fatal(err)
	}
	leftFile := filepath.Join(dir, "left")
	mem2 := peers.MemoryCommand(t, "")
	add("leaves", peers.Command{Path: "/bin/sh", Args: append([]string{script, mem2.Path}, mem2.Args...),
		Env: append(mem2.Env, "LEFT_PIDS_FILE="+leftFile, "PATH="+filepath.Dir(setsid)+":/usr/bin:/bin")})

	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", db)
	serve.Env = append(os.Environ(), "AGENTMCP_TOKEN=", "AGENTMCP_SECRET_KEY=")
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	sc := bufio.NewScanner(stdout)
	re := regexp.MustCompile(`dashboard at (http://127\.0\.0\.1:\d+)/`)
	base := ""
	for base == "" && sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatal("serve did not start")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	waitState(t, base, "all ready", allReady("everything", "memory", "leaves"))
	kids := append(childrenOf(t, serve.Process.Pid, "server-everything"), childrenOf(t, serve.Process.Pid, "server-memory")...)
	if len(kids) != 3 {
		t.Fatalf("serve's stdio server processes: %v; want 3", kids)
	}
	// Every process under serve (the servers, what they started), and
	// the two the shell left.
	tree := descendantsOf(t, serve.Process.Pid)
	// (A shell started for the handshake probe and stopped has left
	// two too, stopped with it.)
	left := strings.Fields(readFile(t, leftFile))
	if len(left) < 2 || len(left)%2 != 0 {
		t.Fatalf("the shell left %v; want pairs of pids", left)
	}
	for _, p := range left[len(left)-2:] {
		pid, _ := strconv.Atoi(p)
		if !slices.Contains(tree, pid) {
			t.Fatalf("process %d the shell left is not under serve (%v)", pid, tree)
		}
	}
	for _, p := range left[:len(left)-2] {
		pid, _ := strconv.Atoi(p)
		fixture.WaitGone(t, pid, "a process left by a stopped server")
	}
	t.Logf("%d processes under serve before kill -9: %v", len(tree), tree)
	t.Cleanup(func() {
		for _, pid := range tree {
			syscall.Kill(pid, syscall.SIGKILL) // stop anything left
		}
	})
	if err := serve.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	serve.Wait()
	for _, pid := range tree {
		fixture.WaitGone(t, pid, "a process under the killed serve")
	}
}

// descendantsOf returns the pids of the processes under pid (its
// children, theirs, and so on), from /proc.
func descendantsOf(t *testing.T, pid int) []int {
	t.Helper()
	children := liveChildren(t)
	var out []int
	for next := []int{pid}; len(next) > 0; {
		p := next[0]
		next = append(next[1:], children[p]...)
		out = append(out, children[p]...)
	}
	return out
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
