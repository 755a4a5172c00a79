package peers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// startTimeout bounds how long a server may take to listen. Readiness is signalled
	// by the server itself; this is only a safety net against a hung start.
	startTimeout = 60 * time.Second
	// waitDelay bounds how long Stop waits for the output pipes of a killed server.
	waitDelay = 10 * time.Second
	// portAttempts is how often a server started on ports picked in advance is tried
	// again when one of them was taken in the meantime.
	portAttempts = 5
	// listenFD is the file descriptor on which loopback.cjs reports listens (the
	// first of exec.Cmd.ExtraFiles).
	listenFD = "3"
)

// Server is a server-everything process serving MCP over HTTP on 127.0.0.1.
type Server struct {
	// URL is the MCP endpoint: http://127.0.0.1:PORT/sse for mode "sse",
	// http://127.0.0.1:PORT/mcp for mode "streamableHttp".
	URL string
	// Port is the TCP port, the same for the server's whole life, restarts included.
	Port int

	cmd Command
	d   *daemon
}

// StartEverything starts server-everything in mode "sse" (the 2024-11-05 HTTP+SSE
// transport) or "streamableHttp" as a separate process listening on a free port of
// 127.0.0.1, and returns once it accepts connections. The process is killed when the
// test ends; its output goes to t.Log. It skips or fails the test like [Require] when
// the npm packages are not installed.
func StartEverything(t testing.TB, mode string) *Server {
	t.Helper()
	var path string
	switch mode {
	case "sse":
		path = "/sse"
	case "streamableHttp":
		path = "/mcp"
	default:
		t.Fatalf(`peers: StartEverything: unknown mode %q, want "sse" or "streamableHttp"`, mode)
	}
	s := &Server{
		cmd: nodeCommand(t, everythingMain, mode),
		d:   newDaemon(t, "everything-"+mode),
	}
	// PORT=0: the kernel picks the port and loopback.cjs reports it.
	evs, err := s.d.start(s.launch(0))
	if err != nil {
		t.Fatalf("peers: start server-everything %s: %v", mode, err)
	}
	s.Port = evs[0].Port
	s.URL = "http://127.0.0.1:" + strconv.Itoa(s.Port) + path
	return s
}

// Stop kills the server process group with SIGKILL, as a crash would, and waits for
// it. Clients see their connections drop. Stop is idempotent and safe to call
// concurrently; the test's cleanup calls it too.
func (s *Server) Stop() { s.d.stop() }

// Restart kills the server if it runs and starts a new one on the same port, for
// reconnect tests. The new process has none of the old one's sessions. Restart fails
// the test if the server cannot start, so call it from the test's goroutine.
func (s *Server) Restart() {
	s.d.t.Helper()
	s.d.stop()
	if _, err := s.d.start(s.launch(s.Port)); err != nil {
		s.d.t.Fatalf("peers: restart %s on port %d: %v", s.d.name, s.Port, err)
	}
}

func (s *Server) launch(port int) launch {
	return launch{
		name:    s.d.name,
		cmd:     s.cmd,
		env:     []string{"PORT=" + strconv.Itoa(port)},
		listens: 1,
	}
}

// OAuthServer is the @modelcontextprotocol/sdk example server simpleStreamableHttp.js
// run with --oauth: a Streamable HTTP MCP server that requires a bearer token, and a
// separate demo authorization server with dynamic client registration, PKCE and an
// /authorize endpoint that approves at once (302 to redirect_uri?code=...&state=...).
// Both listen on 127.0.0.1.
type OAuthServer struct {
	// MCPURL is the MCP endpoint, http://localhost:PORT/mcp. It says localhost, not
	// 127.0.0.1, because that is the resource the server's protected resource metadata
	// names; a client that connects to 127.0.0.1 fails the resource check.
	MCPURL string
	// AuthURL is the authorization server's issuer, http://localhost:PORT/ (with the
	// trailing slash, as in its metadata).
	AuthURL string
	// MCPPort and AuthPort are the two TCP ports, kept across restarts.
	MCPPort, AuthPort int

	cmd Command
	d   *daemon
}

