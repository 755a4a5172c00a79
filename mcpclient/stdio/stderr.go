package stdio

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/internal/safetext"
)

// stderrTail receives a stdio server's stderr: each line goes to the logger
// (as long as the limiter lets it), and the last few are kept to explain a
// failed start.
type stderrTail struct {
	logger *slog.Logger
	limit  *LineLimiter

	mu      sync.Mutex
	partial []byte
	lines   []string // the last tailLines lines
}

const (
	tailLines   = 10
	maxLineSize = 4 << 10
)

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			if len(t.partial) > maxLineSize {
				t.lineLocked(t.partial)
				t.partial = t.partial[:0]
			}
			break
		}
		t.partial = append(t.partial, p[:i]...)
		t.lineLocked(t.partial)
		t.partial = t.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (t *stderrTail) lineLocked(b []byte) {
	line := safetext.Sanitize(string(b), 500)
	if line == "" {
		return
	}
	if ok, dropped := t.limit.take(); ok {
		if dropped > 0 {
			t.logger.Warn("mcp server stderr: lines not logged, over the rate limit", "dropped", dropped)
		}
		t.logger.Info("mcp server stderr", "line", line)
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

// flush logs how many lines were not logged, if any: once the process
// has ended, so that the count is not lost with it.
func (t *stderrTail) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if dropped := t.limit.drain(); dropped > 0 {
		t.logger.Warn("mcp server stderr: lines not logged, over the rate limit", "dropped", dropped)
	}
}

// last returns the last line, or "".
func (t *stderrTail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.partial) > 0 {
		return safetext.Sanitize(string(t.partial), 500)
	}
	if len(t.lines) == 0 {
		return ""
	}
	return t.lines[len(t.lines)-1]
}

// String returns the last lines, joined with " | ".
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.partial) > 0 {
		lines = append(lines[:len(lines):len(lines)], safetext.Sanitize(string(t.partial), 500))
	}
	return strings.Join(lines, " | ")
}

// Default bounds of a LineLimiter.
const (
	// DefaultLineBurst is how many stderr lines are logged at once before
	// the rate applies: a server's start-up messages, a stack trace.
	DefaultLineBurst = 200
	// DefaultLinesPerSecond is how many stderr lines a second are logged
	// past the burst.
	DefaultLinesPerSecond = 20
)

// A LineLimiter bounds how many lines of a server's stderr a [Transport]
// logs: a burst of DefaultLineBurst lines, then DefaultLinesPerSecond a
// second (a token bucket). The lines past the bound are counted, not
// logged; the count is logged (a warning, "dropped") before the next line
// that is, and when the process ends. They are still kept for
// [Transport.Output]. Share one LineLimiter among the Transports of one
// server's successive processes so that the bound holds across restarts.
//
// A LineLimiter is safe for concurrent use; its zero value is not: use
// [NewLineLimiter].
type LineLimiter struct {
	burst, rate float64

	// mu guards the fields below.
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// NewLineLimiter returns a LineLimiter with the default bounds.
func NewLineLimiter() *LineLimiter {
	return &LineLimiter{burst: DefaultLineBurst, rate: DefaultLinesPerSecond, tokens: DefaultLineBurst}
}

// take reports whether one more line may be logged and, if so, how many
// were dropped since the last one that was (the count starts again).
func (l *LineLimiter) take() (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	dropped := l.dropped
	l.dropped = 0
	return true, dropped
}

// drain returns the lines dropped since the last one logged, and starts
// the count again.
func (l *LineLimiter) drain() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	dropped := l.dropped
	l.dropped = 0
	return dropped
}
