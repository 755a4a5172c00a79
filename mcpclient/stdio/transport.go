package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentmcp/agentmcp/internal/jsonrpcwire"
	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Lines a stdio server writes to stdout that are not JSON-RPC messages.
const (
	// maxLoggedNoise is how many such lines of one session are logged, each
	// on its own; the rest are counted.
	maxLoggedNoise = 10
	// noiseQuote is how much of such a line (in runes) a log or an error
	// quotes.
	noiseQuote = 200
)

// Transport runs a command and speaks newline-delimited JSON-RPC on its
// stdin and stdout, as go-sdk's [mcp.CommandTransport] does, with these
// differences: a line on stdout that is not a JSON-RPC message (a banner,
// a log line) is skipped and logged rather than failing the connection, as
// the TypeScript SDK does; a line over the size cap fails with its start
// quoted; Close stops the server's whole process group (and, on Linux, all
// it started: see [SupervisorEnv]); and [Transport.Output] says what the
// server wrote besides messages, to explain a failed start.
//
// Like an [exec.Cmd], a Transport is used once: Connect starts the
// command. Its fields must not change once Connect was called.
type Transport struct {
	// Command is the server's process, not yet started. The transport
	// sets its Stdin, Stdout and SysProcAttr (and, on Linux, its Path,
	// Args and Env, to start it under the supervisor). A nil Stderr is
	// replaced by a writer that logs each line (sanitised) and keeps the
	// last ones for Output.
	Command *exec.Cmd

	// TerminateDuration is how long Close waits for the server to exit
	// after closing its stdin, and again after SIGTERM, before it kills
	// it. Zero means 2 seconds.
	TerminateDuration time.Duration

	// MaxLineLength caps a message the server writes, in bytes: a longer
	// line fails the connection with an error that wraps
	// transport.ErrProtocol and quotes its start. Zero means no cap.
	MaxLineLength int

	// Logger receives the server's stderr lines (when Command.Stderr was
	// nil) and the first lines on stdout that are not JSON-RPC messages.
	// Nil means discard.
	Logger *slog.Logger

	// Counter, if set, counts the bytes of the messages sent and
	// received, newlines included.
	Counter transport.Counter

	// Starter starts the process. Nil means a Starter of the
	// transport's own, whose thread lives as long as the process.
	Starter *Starter

	// StderrLimit bounds how many of the server's stderr lines are logged
	// (when Command.Stderr was nil). Nil means a LineLimiter of the
	// transport's own, with the default bounds.
	StderrLimit *LineLimiter

	// Set by Connect:
	noise *stdoutNoise
	tail  *stderrTail // nil when Command.Stderr was set
	exit  atomic.Pointer[ExitError]
}

// ExitError is how a stdio server's process ended when it ended of its own
// accord: it closed its stdout (typically by exiting) before its
// connection was closed, as a server does that fails during its
// handshake. [Transport.Exit] returns it.
type ExitError struct {
	// Code is the exit status, or -1 when a signal killed the process.
	Code int
	// Signal names the signal that killed it ("killed"), or is "".
	Signal string
	// Stderr is the last line the server wrote to its stderr, sanitised,
	// or "" when it wrote none or Command.Stderr was set.
	Stderr string
}

func (e *ExitError) Error() string {
	if e.Signal != "" {
		return "stdio server was killed (signal: " + e.Signal + ")"
	}
	return fmt.Sprintf("stdio server exited with status %d", e.Code)
}

// Exit returns how the server's process ended (an *ExitError) when it
// ended of its own accord before the connection was closed, once the
// connection is closed; nil otherwise (before Connect, while it runs, or
// when it was stopped by Close). After a Connect of go-sdk's that failed,
// it says why the server went away.
func (t *Transport) Exit() error {
	if e := t.exit.Load(); e != nil {
		return e
	}
	return nil
}

