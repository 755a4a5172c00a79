package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/agentmcp/agentmcp/internal/jsonrpcwire"
	"github.com/agentmcp/agentmcp/internal/safetext"
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

// SupervisorEnv is the environment variable that makes a program that
// imports this package a stdio server's supervisor rather than itself. On
// Linux a stdio server runs under a supervisor: the program itself,
// started again from /proc/self/exe with SupervisorEnv set (to its pid);
// an init function of the package's (in internal/stdiosup, which imports
// the standard library only, so that it runs before the inits of heavier
// packages) sees the variable before main runs, so every program that
// imports mcpclient is its own supervisor without a separate binary or any
// call of its own. A program's own init functions that run before it
// (those of packages that sort before github.com/agentmcp and need nothing
// else) run in the supervisor too: keep them free of side effects.
//
// The supervisor makes itself a child subreaper, starts the server with
// its own stdin, stdout and stderr (the pipes of the Manager: nothing is
// relayed) and waits. When the server exits, when the Manager asks
// (SIGUSR1), or when the Manager's process dies (its parent-death signal,
// SIGUSR1 too), it kills every process the server left behind: the
// server's children, and the processes orphaned under it (a subreaper
// adopts them, even those that started a session or a process group of
// their own), until it has none left; then it exits as the server did. A
// parent-death signal alone reaches only the direct child: without the
// supervisor, `npx`'s node or a shell's children outlive a killed
// program.
//
// Programs built as c-shared or c-archive libraries, whose /proc/self/exe
// is another program, start servers directly, with only the parent-death
// signal; other systems start them directly too, and ignore SupervisorEnv.
const SupervisorEnv = "AGENTMCP_STDIO_SUPERVISOR"

// stdioTransport runs a command and speaks newline-delimited JSON-RPC on
// its stdin and stdout, as go-sdk's CommandTransport does, with two
// differences: a line on stdout that is not a JSON-RPC message (a banner,
// a log line) is skipped and logged rather than failing the connection, as
// the TypeScript SDK does, and a line over the size cap fails with its
// start quoted.
type stdioTransport struct {
	cmd       *exec.Cmd
	spawn     *spawner
	terminate time.Duration // how long Close waits before each signal
	maxLine   int           // bytes; 0 means no cap
	noise     *stdoutNoise
	io        *ioCounter // the messages' bytes (agentmcp.client.io); nil counts none
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	supervised := supervise(t.cmd)
	if err := t.spawn.start(t.cmd); err != nil {
		stdout.Close()
		stdin.Close()
		return nil, err
	}
	lines := &jsonLines{r: bufio.NewReaderSize(stdout, 64<<10), max: t.maxLine, noise: t.noise}
	input := &processInput{stdin: stdin, cmd: t.cmd, supervised: supervised, terminate: t.terminate, exited: t.spawn.exited}
	var r io.Reader = lines
	var w io.WriteCloser = input
	if t.io != nil {
		r, w = countedReader{lines, t.io}, countedWriter{input, t.io}
	}
	it := &mcp.IOTransport{
		// The connection is closed by closing stdin; stdout ends when the
		// process does.
		Reader:        nopCloser{r},
		Writer:        w,
		MaxLineLength: -1, // jsonLines enforces maxLine
	}
	conn, err := it.Connect(ctx)
	if err != nil {
		input.Close() // the process is stopped and reaped either way
	}
	return conn, err
}

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

