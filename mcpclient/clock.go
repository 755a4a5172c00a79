package mcpclient

import (
	"math/rand/v2"
	"time"
)

// A Clock tells time and waits. The Manager uses it for retry backoff, so
// that tests can drive reconnection deterministically.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// backoff returns the wait before attempt k+1, k being the 1-based number of
// the attempt that failed: a random duration in [0, min(2^k × base, max)).
func backoff(r RetryOptions, k int) time.Duration {
	return rand.N(doubled(r.BaseDelay, k, r.MaxDelay))
}

// doubled returns base × 2^k, or limit when that is more. It never
// overflows: a shifted duration would wrap around to any value, a small
// one included.
func doubled(base time.Duration, k int, limit time.Duration) time.Duration {
	if k >= 63 || base > limit>>k {
		return limit
	}
	return base << k
}

// backgroundDelay returns the wait before background attempt n (1-based),
// made after the r.MaxAttempts attempts were spent: the backoff goes on
// doubling from where they left it, capped at r.BackgroundMaxDelay, with
// equal jitter (a random duration in [d/2, d)) so that servers that went
// down together are not all retried at once.
func backgroundDelay(r RetryOptions, n int) time.Duration {
	d := doubled(r.BaseDelay, r.MaxAttempts+n-1, r.BackgroundMaxDelay)
	return d/2 + rand.N(d/2+1)
}
