package clustertest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	agentcluster "github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/server"
)

// replica is one slot of the cluster: its ports stay while its process is
// restarted (each start is a new incarnation with a new replica id).
type replica struct {
	slot int

	mu                sync.Mutex
	addr, clusterAddr string // 127.0.0.1:port; new ones when taken meanwhile
	cmd               *exec.Cmd
	done              chan struct{} // closed once the process was waited for
	exitErr           error
	starts            int
	logs              []string
	stopped           bool // SIGSTOP sent, no SIGCONT yet
}

func (r *replica) base() string { return "http://" + r.publicAddr() }

func (r *replica) publicAddr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addr
}

func (r *replica) clusterURL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "http://" + r.clusterAddr
}

// pid returns the process id of the running incarnation, or 0.
func (r *replica) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil || r.cmd.Process == nil {
		return 0
	}
	select {
	case <-r.done:
		return 0
	default:
	}
	return r.cmd.Process.Pid
}

// cluster runs the replicas and knows which ones a load balancer would
// send requests to (the pool).
type cluster struct {
	t        testing.TB
	bin, dsn string
	dir      string
	key      string
	prof     profile

	mu   sync.Mutex
	reps []*replica
	pool map[int]bool   // slots in the load balancer
	pids map[int]int    // every live process id -> slot
	urls map[string]int // every cluster URL a slot had -> slot
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func newCluster(t testing.TB, bin, dsn string, prof profile, n int) *cluster {
	c := &cluster{t: t, bin: bin, dsn: dsn, dir: t.TempDir(), key: "cluster-key-" + strconv.FormatUint(rand.Uint64(), 16),
		prof: prof, pool: map[int]bool{}, pids: map[int]int{}, urls: map[string]int{}}
	for i := range n {
		r := &replica{slot: i, addr: freeAddr(t), clusterAddr: freeAddr(t)}
		c.reps = append(c.reps, r)
		c.urls["http://"+r.clusterAddr] = i
	}
	// Every process is stopped by its id when the test ends, whatever
	// happened.
	t.Cleanup(func() {
		for _, r := range c.reps {
			r.mu.Lock()
			cmd, done := r.cmd, r.done
			r.mu.Unlock()
			if cmd == nil {
				continue
			}
			select {
			case <-done:
				continue
			default:
			}
			syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
			cmd.Process.Kill()
			<-done
		}
	})
	return c
}

// start starts the slot's next incarnation; it does not wait for it.
func (c *cluster) start(r *replica) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		select {
		case <-r.done:
		default:
			return fmt.Errorf("replica %d is running", r.slot)
		}
	}
	r.starts++
	path := filepath.Join(c.dir, fmt.Sprintf("replica%d.%d.log", r.slot, r.starts))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	args := []string{"serve", "--postgres", c.dsn, "--cluster",
		"--cluster-addr", r.clusterAddr, "--cluster-url", "http://" + r.clusterAddr,
		"--lease-ttl", c.prof.lease.String(), "--drain-timeout", c.prof.drainTimeout.String(),
		"--idle-timeout", c.prof.idleTimeout.String(),
		"--addr", r.addr}
	if control() {
		args = []string{"serve", "--postgres", c.dsn, "--idle-timeout", c.prof.idleTimeout.String(), "--addr", r.addr}
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "AGENTMCP_CLUSTER_KEY="+c.key, "AGENTMCP_TOKEN=",
		"AGENTMCP_SECRET_KEY=cluster-test-secret-key-0123456789")
	if heapDir() != "" {
		// Every 4 KiB allocated sampled: the heap profiles of a leak
		// hunt show the small structures a failover may leave.
		cmd.Env = append(cmd.Env, "GODEBUG=memprofilerate=4096")
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	done := make(chan struct{})
	r.cmd, r.done, r.exitErr, r.stopped = cmd, done, nil, false
	r.logs = append(r.logs, path)
	pid := cmd.Process.Pid
	c.mu.Lock()
	c.pids[pid] = r.slot
	c.mu.Unlock()
	go func() {
		err := cmd.Wait()
		f.Close()
		r.mu.Lock()
		r.exitErr = err
		r.mu.Unlock()
		c.mu.Lock()
		delete(c.pids, pid)
		c.mu.Unlock()
		close(done)
	}()
	return nil
}

// startReady starts the slot's next incarnation and waits for it to be
// ready. A port of the slot taken by another process meanwhile (an
// outbound connection's, on a busy machine) makes serve exit at once: the
// slot gets new ports and starts again.
func (c *cluster) startReady(r *replica, within time.Duration) error {
	for attempt := 1; ; attempt++ {
		if err := c.start(r); err != nil {
			return err
		}
		err := c.waitReady(r, within)
		if err == nil {
			return nil
		}
		r.mu.Lock()
		log := r.logs[len(r.logs)-1]
		r.mu.Unlock()
		data, _ := os.ReadFile(log)
		if attempt == 3 || !strings.Contains(string(data), "address already in use") {
			return err
		}
		if _, done := c.waitExit(r, 30*time.Second); !done {
			return err
		}
		addr, caddr := freeAddr(c.t), freeAddr(c.t)
		r.mu.Lock()
		r.addr, r.clusterAddr = addr, caddr
		r.mu.Unlock()
		c.mu.Lock()
		c.urls["http://"+caddr] = r.slot
		c.mu.Unlock()
		c.t.Logf("replica %d: a port was taken meanwhile; now on %s (cluster %s)", r.slot, addr, caddr)
	}
}