// countedReader and countedWriter count the bytes of the messages a stdio
// server sends and receives (newlines included).
type countedReader struct {
	r  io.Reader
	io *ioCounter
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
	io *ioCounter
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
			j.err = protocolError("stdio server wrote a line over the limit of %d bytes to stdout: %q", j.max, safetext.Sanitize(string(j.line), noiseQuote))
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
// supervisor (supervised), the supervisor kills all the server left
// behind, in its group or not, and is asked to instead of the final
// SIGKILL to the group.
type processInput struct {
	stdin      io.WriteCloser
	cmd        *exec.Cmd
	supervised bool
	terminate  time.Duration
	exited     func() // tells the spawner the process is reaped

	once sync.Once
	err  error
}

func (w *processInput) Write(p []byte) (int, error) { return w.stdin.Write(p) }

// Close stops the process. It is safe to call more than once and
// concurrently (go-sdk closes the connection when the server's stdout
// ends, and the session's owner closes it too); every call returns the
// first one's result.
func (w *processInput) Close() error {
	w.once.Do(func() {
		w.err = w.stop()
		if !w.supervised {
			// Leftovers of the group: the group id is not reused while
			// any of them lives, so this reaches them only. (The
			// supervisor has killed them before it exited: no signal
			// goes to a group id that may have been reused since.)
			signalGroup(w.cmd, syscall.SIGKILL)
		}
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
	go func() { done <- w.cmd.Wait() }()
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
	if err := signalGroup(w.cmd, syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return endedBy(err, syscall.SIGTERM)
		}
	}
	if w.supervised {
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

// spawner starts the processes of one Manager's stdio servers, all from
// one goroutine locked to its OS thread. On Linux a child gets its
// parent-death signal (supervise) when the thread that started it ends, not
// the process, and the Go runtime ends a thread whenever a goroutine locked
// to it returns without unlocking: a child started from an ordinary
// goroutine could be killed at any time by unrelated code. The spawner's
// thread lives until the Manager is closed and every process it started
// has been reaped, or until the whole program ends (a crash, SIGKILL):
// then its children are killed with it.
type spawner struct {
	m    *Manager
	once sync.Once
	ok   bool // the goroutine runs (or ran)

	reqs chan spawnRequest
	done chan struct{} // closed when one of its processes was reaped
	gone chan struct{} // closed when the goroutine returned
}

type spawnRequest struct {
	cmd *exec.Cmd
	err chan error
}

func newSpawner(m *Manager) *spawner {
	return &spawner{m: m, reqs: make(chan spawnRequest), done: make(chan struct{}, 64), gone: make(chan struct{})}
}

// start starts cmd from the spawner's thread.
func (sp *spawner) start(cmd *exec.Cmd) error {
	sp.once.Do(func() { sp.ok = sp.m.goBackground(sp.run) })
	if !sp.ok {
		return ErrClosed
	}
	req := spawnRequest{cmd: cmd, err: make(chan error, 1)}
	select {
	case sp.reqs <- req:
		return <-req.err
	case <-sp.gone:
		return ErrClosed
	}
}

// exited tells the spawner one of its processes was reaped.
func (sp *spawner) exited() { sp.done <- struct{}{} }

func (sp *spawner) run() {
	defer close(sp.gone)
	// Never unlocked: the thread ends with this goroutine, and with it
	// (on Linux) any child still running.
	runtime.LockOSThread()
	live := 0
	closing := sp.m.ctx.Done()
	for closing != nil || live > 0 {
		select {
		case req := <-sp.reqs:
			err := req.cmd.Start()
			if err == nil {
				live++
			}
			req.err <- err
		case <-sp.done:
			live--
		case <-closing:
			closing = nil
		}
	}
}

// stdioStarts paces the starts of one stdio server's process. A server
// that dies soon after each start, even after a good handshake (which
// resets the retry backoff), would otherwise be restarted at once, again
// and again: a start within quickRestart of the previous one waits a
// doubling delay first (the server's retry backoff, up to its
// BackgroundMaxDelay), so that the restart rate stays bounded; a server
// that ran for a while is started again at once.
type stdioStarts struct {
	mu    sync.Mutex
	last  time.Time // when the process last started
	quick int       // starts in a row that each followed the one before quickly
}

const quickRestart = 10 * time.Second

// paceStdio waits, if need be, before the process of c is started.
func (c *server) paceStdio(ctx context.Context) error {
	p := &c.starts
	p.mu.Lock()
	now := c.m.clock.Now()
	if !p.last.IsZero() && now.Sub(p.last) < quickRestart {
		p.quick++
	} else {
		p.quick = 0
	}
	n := p.quick
	p.mu.Unlock()
	if n > 0 {
		d := doubled(c.retry.BaseDelay, n, c.retry.BackgroundMaxDelay)
		c.m.logger.Info("mcp stdio server exits soon after it starts; waiting before starting it again", "server", c.ID(), "in", d)
		select {
		case <-c.m.clock.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	p.last = c.m.clock.Now()
	p.mu.Unlock()
	return nil
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
