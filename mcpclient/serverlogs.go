//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them
package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerLogsKept is how many of a server's log messages
// (notifications/message) the Manager keeps for ServerLogs.
const ServerLogsKept = 50

// maxLogData is how much of a log message's data (in runes) is kept and
// logged.
const maxLogData = 2000

// ServerLog is a log message a server sent (notifications/message).
type ServerLog struct {
	// Time is when it arrived.
	Time time.Time `json:"time"`
	// Level is the server's level for it: debug, info, notice, warning,
	// error, critical, alert or emergency (as the server sent it).
	Level string `json:"level"`
	// Logger is the name of the server's logger, if it gave one.
	Logger string `json:"logger,omitempty"`
	// Data is what it logged: a string as is, anything else as compact
	// JSON; sanitised (one line, no control or bidi characters) and cut to
	// 2,000 characters.
	Data string `json:"data"`
}

// serverLogs keeps the last ServerLogsKept log messages of a server.
type serverLogs struct {
	mu   sync.Mutex
	ring []ServerLog // in order of arrival; at most ServerLogsKept
}

func (l *serverLogs) add(e ServerLog) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ring) == ServerLogsKept {
		l.ring = append(l.ring[:0], l.ring[1:]...)
	}
	l.ring = append(l.ring, e)
}

func (l *serverLogs) list() []ServerLog {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ServerLog(nil), l.ring...)
}

// ServerLogs returns the last log messages (up to ServerLogsKept) the
// server id sent, oldest first, across its sessions; ok is false for a
// server not registered.
func (m *Manager) ServerLogs(id string) (logs []ServerLog, ok bool) {
	c, err := m.lookup(id)
	if err != nil {
		return nil, false
	}
	return c.logs.list(), true
}

// serverLog keeps a log message the server sent and logs it at its level
// (debug: Debug; info and notice: Info; warning: Warn; the rest: Error),
// its fields under "mcp_log" so that none of the server's choosing can
// stand for one of the record's own.
func (c *server) serverLog(ctx context.Context, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	e := ServerLog{
		Time:   c.m.clock.Now(),
		Level:  safetext.Sanitize(string(p.Level), 20),
		Logger: safetext.Sanitize(p.Logger, 100),
		Data:   logData(p.Data),
	}
	c.logs.add(e)
	level := slog.LevelError
	switch p.Level {
	case "debug":
		level = slog.LevelDebug
	case "info", "notice":
		level = slog.LevelInfo
	case "warning":
		level = slog.LevelWarn
	}
	attrs := []any{slog.String("level", e.Level), slog.String("data", e.Data)}
	if e.Logger != "" {
		attrs = append(attrs, slog.String("logger", e.Logger))
	}
	c.m.logger.Log(ctx, level, "mcp server log", "server", c.ID(), slog.Group("mcp_log", attrs...))
}

// logData renders a log message's data for people: a string as is,
// anything else as compact JSON, sanitised and cut.
func logData(data any) string {
	s, ok := data.(string)
	if !ok {
		b, err := json.Marshal(data)
		if err != nil {
			return ""
		}
		s = string(b)
	}
	return safetext.Sanitize(s, maxLogData)
}