// slotOfURL returns the slot whose cluster URL url is or was, or -1.
func (c *cluster) slotOfURL(url string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.urls[url]; ok {
		return s
	}
	return -1
}

// waitReady waits until the slot's /readyz answers 200, the process ends,
// or the deadline (a safety net) passes.
func (c *cluster) waitReady(r *replica, within time.Duration) error {
	deadline := time.Now().Add(within)
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		path := "/readyz"
		if control() {
			path = "/agents"
		}
		res, err := hc.Get(r.base() + path)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("replica %d exited before it was ready: %v", r.slot, r.exitErr)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replica %d not ready within %v (last: %v)", r.slot, within, err)
		}
	}
}

// runtimeStats asks the slot's cluster listener for the process's
// goroutines, live heap and awake agents (server.StatsPath).
// Its idle connections to the other replicas are closed first.
func (c *cluster) runtimeStats(ctx context.Context, r *replica) (api.RuntimeStats, error) {
	var st api.RuntimeStats
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.clusterURL()+server.StatsPath+"?closeIdle=1", nil)
	if err != nil {
		return st, err
	}
	if err := agentcluster.SignRequest(req, c.key, "clustertest", nil); err != nil {
		return st, err
	}
	// No connection kept: it would count in the process's goroutines.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := hc.Do(req)
	if err != nil {
		return st, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s: %s", server.StatsPath, res.Status)
	}
	return st, json.NewDecoder(res.Body).Decode(&st)
}

// heapDir is where the survivors' heap profiles are saved after each kill
// cycle (AGENTMCP_CLUSTER_HEAPDIR), for a leak hunt with go tool pprof
// -diff_base; "" saves none.
func heapDir() string { return os.Getenv("AGENTMCP_CLUSTER_HEAPDIR") }

// saveHeapProfile saves r's heap profile as name in heapDir.
func (c *cluster) saveHeapProfile(ctx context.Context, r *replica, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.clusterURL()+server.StatsPath+"?profile=heap", nil)
	if err != nil {
		return err
	}
	if err := agentcluster.SignRequest(req, c.key, "clustertest", nil); err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", server.StatsPath, res.Status)
	}
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(heapDir(), name), data, 0o644)
}

// signal sends sig to the slot's running process.
func (c *cluster) signal(r *replica, sig syscall.Signal) error {
	pid := r.pid()
	if pid == 0 {
		return fmt.Errorf("replica %d is not running", r.slot)
	}
	r.mu.Lock()
	switch sig {
	case syscall.SIGSTOP:
		r.stopped = true
	case syscall.SIGCONT:
		r.stopped = false
	}
	r.mu.Unlock()
	return syscall.Kill(pid, sig)
}

// waitExit waits for the slot's process to end (the deadline is a safety
// net) and returns its exit error.
func (c *cluster) waitExit(r *replica, within time.Duration) (error, bool) {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	select {
	case <-done:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.exitErr, true
	case <-time.After(within):
		return nil, false
	}
}

func (c *cluster) setPool(slot int, in bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if in {
		c.pool[slot] = true
	} else {
		delete(c.pool, slot)
	}
}

// pick returns a random replica of the pool, or nil when it is empty.
func (c *cluster) pick() *replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	var in []int
	for s := range c.pool {
		in = append(in, s)
	}
	if len(in) == 0 {
		return nil
	}
	return c.reps[in[rand.IntN(len(in))]]
}

func (c *cluster) slotOfPid(pid int) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.pids[pid]
	return s, ok
}

func (c *cluster) livePids() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []int
	for p := range c.pids {
		ps = append(ps, p)
	}
	return ps
}

// logTails returns the end of every replica log, for a failure.
func (c *cluster) logTails(lines int) string {
	var b strings.Builder
	for _, r := range c.reps {
		r.mu.Lock()
		logs := append([]string(nil), r.logs...)
		r.mu.Unlock()
		for _, p := range logs {
			data, _ := os.ReadFile(p)
			ls := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			if len(ls) > lines {
				ls = ls[len(ls)-lines:]
			}
			fmt.Fprintf(&b, "--- %s (last %d lines)\n%s\n", filepath.Base(p), len(ls), strings.Join(ls, "\n"))
		}
	}
	return b.String()
}

// rss returns the resident set size in KiB and the thread count of pid,
// from /proc/PID/status.
func rss(pid int) (kib, threads int) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			kib, _ = strconv.Atoi(fields[1])
		case "Threads:":
			threads, _ = strconv.Atoi(fields[1])
		}
	}
	return kib, threads
}