// StartOAuthExample starts the SDK's OAuth example server (see [OAuthServer]) as a
// separate process and returns once both of its ports accept connections. The process
// is killed when the test ends. Tokens are opaque and checked by introspection; there
// are no refresh tokens.
func StartOAuthExample(t testing.TB) *OAuthServer {
	t.Helper()
	return startOAuth(t, "oauth-example", "--oauth")
}

// StartOAuthExampleStrict is [StartOAuthExample] with --oauth-strict: the server also
// requires the token's audience (RFC 8707 resource) to be its own URL.
func StartOAuthExampleStrict(t testing.TB) *OAuthServer {
	t.Helper()
	return startOAuth(t, "oauth-example-strict", "--oauth", "--oauth-strict")
}

func startOAuth(t testing.TB, name string, flags ...string) *OAuthServer {
	t.Helper()
	s := &OAuthServer{
		cmd: nodeCommand(t, oauthExampleMain, flags...),
		d:   newDaemon(t, name),
	}
	// The example builds its URLs from MCP_PORT and MCP_AUTH_PORT, so PORT=0 does not
	// work: pick free ports, and pick again if one was taken before the server bound it.
	var err error
	for range portAttempts {
		var ports []int
		if ports, err = freePorts(2); err != nil {
			break
		}
		s.MCPPort, s.AuthPort = ports[0], ports[1]
		if _, err = s.d.start(s.launch()); !isAddrInUse(err) {
			break
		}
		t.Logf("peers: %s: %v; trying other ports", name, err)
	}
	if err != nil {
		t.Fatalf("peers: start %s: %v", name, err)
	}
	s.MCPURL = "http://localhost:" + strconv.Itoa(s.MCPPort) + "/mcp"
	s.AuthURL = "http://localhost:" + strconv.Itoa(s.AuthPort) + "/"
	return s
}

// Stop kills both servers (one process) with SIGKILL and waits for them. It is
// idempotent and safe to call concurrently; the test's cleanup calls it too.
func (s *OAuthServer) Stop() { s.d.stop() }

// Restart kills the process if it runs and starts a new one on the same ports. The
// demo authorization server keeps everything in memory, so registered clients and
// issued tokens are forgotten. Restart fails the test if the server cannot start, so
// call it from the test's goroutine.
func (s *OAuthServer) Restart() {
	s.d.t.Helper()
	s.d.stop()
	if _, err := s.d.start(s.launch()); err != nil {
		s.d.t.Fatalf("peers: restart %s on ports %d and %d: %v", s.d.name, s.MCPPort, s.AuthPort, err)
	}
}

func (s *OAuthServer) launch() launch {
	return launch{
		name: s.d.name,
		cmd:  s.cmd,
		env: []string{
			"MCP_PORT=" + strconv.Itoa(s.MCPPort),
			"MCP_AUTH_PORT=" + strconv.Itoa(s.AuthPort),
		},
		listens: 2,
	}
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// daemon runs one server process at a time for a test, and kills it at the end.
type daemon struct {
	t    testing.TB
	name string
	log  *logWriter

	// mu serializes start and stop, and guards proc (nil when stopped). It is held
	// while a process starts or dies: a Stop during a Restart waits for it.
	mu   sync.Mutex
	proc *process
}

func newDaemon(t testing.TB, name string) *daemon {
	d := &daemon{t: t, name: name, log: newLogWriter(t, name)}
	// Cleanups run last-registered first: kill and wait (which drains the output),
	// then stop logging.
	t.Cleanup(d.log.close)
	t.Cleanup(d.stop)
	return d
}

func (d *daemon) start(l launch) ([]listenEvent, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.proc != nil {
		return nil, errors.New("already running")
	}
	p, evs, err := startProcess(l, d.log)
	if err != nil {
		return nil, err
	}
	d.proc = p
	return evs, nil
}

func (d *daemon) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.proc != nil {
		d.proc.kill()
		d.proc = nil
	}
}

// pid returns the running process's id (also its process group id), or 0.
func (d *daemon) pid() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.proc == nil {
		return 0
	}
	return d.proc.cmd.Process.Pid
}

