package policy

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxRate is the largest N of a rate.
const MaxRate = 1_000_000

// Rate is a limit of N calls per period Per. The zero Rate is no limit.
type Rate struct {
	N   int
	Per time.Duration
}

// IsZero reports whether r is no limit.
func (r Rate) IsZero() bool { return r.N == 0 }

func (r Rate) String() string {
	if r.IsZero() {
		return ""
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	return fmt.Sprintf("%d/%s", r.N, unit)
}

// ParseRate parses "N/s", "N/m" or "N/h": N calls a second, a minute or
// an hour, N a decimal integer from 1 to MaxRate without sign, spaces or
// leading zeros.
func ParseRate(s string) (Rate, error) {
	n, unit, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want N/s, N/m or N/h", s)
	}
	var per time.Duration
	switch unit {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	default:
		return Rate{}, fmt.Errorf("rate %q: the period is s, m or h", s)
	}
	if n == "" || len(n) > 7 || n[0] == '0' || strings.TrimLeft(n, "0123456789") != "" {
		return Rate{}, fmt.Errorf("rate %q: N is a whole number from 1 to %d", s, MaxRate)
	}
	v, err := strconv.Atoi(n)
	if err != nil || v > MaxRate {
		return Rate{}, fmt.Errorf("rate %q: N is a whole number from 1 to %d", s, MaxRate)
	}
	return Rate{N: v, Per: per}, nil
}

// Limiter enforces Rates per key (an agent's tool): at most N calls in any
// period Per, spread so that a key that used its N calls at once gets the
// next one Per/N later (the generic cell rate algorithm, which keeps one
// time per key). The zero Limiter is ready; it is safe for concurrent use
// and does no I/O: the time is the caller's.
type Limiter struct {
	// mu guards tat.
	mu  sync.Mutex
	tat map[string]time.Time // theoretical arrival time of the next call
}

// Take counts a call of key at now against r: it returns 0 when the call
// may go (and counts it), else how long to wait before the next one will
// (and counts nothing). A zero r always allows.
func (l *Limiter) Take(key string, r Rate, now time.Time) time.Duration {
	if r.IsZero() {
		return 0
	}
	interval := r.Per / time.Duration(r.N)
	burst := r.Per - interval
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tat == nil {
		l.tat = map[string]time.Time{}
	}
	tat := l.tat[key]
	if tat.Before(now) {
		tat = now
	}
	if ahead := tat.Sub(now); ahead > burst {
		return ahead - burst
	}
	l.tat[key] = tat.Add(interval)
	return 0
}