// pidFinder tells which process holds the client end of a loopback TCP
// connection: the socket whose local and remote addresses are the
// connection's has an inode (sockDiagInode; /proc/net/tcp and tcp6 where
// that fails), and exactly one process has a file descriptor on it
// (/proc/PID/fd).
type pidFinder struct {
	candidates func() []int

	scan  sync.Mutex // one scan of the candidates' descriptors at a time
	mu    sync.Mutex
	inode map[uint64]int // socket inode -> pid, found before
}

// pidOf returns the process holding the client end of the connection from
// remote (the request's RemoteAddr) to local, or 0.
func (f *pidFinder) pidOf(remote, local string) int {
	ino := socketInode(remote, local)
	if ino == 0 {
		return 0
	}
	if pid, ok := f.cached(ino); ok {
		return pid
	}
	// A scan notes every socket of every candidate, so that the
	// connections opened with this one are found without another; a
	// request that waited for another's scan may find its answer there.
	f.scan.Lock()
	defer f.scan.Unlock()
	if pid, ok := f.cached(ino); ok {
		return pid
	}
	found := map[uint64]int{}
	for _, p := range f.candidates() {
		dir := fmt.Sprintf("/proc/%d/fd", p)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			l, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			if s, ok := strings.CutPrefix(l, "socket:["); ok {
				if n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
					found[n] = p
				}
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for n, p := range found {
		f.inode[n] = p
	}
	return found[ino]
}

func (f *pidFinder) cached(ino uint64) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pid, ok := f.inode[ino]
	return pid, ok
}

// socketInode returns the inode of the socket whose local address is
// client and remote address server (both 127.0.0.1:port), or 0.
func socketInode(client, server string) uint64 {
	ca, err1 := net.ResolveTCPAddr("tcp", client)
	sa, err2 := net.ResolveTCPAddr("tcp", server)
	if err1 == nil && err2 == nil {
		if ino := sockDiagInode(ca, sa); ino != 0 {
			return ino
		}
	}
	return procNetInode(client, server)
}

// procNetInode is socketInode from /proc/net/tcp and tcp6.
func procNetInode(client, server string) uint64 {
	cp, err1 := portOf(client)
	sp, err2 := portOf(server)
	if err1 != nil || err2 != nil {
		return 0
	}
	v4 := fmt.Sprintf("0100007F:%04X 0100007F:%04X", cp, sp)
	v6 := fmt.Sprintf("0000000000000000FFFF00000100007F:%04X 0000000000000000FFFF00000100007F:%04X", cp, sp)
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 10 {
				continue
			}
			pair := fields[1] + " " + fields[2]
			if pair != v4 && pair != v6 {
				continue
			}
			ino, err := strconv.ParseUint(fields[9], 10, 64)
			if err == nil && ino != 0 {
				return ino
			}
		}
	}
	return 0
}

func portOf(addr string) (int, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(p)
}

// balancer is a TCP load balancer on 127.0.0.1: each connection goes to a
// random replica of the pool, bytes copied both ways until either side
// closes.
type balancer struct {
	l  net.Listener
	c  *cluster
	wg sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]bool
}

func newBalancer(t testing.TB, c *cluster) *balancer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{l: l, c: c, conns: map[net.Conn]bool{}}
	b.wg.Add(1)
	go b.accept()
	t.Cleanup(b.close)
	return b
}

func (b *balancer) URL() string { return "http://" + b.l.Addr().String() }

func (b *balancer) accept() {
	defer b.wg.Done()
	for {
		in, err := b.l.Accept()
		if err != nil {
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			r := b.c.pick()
			if r == nil {
				in.Close()
				return
			}
			out, err := net.DialTimeout("tcp", r.publicAddr(), 5*time.Second)
			if err != nil {
				in.Close()
				return
			}
			if !b.track(in, out) {
				return
			}
			var wg sync.WaitGroup
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			go pipe(out, in)
			go pipe(in, out)
			wg.Wait()
			b.untrack(in, out)
		}()
	}
}

func (b *balancer) track(cs ...net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		b.conns[c] = true
	}
	return true
}

func (b *balancer) untrack(cs ...net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range cs {
		delete(b.conns, c)
	}
}

func (b *balancer) close() {
	b.l.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.conns = nil
	b.mu.Unlock()
	b.wg.Wait()
}

// errorCode returns the "code" of a JSON error body, or "".
func errorCode(body []byte) string {
	const key = `"code":"`
	s := string(body)
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	s = s[i+len(key):]
	if j := strings.IndexByte(s, '"'); j >= 0 {
		return s[:j]
	}
	return ""
}

var errNoReplica = errors.New("no replica in the pool")

// do sends one API request to a random replica of the pool.
func (c *cluster) do(ctx context.Context, hc *http.Client, method, path, body string) (status int, data []byte, slot int, err error) {
	r := c.pick()
	if r == nil {
		return 0, nil, -1, errNoReplica
	}
	return c.doAt(ctx, hc, r, method, path, body)
}

func (c *cluster) doAt(ctx context.Context, hc *http.Client, r *replica, method, path, body string) (int, []byte, int, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base()+path, rd)
	if err != nil {
		return 0, nil, r.slot, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, r.slot, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, data, r.slot, err
}