// launch is how to start a server process once.
type launch struct {
	name    string   // for errors
	cmd     Command  // program, arguments and extra environment
	env     []string // more environment, after cmd.Env
	listens int      // how many successful TCP listens mean the server is ready
}

// listenEvent is one line that loopback.cjs writes to AGENTMCP_LISTEN_FD.
type listenEvent struct {
	Event   string `json:"event"` // "listening" or "error"
	Address string `json:"address"`
	Port    int    `json:"port"`
	Code    string `json:"code"` // for "error": EADDRINUSE, EACCES, ...
	Message string `json:"message"`
}

// listenError is a listen() that failed in the server process.
type listenError struct {
	Code, Message string
}

func (e *listenError) Error() string { return "listen failed: " + e.Message }

func isAddrInUse(err error) bool {
	var le *listenError
	return errors.As(err, &le) && le.Code == "EADDRINUSE"
}

// process is one running server, the leader of its own process group.
type process struct {
	cmd      *exec.Cmd
	out      io.Writer        // the process's output goes there
	killing  atomic.Bool      // set when kill begins
	pidfd    int              // the child's, or -1
	report   *os.File         // read end of the listen report pipe
	events   chan listenEvent // closed by read at EOF
	stopped  chan struct{}    // closed by kill, releases read
	readDone chan struct{}
	killOnce sync.Once
}

// startProcess starts l with output to out and waits until it has reported l.listens
// successful listens, a failed listen, or its exit.
func startProcess(l launch, out io.Writer) (*process, []listenEvent, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(l.cmd.Path, l.cmd.Args...)
	cmd.Env = append(os.Environ(), l.cmd.Env...)
	cmd.Env = append(cmd.Env, l.env...)
	cmd.Env = append(cmd.Env, "AGENTMCP_LISTEN_FD="+listenFD)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true, // a group that Stop kills as one
		// Do not outlive a test binary that dies before its cleanups run:
		// sent when the forking thread ends (see fork).
		Pdeathsig: syscall.SIGKILL,
	}
	cmd.WaitDelay = waitDelay
	err = fork(cmd)
	w.Close() // the child has its copy; EOF on r now means the child is gone
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	// A pidfd names this child even once it is reaped (its pid might then
	// name another); -1 if the kernel has none.
	pidfd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		pidfd = -1
	}
	p := &process{
		cmd:      cmd,
		pidfd:    pidfd,
		out:      out,
		report:   r,
		events:   make(chan listenEvent),
		stopped:  make(chan struct{}),
		readDone: make(chan struct{}),
	}
	go p.read()

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	var evs []listenEvent
	for len(evs) < l.listens {
		select {
		case ev, ok := <-p.events:
			switch {
			case !ok:
				p.kill()
				return nil, nil, fmt.Errorf("%s exited before listening (%s); its output is in the test log", l.name, cmd.ProcessState)
			case ev.Event == "error":
				p.kill()
				return nil, nil, &listenError{Code: ev.Code, Message: ev.Message}
			case ev.Event == "listening":
				if a, err := netip.ParseAddr(ev.Address); err != nil || !a.IsLoopback() {
					p.kill()
					return nil, nil, fmt.Errorf("%s listens on %q, not on loopback", l.name, ev.Address)
				}
				evs = append(evs, ev)
				fmt.Fprintf(out, "peers: pid %d listening on %s port %d\n", cmd.Process.Pid, ev.Address, ev.Port)
			}
		case <-timer.C:
			p.kill()
			return nil, nil, fmt.Errorf("%s did not listen within %v", l.name, startTimeout)
		}
	}
	return p, evs, nil
}

// read forwards the reports until EOF or kill. EOF before kill means the
// process ended by itself (or closed the report pipe): that is logged,
// with how it ended, since a process killed by a signal logs nothing.
func (p *process) read() {
	defer close(p.readDone)
	defer close(p.events)
	sc := bufio.NewScanner(p.report)
	for sc.Scan() {
		var ev listenEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue
		}
		select {
		case p.events <- ev:
		case <-p.stopped:
			return
		}
	}
	if status := exitStatus(p.pidfd); !p.killing.Load() {
		fmt.Fprintf(p.out, "peers: pid %d ended before the test stopped it: %s\n", p.cmd.Process.Pid, status)
	}
}

