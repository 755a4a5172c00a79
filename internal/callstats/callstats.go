// Package callstats keeps the figures of calls over a rolling window of
// whole clock minutes: counts, failures, and a latency histogram whose
// quantiles are interpolated as Prometheus's histogram_quantile does.
// mcpclient keeps one Window per registered server (Manager.ServerStats).
package callstats

import (
	"sort"
	"sync"
	"time"
)

// Slots is the number of one-minute slots a Window keeps: the current
// minute and the four before it.
const Slots = 5

// Bounds are the upper bounds, in seconds, of the latency buckets: those
// of mcp.client.operation.duration (mcpclient's durationBuckets, from
// 10 ms), with 1, 2 and 5 ms below them, so that a server answering in a
// few milliseconds (stdio, in-process, a nearby one) does not show as
// "5 ms" for any latency under 10 ms. Summing the first four buckets gives
// the instrument's first one; the others are the instrument's. It is
// read-only.
var Bounds = [...]float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// NumBuckets is the number of buckets: one per bound, and one above the
// last.
const NumBuckets = len(Bounds) + 1

// Figures are a Window's figures at one time.
type Figures struct {
	// Calls and Errors are the calls that ended within the window, and
	// how many of them failed.
	Calls  int64
	Errors int64
	// P50 and P95 are the median and 95th percentile of their latency,
	// interpolated within the buckets. Zero without calls; at most the
	// last bound.
	P50 time.Duration
	P95 time.Duration
	// TotalCalls and TotalErrors count every call recorded.
	TotalCalls  int64
	TotalErrors int64
}

// Window counts calls by the minute they ended. Its zero value is an
// empty window; it is safe for concurrent use.
type Window struct {
	// mu guards w. It is held for a few additions, never across anything
	// else: a rolling window needs its slots reset as minutes pass, which
	// atomic counters alone cannot do without losing or misplacing counts.
	mu sync.Mutex
	w  *window // nil until the first call
}

// window is the slots of the last Slots minutes, and the totals.
type window struct {
	slots       [Slots]slot
	totalCalls  int64
	totalErrors int64
}

// slot counts the calls that ended in one clock minute.
type slot struct {
	minute  int64 // minutes since the Unix epoch; a slot of another minute is stale
	calls   int64
	errors  int64
	buckets [NumBuckets]int64
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
	return sort.SearchFloat64s(Bounds[:], d.Seconds())
}

// Record counts a call that ended at end and took d.
func (s *Window) Record(end time.Time, d time.Duration, failed bool) {
	minute, b := minuteOf(end), bucketOf(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		s.w = &window{}
		for i := range s.w.slots {
			s.w.slots[i].minute = -1 << 62
		}
	}
	w := s.w
	i := minute % Slots
	if i < 0 {
		i += Slots
	}
	sl := &w.slots[i]
	if sl.minute != minute {
		*sl = slot{minute: minute}
	}
	sl.calls++
	sl.buckets[b]++
	w.totalCalls++
	if failed {
		sl.errors++
		w.totalErrors++
	}
}

// Snapshot returns the figures as of now.
func (s *Window) Snapshot(now time.Time) Figures {
	var out Figures
	buckets := s.collect(now, &out)
	out.P50 = quantile(0.50, &buckets, out.Calls)
	out.P95 = quantile(0.95, &buckets, out.Calls)
	return out
}

// Buckets returns the latency histogram of the calls within the window as
// of now: the count per bucket of Bounds.
func (s *Window) Buckets(now time.Time) [NumBuckets]int64 {
	return s.collect(now, &Figures{})
}

// collect sums the slots within the window as of now into out's counts
// and the result's buckets.
func (s *Window) collect(now time.Time, out *Figures) [NumBuckets]int64 {
	var buckets [NumBuckets]int64
	minute := minuteOf(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.w; w != nil {
		out.TotalCalls, out.TotalErrors = w.totalCalls, w.totalErrors
		for i := range w.slots {
			sl := &w.slots[i]
			if sl.minute > minute-Slots && sl.minute <= minute {
				out.Calls += sl.calls
				out.Errors += sl.errors
				for b, n := range sl.buckets {
					buckets[b] += n
				}
			}
		}
	}
	return buckets
}

// quantile estimates the q-quantile of the total measurements counted in
// buckets, as Prometheus's histogram_quantile does: it finds the bucket
// that holds the measurement of rank q × total and interpolates linearly
// between its bounds (the first bucket's lower bound is 0). A rank in the
// bucket above the last bound is the last bound.
func quantile(q float64, buckets *[NumBuckets]int64, total int64) time.Duration {
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
		if b == len(Bounds) {
			return seconds(Bounds[len(Bounds)-1])
		}
		lower := 0.0
		if b > 0 {
			lower = Bounds[b-1]
		}
		upper := Bounds[b]
		return seconds(lower + (upper-lower)*(rank-float64(below))/float64(n))
	}
	return seconds(Bounds[len(Bounds)-1])
}

// seconds converts seconds to a Duration, rounded to the microsecond.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}
