package stdio

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"

	"github.com/agentmcp/agentmcp/internal/safetext"
)

// stderrTail receives a stdio server's stderr: each line goes to the logger,
// and the last few are kept to explain a failed start.
type stderrTail struct {
	logger *slog.Logger

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
	t.logger.Info("mcp server stderr", "line", line)
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
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