// kill kills the process group and waits for the process and its output; once.
func (p *process) kill() {
	p.killOnce.Do(func() {
		p.killing.Store(true)
		// The leader is not reaped before Wait below, so its pid still names our group.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = p.cmd.Wait() // after SIGKILL the exit status says nothing
		forkDone()
		close(p.stopped)
		p.report.Close()
		<-p.readDone
		if p.pidfd >= 0 {
			unix.Close(p.pidfd)
		}
	})
}

// exitStatus waits for the child of pidfd to end, without reaping it (kill
// does, and its pid must name its group until then), and says how it
// ended.
func exitStatus(pidfd int) string {
	if pidfd < 0 {
		return "unknown (no pidfd)"
	}
	const cldExited = 1 // CLD_EXITED, asm-generic/siginfo.h
	// siginfo_t of SIGCHLD (64-bit Linux).
	var info struct {
		signo, errno, code, _ int32
		pid                   int32
		uid                   uint32
		status                int32
		_                     [100]byte
	}
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, unix.P_PIDFD, uintptr(pidfd), uintptr(unsafe.Pointer(&info)),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return "unknown (waitid: " + e.Error() + ")"
		case info.code == cldExited:
			return "exit status " + strconv.Itoa(int(info.status))
		default:
			return "signal " + syscall.Signal(info.status).String()
		}
	}
}

// The server processes are forked from one OS thread, locked to forkLoop's
// goroutine, that lives as long as one of them does. Pdeathsig is sent
// when the thread that forked a child ends, not its process, and Go ends a
// thread when a goroutine locked to it returns (mcpclient/stdio's Starter
// does, when its Manager closes): a server forked from whatever thread
// the test's goroutine ran on could be killed, silently, when another
// test's Manager closed.
var forker struct {
	mu   sync.Mutex
	live int         // processes forked and not yet reaped, and forks under way
	reqs chan func() // to forkLoop; nil when it is not running
}

// fork starts cmd from the forking thread. Unless it fails, forkDone must
// be called once the process is reaped.
func fork(cmd *exec.Cmd) error {
	forker.mu.Lock()
	if forker.live == 0 {
		forker.reqs = make(chan func())
		go forkLoop(forker.reqs)
	}
	forker.live++
	reqs := forker.reqs
	forker.mu.Unlock()
	errc := make(chan error, 1)
	reqs <- func() { errc <- cmd.Start() }
	err := <-errc
	if err != nil {
		forkDone()
	}
	return err
}

// forkDone notes that a process forked by fork was reaped; the forking
// thread ends with the last one.
func forkDone() {
	forker.mu.Lock()
	defer forker.mu.Unlock()
	if forker.live--; forker.live == 0 {
		close(forker.reqs)
		forker.reqs = nil
	}
}

func forkLoop(reqs <-chan func()) {
	runtime.LockOSThread() // never unlocked: the thread ends with the loop, when no child of it is left
	for start := range reqs {
		start()
	}
}

// logWriter sends a child's output to t.Log line by line, until close.
type logWriter struct {
	prefix string

	// mu guards t and buf.
	mu  sync.Mutex
	t   testing.TB // nil after close: logging after a test ends panics
	buf []byte     // an unfinished line
}

func newLogWriter(t testing.TB, prefix string) *logWriter {
	return &logWriter{prefix: prefix, t: t}
}

// maxLine is where an unfinished line is logged anyway.
const maxLine = 64 << 10

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t == nil {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.t.Logf("%s: %s", w.prefix, w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > maxLine {
		w.flushLocked()
	}
	return len(p), nil
}

func (w *logWriter) flushLocked() {
	if len(w.buf) > 0 {
		w.t.Logf("%s: %s", w.prefix, w.buf)
		w.buf = nil
	}
}

func (w *logWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.flushLocked()
		w.t = nil
	}
}
