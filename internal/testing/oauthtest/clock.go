package oauthtest

import (
	"sync"
	"time"
)

// Clock is a clock that moves only when told, for Options.Now (and for the
// client under test), so that codes and tokens expire without sleeping.
type Clock struct {
	// mu guards now.
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock showing start, or 2026-01-01T00:00:00Z when
// start is zero.
func NewClock(start time.Time) *Clock {
	if start.IsZero() {
		start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &Clock{now: start}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
