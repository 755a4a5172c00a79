// Package backoff computes the waits of package mcpclient's Manager
// between connection attempts (mcpclient.RetryOptions) and between the
// starts of a stdio server's process.
//
// # Usage
//
// [Check] validates a [Policy] and fills in its defaults. [Full] is the
// wait before the next of a server's retries, [Equal] that before a
// background retry once they are spent; a [Pacer] spaces the starts of a
// process that keeps dying soon after it starts.
//
// # Concurrency
//
// The functions are pure but for their randomness; a Pacer is safe for
// concurrent use.
//
// # Errors
//
// Check reports the field of a policy that is out of range.
package backoff

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// Policy is how a server's connection attempts are retried: the fields
// of mcpclient.RetryOptions, which documents them, in the same order.
type Policy struct {
	MaxAttempts        int
	BaseDelay          time.Duration
	MaxDelay           time.Duration
	BackgroundMaxDelay time.Duration
	DisableBackground  bool
}

// Check validates p and returns it with its zero fields filled in; nil
// means every default.
func Check(p *Policy) (Policy, error) {
	out := Policy{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 5 * time.Second,
		BackgroundMaxDelay: 3 * time.Minute}
	if p == nil {
		return out, nil
	}
	switch {
	case p.MaxAttempts < 0:
		return out, errors.New("retry.MaxAttempts must be >= 1")
	case p.BaseDelay < 0:
		return out, errors.New("retry.BaseDelay must be > 0")
	case p.MaxDelay < 0:
		return out, errors.New("retry.MaxDelay must be > 0")
	case p.BackgroundMaxDelay < 0:
		return out, errors.New("retry.BackgroundMaxDelay must be > 0")
	}
	out.DisableBackground = p.DisableBackground
	if p.BackgroundMaxDelay > 0 {
		out.BackgroundMaxDelay = p.BackgroundMaxDelay
	}
	if p.MaxAttempts > 0 {
		out.MaxAttempts = p.MaxAttempts
	}
	if p.BaseDelay > 0 {
		out.BaseDelay = p.BaseDelay
	}
	if p.MaxDelay > 0 {
		out.MaxDelay = p.MaxDelay
	}
	if out.BaseDelay > out.MaxDelay {
		return out, errors.New("retry.BaseDelay must be <= retry.MaxDelay")
	}
	out.BackgroundMaxDelay = max(out.BackgroundMaxDelay, out.MaxDelay)
	return out, nil
}

// Doubled returns base × 2^k, or limit when that is more. It never
// overflows: a shifted duration would wrap around to any value, a small
// one included.
func Doubled(base time.Duration, k int, limit time.Duration) time.Duration {
	if k >= 63 || base > limit>>k {
		return limit
	}
	return base << k
}

// Full returns the wait before attempt k+1, k being the 1-based number of
// the attempt that failed: a random duration in [0, min(2^k × base,
// limit)) ("full jitter").
func Full(base time.Duration, k int, limit time.Duration) time.Duration {
	return rand.N(Doubled(base, k, limit))
}

// Equal returns a wait of about min(2^k × base, limit) with equal jitter
// (a random duration in [d/2, d]), so that servers that went down together
// are not all retried at once.
func Equal(base time.Duration, k int, limit time.Duration) time.Duration {
	d := Doubled(base, k, limit)
	return d/2 + rand.N(d/2+1)
}

// QuickRestart is how soon after the previous start a start counts as
// quick (Pacer).
const QuickRestart = 10 * time.Second

// Pacer paces the starts of one process. A process that dies soon after
// each start, even after a good handshake (which resets the retry
// backoff), would otherwise be restarted at once, again and again: a start
// within QuickRestart of the previous one waits a doubling delay first, so
// that the restart rate stays bounded; a process that ran for a while is
// started again at once. Its zero value is ready to use.
type Pacer struct {
	// mu guards the fields below.
	mu    sync.Mutex
	last  time.Time // when the process last started
	quick int       // starts in a row that each followed the one before quickly
}

// Delay returns the wait before a start at now: zero, or base doubled for
// each quick start in a row, up to limit. Call Started when the wait is
// over.
func (p *Pacer) Delay(now time.Time, base, limit time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.last.IsZero() && now.Sub(p.last) < QuickRestart {
		p.quick++
	} else {
		p.quick = 0
	}
	if p.quick == 0 {
		return 0
	}
	return Doubled(base, p.quick, limit)
}

// Started notes that the process starts at now.
func (p *Pacer) Started(now time.Time) {
	p.mu.Lock()
	p.last = now
	p.mu.Unlock()
}