// Connect starts the command and returns the connection over its stdin
// and stdout. Closing the connection stops the process (see Close of the
// connection: its stdin is closed, then SIGTERM and SIGKILL follow, each
// after TerminateDuration).
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	logger := t.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cmd := t.Command
	if err := checkCommand(cmd); err != nil {
		return nil, err
	}
	t.noise = &stdoutNoise{logger: logger}
	if cmd.Stderr == nil {
		limit := t.StderrLimit
		if limit == nil {
			limit = NewLineLimiter()
		}
		t.tail = &stderrTail{logger: logger, limit: limit}
		cmd.Stderr = t.tail
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	starter := t.Starter
	if starter == nil {
		// A Starter for this process alone: its thread ends once the
		// process is reaped.
		starter = NewStarter()
		defer starter.stop()
	}
	terminate := t.TerminateDuration
	if terminate <= 0 {
		terminate = 2 * time.Second
	}
	if cmd.WaitDelay == 0 {
		// A process that escaped every kill and holds the server's stderr
		// does not hold up Close for ever.
		cmd.WaitDelay = terminate
	}
	watch := supervise(cmd)
	out := &stdoutReader{f: stdout}
	err = starter.start(cmd)
	watch.started(err, logger, out.died)
	if err != nil {
		stdout.Close()
		stdin.Close()
		return nil, err
	}
	lines := &jsonLines{r: bufio.NewReaderSize(out, 64<<10), max: t.MaxLineLength, noise: t.noise}
	input := &processInput{stdin: stdin, cmd: cmd, watch: watch, terminate: terminate, exited: starter.exited}
	input.ended = func(early bool) {
		if t.tail != nil {
			t.tail.flush()
		}
		if early && cmd.ProcessState != nil {
			t.exit.Store(exitOf(cmd.ProcessState, t.tail))
		}
	}
	input.early = out.ended.Load
	var r io.Reader = lines
	var w io.WriteCloser = input
	if t.Counter != nil {
		r, w = countedReader{lines, t.Counter}, countedWriter{input, t.Counter}
	}
	it := &mcp.IOTransport{
		// The connection is closed by closing stdin; stdout ends when the
		// process does.
		Reader:        nopCloser{r},
		Writer:        w,
		MaxLineLength: -1, // jsonLines enforces MaxLineLength
	}
	conn, err := it.Connect(ctx)
	if err != nil {
		input.Close() // the process is stopped and reaped either way
	}
	return conn, err
}

// Output describes what the server wrote besides messages, for an error
// about a server that failed to start or stopped: the lines on stdout
// that were not JSON-RPC messages (how many, and the last one quoted), and
// the last lines of its stderr when the transport reads it, all sanitised.
// It is "" when there is nothing to say, and before Connect. It may be
// called while the connection is in use, not during Connect.
func (t *Transport) Output() string {
	var parts []string
	if t.noise != nil {
		if out := t.noise.String(); out != "" {
			parts = append(parts, out)
		}
	}
	if t.tail != nil {
		if out := t.tail.String(); out != "" {
			parts = append(parts, "server stderr: "+out)
		}
	}
	return strings.Join(parts, "; ")
}

// checkCommand makes the checks the start of cmd under the supervisor
// cannot make itself (the supervisor starts, then fails to start the
// server): its working directory exists, and its program, when given as
// a path, exists and is executable. The errors are those of os/exec (an
// *exec.Error) and os (an *fs.PathError, op "chdir").
func checkCommand(cmd *exec.Cmd) error {
	if cmd.Err != nil {
		return nil // Start returns it
	}
	if cmd.Dir != "" {
		fi, err := os.Stat(cmd.Dir)
		switch {
		case err != nil:
			return &fs.PathError{Op: "chdir", Path: cmd.Dir, Err: errors.Unwrap(err)}
		case !fi.IsDir():
			return &fs.PathError{Op: "chdir", Path: cmd.Dir, Err: syscall.ENOTDIR}
		}
	}
	if !strings.ContainsRune(cmd.Path, filepath.Separator) {
		return nil
	}
	path := cmd.Path
	if !filepath.IsAbs(path) && cmd.Dir != "" {
		path = filepath.Join(cmd.Dir, path)
	}
	if _, err := exec.LookPath(path); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			ee.Name = cmd.Path
		}
		return err
	}
	return nil
}

