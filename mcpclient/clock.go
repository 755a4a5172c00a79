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
	ceil := r.BaseDelay << min(k, 30)
	if ceil > r.MaxDelay || ceil <= 0 {
		ceil = r.MaxDelay
	}
	return rand.N(ceil)
}
