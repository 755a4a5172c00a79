package mcpclient

import (
	"time"

	"github.com/agentmcp/agentmcp/internal/callstats"
)

// This file keeps per-server figures of the tool calls the Manager sends:
// counts, failures and a latency histogram over the last few minutes, for
// a dashboard that shows one agent's servers. The OpenTelemetry instrument
// mcp.client.operation.duration has the same figures, but labelled by
// server id only (bounded series), so it cannot tell two agents' "github"
// servers apart; these figures belong to the registered server itself.
// Both are recorded at one call site (the telemetry middleware,
// telemetry.Telemetry.Sending), from the same duration and the same
// error.type, so they agree by construction.

// StatsWindow is how far back ServerStats's windowed figures reach: the
// current minute and the four before it (between four and five minutes of
// calls, counted in whole clock minutes).
const StatsWindow = callstats.Slots * time.Minute

// ServerStats are the figures of the tool calls (tools/call requests) the
// Manager sent to one registered server, as mcp.client.operation.duration
// records them: each request sent, until its response, counted when it
// ends. A request the Manager refused before sending it (the server not
// ready, say) is not counted; a call retried on a new session counts each
// request.
//
// A call failed (Errors) when it has an error.type: a JSON-RPC error
// response, a tool result with isError, or a transport failure (timeout,
// cancelled, an HTTP refusal, the session lost, the server unreachable).
//
// The figures are kept in memory by the Manager from the server's
// registration: they start empty in a new process, after the server is
// registered again, and when an agent wakes from hibernation.
type ServerStats struct {
	// Calls and Errors are the calls that ended within StatsWindow, and
	// how many of them failed.
	Calls  int64
	Errors int64
	// P50 and P95 are the median and 95th percentile of their latency,
	// interpolated within the buckets of a histogram (as Prometheus's
	// histogram_quantile does: a call of 3 ms and one of 4 ms are both in
	// the bucket from 2 to 5 ms). Zero without calls; at most 300 s.
	P50 time.Duration
	P95 time.Duration
	// TotalCalls and TotalErrors count every call since the server was
	// registered.
	TotalCalls  int64
	TotalErrors int64
}

// serverStats returns f as ServerStats.
func serverStats(f callstats.Figures) ServerStats {
	return ServerStats{Calls: f.Calls, Errors: f.Errors, P50: f.P50, P95: f.P95, TotalCalls: f.TotalCalls, TotalErrors: f.TotalErrors}
}

// ErrorRate is Errors over Calls: the share of the window's calls that
// failed, 0 without calls.
func (s ServerStats) ErrorRate() float64 {
	if s.Calls == 0 {
		return 0
	}
	return float64(s.Errors) / float64(s.Calls)
}

// ServerStats returns the figures of the tool calls sent to the server
// registered under id (see ServerStats), and false when none is.
func (m *Manager) ServerStats(id string) (ServerStats, bool) {
	c, err := m.lookup(id)
	if err != nil {
		return ServerStats{}, false
	}
	return serverStats(c.stats.Snapshot(m.clock.Now())), true
}

// recordCall records one tool call that took d; failed when it has an
// error.type. end is when it ended, by the wall clock.
func (c *server) recordCall(end time.Time, d time.Duration, failed bool) {
	if _, wall := c.m.clock.(realClock); !wall {
		end = c.m.clock.Now() // a test's clock decides the minute
	}
	c.stats.Record(end, d, failed)
}