// exitOf describes a process that ended of its own accord.
func exitOf(ps *os.ProcessState, tail *stderrTail) *ExitError {
	e := &ExitError{Code: ps.ExitCode()}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal().String()
	}
	if tail != nil {
		e.Stderr = tail.last()
	}
	return e
}

// stdoutReader is a server's stdout. Should its supervisor die (see
// supervisorWatch), died ends it at once with the reason, even while a
// process that escaped the kill still holds its other end.
type stdoutReader struct {
	f     io.ReadCloser
	cause atomic.Pointer[error]
	ended atomic.Bool // the server closed its stdout (read io.EOF)
}

func (r *stdoutReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err != nil {
		if cause := r.cause.Load(); cause != nil {
			err = *cause
		} else if err == io.EOF {
			r.ended.Store(true)
		}
	}
	return n, err
}

func (r *stdoutReader) died(err error) {
	r.cause.Store(&err)
	r.f.Close()
}

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

// countedReader and countedWriter count the bytes of the messages a stdio
// server sends and receives (newlines included).
type countedReader struct {
	r  io.Reader
	io transport.Counter
}

func (c countedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.io.Received(n)
	}
	return n, err
}

type countedWriter struct {
	io.WriteCloser
	io transport.Counter
}

func (c countedWriter) Write(p []byte) (int, error) {
	n, err := c.WriteCloser.Write(p)
	if n > 0 {
		c.io.Sent(n)
	}
	return n, err
}

// stdoutNoise records the lines a stdio server wrote to stdout that were
// not JSON-RPC messages.
type stdoutNoise struct {
	logger *slog.Logger

	mu    sync.Mutex
	count int
	last  string // the last one, sanitised and cut
}

// note records one line (or its start).
func (n *stdoutNoise) note(line []byte) {
	quoted := safetext.Sanitize(string(line), noiseQuote)
	n.mu.Lock()
	n.count++
	count := n.count
	n.last = quoted
	n.mu.Unlock()
	switch {
	case count <= maxLoggedNoise:
		n.logger.Warn("mcp stdio server wrote a line that is not a JSON-RPC message to stdout; skipped", "line", quoted)
	case count == maxLoggedNoise+1:
		n.logger.Warn(fmt.Sprintf("mcp stdio server keeps writing lines that are not JSON-RPC messages to stdout; skipping them without logging past %d", maxLoggedNoise))
	}
}

// String describes what was skipped, for an error message, or "".
func (n *stdoutNoise) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch n.count {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("server stdout had a line that is not JSON-RPC: %q", n.last)
	}
	return fmt.Sprintf("server stdout had %d lines that are not JSON-RPC, the last: %q", n.count, n.last)
}

