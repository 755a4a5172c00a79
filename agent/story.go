package agent

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// The agent's story in its log: a line per state change of a server and
// a warning per failed call, each naming the agent (the logger's "agent")
// and the server by its name, with its id where the two differ. Wakes and
// hibernations are the Host's (host.go).

// serverAttrs are the attributes that name server id in a log line: its
// name, and its id when that is not the name.
func (a *Agent) serverAttrs(id string) []any {
	a.mu.Lock()
	row, ok := a.rows[id]
	a.mu.Unlock()
	if !ok || row.Name == "" || row.Name == id {
		return []any{"server", id}
	}
	return []any{"server", row.Name, "id", id}
}

// stateLog remembers when each server last changed state, for the
// duration a state lasted.
type stateLog struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// tell logs a server's state change: its new state, how long the previous
// one lasted, and the error that came with it. It is a Manager listener.
func (a *Agent) tell(ev mcpclient.Event) {
	now := time.Now()
	a.states.mu.Lock()
	if a.states.since == nil {
		a.states.since = map[string]time.Time{}
	}
	prev, seen := a.states.since[ev.ServerID]
	switch ev.Kind {
	case mcpclient.EventStateChanged, mcpclient.EventRegistered:
		a.states.since[ev.ServerID] = now
	case mcpclient.EventRemoved:
		delete(a.states.since, ev.ServerID)
	}
	a.states.mu.Unlock()
	if ev.Kind != mcpclient.EventStateChanged {
		return
	}
	attrs := append(a.serverAttrs(ev.ServerID), "state", string(ev.State))
	if seen {
		attrs = append(attrs, "after_ms", now.Sub(prev).Milliseconds())
	}
	level := slog.LevelInfo
	if ev.Err != nil {
		attrs = append(attrs, "error", safetext.Sanitize(ev.Err.Error(), 500))
		if ev.State == mcpclient.StateFailed {
			level = slog.LevelWarn
		}
	}
	a.logger.Log(context.Background(), level, "mcp server state", attrs...)
}

// callFailed logs a warning for a call (what: "tools/call", "resources/read",
// "prompts/get") on server id that failed with err after it began at start.
// A call whose caller gave up (its context cancelled) is not the server's
// failure: logged at info.
func (a *Agent) callFailed(ctx context.Context, id, what, target string, start time.Time, err error) {
	if err == nil {
		return
	}
	attrs := append(a.serverAttrs(id), "call", what, "ms", time.Since(start).Milliseconds(), "error", safetext.Sanitize(err.Error(), 500))
	if target != "" {
		attrs = append(attrs, "target", safetext.Sanitize(target, 200))
	}
	level := slog.LevelWarn
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		level = slog.LevelInfo
	}
	a.logger.Log(context.Background(), level, "mcp call failed", attrs...)
}

// ServerLogs returns the last log messages the stored server id sent
// (notifications/message; see mcpclient.Manager.ServerLogs), oldest first,
// since the agent woke; ok is false for a server the agent does not have.
func (a *Agent) ServerLogs(id string) ([]mcpclient.ServerLog, bool) {
	a.mu.Lock()
	_, stored := a.rows[id]
	a.mu.Unlock()
	if !stored {
		return nil, false
	}
	logs, _ := a.m.ServerLogs(id)
	return logs, true
}

// Logs returns the last log messages of every server the agent has (see
// ServerLogs), by stored id; a server that sent none has none.
func (a *Agent) Logs() map[string][]mcpclient.ServerLog {
	a.mu.Lock()
	ids := make([]string, 0, len(a.rows))
	for id := range a.rows {
		ids = append(ids, id)
	}
	a.mu.Unlock()
	out := make(map[string][]mcpclient.ServerLog, len(ids))
	for _, id := range ids {
		out[id], _ = a.m.ServerLogs(id)
	}
	return out
}

// storedCount is how many servers the agent has.
func (a *Agent) storedCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.rows)
}
