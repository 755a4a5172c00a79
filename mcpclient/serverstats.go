package mcpclient

import (
	"sort"
	"sync"
	"time"
)

// This file keeps per-server figures of the tool calls the Manager sends:
// counts, failures and a latency histogram over the last few minutes, for
// a dashboard that shows one agent's servers. The OpenTelemetry instrument
// mcp.client.operation.duration has the same figures, but labelled by
// server id only (bounded series), so it cannot tell two agents' "github"
// servers apart; these figures belong to the registered server itself.
// Both are recorded at one call site (telemetryMiddleware), from the same
// duration and the same error.type, so they agree by construction.

// StatsWindow is how far back ServerStats's windowed figures reach: the
// current minute and the four before it (between four and five minutes of
// calls, counted in whole clock minutes).
const StatsWindow = statsSlots * time.Minute

// statsSlots is the number of one-minute slots a server's window keeps.
const statsSlots = 5

// statsBounds are the upper bounds, in seconds, of the latency buckets:
// those of mcp.client.operation.duration (durationBuckets, from 10 ms),
// with 1, 2 and 5 ms below them, so that a server answering in a few
// milliseconds (stdio, in-process, a nearby one) does not show as "5 ms"
// for any latency under 10 ms. Summing the first four buckets gives the
// instrument's first one; the others are the instrument's.
var statsBounds = [...]float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// statsBuckets is the number of buckets: one per bound, and one above the
// last.
const statsBuckets = len(statsBounds) + 1

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
	return c.stats.snapshot(m.clock.Now()), true
}

// recordCall records one tool call that took d; failed when it has an
// error.type. end is when it ended, by the wall clock.
func (c *server) recordCall(end time.Time, d time.Duration, failed bool) {
	if _, wall := c.m.clock.(realClock); !wall {
		end = c.m.clock.Now() // a test's clock decides the minute
	}
	c.stats.record(end, d, failed)
}

// serverStats are one registered server's figures.
type serverStats struct {
	// mu guards w. It is held for a few additions, never across anything
	// else: a rolling window needs its slots reset as minutes pass, which
	// atomic counters alone cannot do without losing or misplacing counts.
	mu sync.Mutex
	w  *statsWindow // nil until the first call
}

// statsWindow is the slots of the last statsSlots minutes, and the totals.
type statsWindow struct {
	slots       [statsSlots]statsSlot
	totalCalls  int64
	totalErrors int64
}

// statsSlot counts the calls that ended in one clock minute.
type statsSlot struct {
	minute  int64 // minutes since the Unix epoch; a slot of another minute is stale
	calls   int64
	errors  int64
	buckets [statsBuckets]int64
}

// minuteOf is t's minute since the Unix epoch.
func minuteOf(t time.Time) int64 {
	u := t.Unix()
	if u < 0 {
		return (u - 59) / 60
	}
	return u / 60
}

// bucketOf returns the index of d's bucket: the first whose upper bound is
// at least d, in seconds (as the OpenTelemetry SDK places a measurement).
func bucketOf(d time.Duration) int {
	return sort.SearchFloat64s(statsBounds[:], d.Seconds())
}

// record counts a call that ended at now and took d.
func (s *serverStats) record(now time.Time, d time.Duration, failed bool) {
	minute, b := minuteOf(now), bucketOf(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		s.w = &statsWindow{}
		for i := range s.w.slots {
			s.w.slots[i].minute = -1 << 62
		}
	}
	w := s.w
	i := minute % statsSlots
	if i < 0 {
		i += statsSlots
	}
	slot := &w.slots[i]
	if slot.minute != minute {
		*slot = statsSlot{minute: minute}
	}
	slot.calls++
	slot.buckets[b]++
	w.totalCalls++
	if failed {
		slot.errors++
		w.totalErrors++
	}
}

// snapshot returns the figures as of now.
func (s *serverStats) snapshot(now time.Time) ServerStats {
	var out ServerStats
	var buckets [statsBuckets]int64
	minute := minuteOf(now)
	s.mu.Lock()
	if w := s.w; w != nil {
		out.TotalCalls, out.TotalErrors = w.totalCalls, w.totalErrors
		for i := range w.slots {
			slot := &w.slots[i]
			if slot.minute > minute-statsSlots && slot.minute <= minute {
				out.Calls += slot.calls
				out.Errors += slot.errors
				for b, n := range slot.buckets {
					buckets[b] += n
				}
			}
		}
	}
	s.mu.Unlock()
	out.P50 = quantile(0.50, &buckets, out.Calls)
	out.P95 = quantile(0.95, &buckets, out.Calls)
	return out
}

// quantile estimates the q-quantile of the total measurements counted in
// buckets, as Prometheus's histogram_quantile does: it finds the bucket
// that holds the measurement of rank q × total and interpolates linearly
// between its bounds (the first bucket's lower bound is 0). A rank in the
// bucket above the last bound is the last bound.
func quantile(q float64, buckets *[statsBuckets]int64, total int64) time.Duration {
	if total <= 0 {
		return 0
	}
	rank := q * float64(total)
	var below int64
	for b, n := range buckets {
		if n == 0 || float64(below+n) < rank {
			below += n
			continue
		}
		if b == len(statsBounds) {
			return seconds(statsBounds[len(statsBounds)-1])
		}
		lower := 0.0
		if b > 0 {
			lower = statsBounds[b-1]
		}
		upper := statsBounds[b]
		return seconds(lower + (upper-lower)*(rank-float64(below))/float64(n))
	}
	return seconds(statsBounds[len(statsBounds)-1])
}

// seconds converts seconds to a Duration, rounded to the microsecond.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}