// jsonLines passes on the lines of r that are JSON-RPC messages (or
// batches), each with its newline, and skips the others.
type jsonLines struct {
	r     *bufio.Reader
	max   int // 0 means no cap
	noise *stdoutNoise

	line    []byte // the line being read
	pending []byte // what is left of the line being passed on
	err     error  // sticky
}

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		if j.err != nil {
			return 0, j.err
		}
		j.next()
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// next reads one line: it becomes pending when it is a message, is noted
// as noise otherwise, and sets err at the end of the stream.
func (j *jsonLines) next() {
	j.line = j.line[:0]
	if cap(j.line) > 1<<20 {
		j.line = nil // do not keep one huge message's buffer
	}
	maybeJSON := false // whether the line may be JSON: it starts with { or [
	started := false
	for {
		chunk, err := j.r.ReadSlice('\n')
		if !started {
			if rest := bytes.TrimLeft(chunk, " \t\r\n"); len(rest) > 0 {
				started = true
				maybeJSON = rest[0] == '{' || rest[0] == '['
			}
		}
		if maybeJSON || len(j.line) < noiseQuote*4 {
			// A message is kept whole (up to max); noise only its start,
			// for quoting.
			j.line = append(j.line, chunk...)
		}
		if maybeJSON && j.max > 0 && len(j.line) > j.max+2 { // + "\r\n"
			j.err = fmt.Errorf("%w: stdio server wrote a line over the limit of %d bytes to stdout: %q", transport.ErrProtocol, j.max, safetext.Sanitize(string(j.line), noiseQuote))
			return
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			j.err = err
			return
		}
		eof := err == io.EOF
		line := bytes.TrimSpace(j.line)
		switch {
		case len(line) == 0:
		case maybeJSON && isMessageLine(line):
			j.pending = append(line, '\n')
		default:
			j.noise.note(line)
		}
		if eof {
			j.err = io.EOF
		}
		return
	}
}

// isMessageLine reports whether line is a JSON-RPC message, or a batch of
// them, that go-sdk's decoder would accept.
func isMessageLine(line []byte) bool {
	if line[0] == '[' {
		return json.Valid(line)
	}
	_, err := jsonrpcwire.DecodeShared(line)
	return err == nil
}

// processInput is the stdin of a stdio server. Closing it shuts the
// server down as the spec says: close its stdin, wait for it to exit, then
// SIGTERM, then SIGKILL, each after terminate. The signals go to the
// server's process group, and once the server has exited, what is left of
// its group (processes it started and left behind) is killed. Under the
// supervisor (watch not nil), the supervisor kills all the server left
// behind, in its group or not, and is asked to instead of the final
// SIGKILL to the group.
type processInput struct {
	stdin     io.WriteCloser
	cmd       *exec.Cmd
	watch     *supervisorWatch // nil when not supervised
	terminate time.Duration
	exited    func() // tells the Starter the process is reaped
	// early reports whether the server closed its stdout before Close.
	early func() bool
	// ended is called once the process is reaped, with early's answer
	// from before Close began, unless Close had to signal the process.
	ended func(early bool)

	once    sync.Once
	err     error
	stopped bool // stop signalled the process: it did not end of its own accord
}

func (w *processInput) Write(p []byte) (int, error) { return w.stdin.Write(p) }

// Close stops the process. It is safe to call more than once and
// concurrently (go-sdk closes the connection when the server's stdout
// ends, and the session's owner closes it too); every call returns the
// first one's result.
func (w *processInput) Close() error {
	w.once.Do(func() {
		early := w.early()
		w.err = w.stop()
		// A supervisor that died rather than exited leaves its tree to its
		// watch, which kills it: wait for that too.
		w.watch.wait()
		if w.watch == nil {
			// Leftovers of the group: the group id is not reused while
			// any of them lives, so this reaches them only. (The
			// supervisor has killed them before it exited: no signal
			// goes to a group id that may have been reused since.)
			signalGroup(w.cmd, syscall.SIGKILL)
		}
		w.ended(early && !w.stopped)
		w.exited()
	})
	return w.err
}

func (w *processInput) stop() error {
	if err := w.stdin.Close(); err != nil {
		w.cmd.Process.Kill()
		w.cmd.Wait()
		return fmt.Errorf("closing stdin: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		// Reaped only once its watch is over: the supervisor's pid, which
		// is its group's id, stays its own until then.
		w.watch.wait()
		done <- w.cmd.Wait()
	}()
	wait := func() (error, bool) {
		t := time.NewTimer(w.terminate)
		defer t.Stop()
		select {
		case err := <-done:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	// From here on the process is ended by our own signal: that is the
	// shutdown working (a server slow to notice its closed stdin, as a busy
	// machine makes any), not an error of the server's.
	w.stopped = true
	if err := signalGroup(w.cmd, syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return endedBy(err, syscall.SIGTERM)
		}
	}
	if w.watch != nil {
		// The supervisor kills the server and all it started, and exits
		// as killed by SIGKILL.
		if err := killTree(w.cmd); err == nil {
			if err, ok := wait(); ok {
				return endedBy(err, syscall.SIGKILL)
			}
		}
	}
	if err := signalGroup(w.cmd, syscall.SIGKILL); err != nil {
		w.cmd.Process.Kill()
	}
	return endedBy(<-done, syscall.SIGKILL) // SIGKILL cannot be ignored
}

// A Starter starts the processes of stdio servers, all from one goroutine
// locked to its OS thread. On Linux a child gets its parent-death signal
// (see SupervisorEnv) when the thread that started it ends, not the
// process, and the Go runtime ends a thread whenever a goroutine locked to
// it returns without unlocking: a child started from an ordinary goroutine
// could be killed at any time by unrelated code. A Starter's thread lives
// until Close was called and every process it started has been reaped, or
// until the whole program ends (a crash, SIGKILL): then its children are
// killed with it. One Starter shared by many transports (a client of many
// stdio servers) keeps them all on one thread.
//
// A Starter is safe for concurrent use. It starts its goroutine with the
// first process, not before.
type Starter struct {
	reqs    chan startRequest
	reaped  chan struct{} // receives one value per process reaped
	closing chan struct{} // closed by Close
	gone    chan struct{} // closed when the goroutine returned

	// mu guards the fields below.
	mu      sync.Mutex
	running bool // the goroutine was started
	closed  bool
}

type startRequest struct {
	cmd *exec.Cmd
	err chan error
}

// ErrStarterClosed is returned by Connect when the transport's Starter was
// closed.
var ErrStarterClosed = errors.New("stdio: the process starter is closed")

// NewStarter returns a Starter. It starts no goroutine.
func NewStarter() *Starter {
	return &Starter{
		reqs:    make(chan startRequest),
		reaped:  make(chan struct{}, 64),
		closing: make(chan struct{}),
		gone:    make(chan struct{}),
	}
}

// Close makes the Starter refuse new processes and waits until every
// process it started has been reaped (their connections closed) and its
// goroutine has returned. It is safe to call more than once.
func (s *Starter) Close() {
	if s.stop() {
		<-s.gone
	}
}

// stop is Close without the wait; it reports whether the goroutine was
// started.
func (s *Starter) stop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	return s.running
}

// start starts cmd from the Starter's thread.
func (s *Starter) start(cmd *exec.Cmd) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrStarterClosed
	}
	if !s.running {
		s.running = true
		go s.run()
	}
	s.mu.Unlock()
	req := startRequest{cmd: cmd, err: make(chan error, 1)}
	select {
	case s.reqs <- req:
		return <-req.err
	case <-s.gone:
		return ErrStarterClosed
	}
}

// exited tells the Starter one of its processes was reaped.
func (s *Starter) exited() { s.reaped <- struct{}{} }

func (s *Starter) run() {
	defer close(s.gone)
	// Never unlocked: the thread ends with this goroutine, and with it
	// (on Linux) any child still running.
	runtime.LockOSThread()
	live := 0
	closing := s.closing
	for closing != nil || live > 0 {
		select {
		case req := <-s.reqs:
			err := req.cmd.Start()
			if err == nil {
				live++
			}
			req.err <- err
		case <-s.reaped:
			live--
		case <-closing:
			closing = nil
		}
	}
}

// endedBy returns nil when err is the exit of a process killed by sig, and
// err otherwise (an exit status the server chose, or a wait failure).
func endedBy(err error, sig syscall.Signal) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == sig {
			return nil
		}
	}
	return err
}
