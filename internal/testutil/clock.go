package testutil

import (
	"sync"
	"time"
)

// Clock is an mcpclient.Clock whose waits end only when the test says so
// (Fire). Its time stands still at the Unix epoch.
type Clock struct {
	mu      sync.Mutex
	waiters []chan time.Time
	waiting chan struct{}
}

// NewClock returns a Clock that no wait has been asked of yet.
func NewClock() *Clock { return &Clock{waiting: make(chan struct{}, 100)} }

// Now returns the Unix epoch.
func (c *Clock) Now() time.Time { return time.Unix(0, 0) }

// After returns a channel that receives once Fire is called.
func (c *Clock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	c.waiters = append(c.waiters, ch)
	c.mu.Unlock()
	c.waiting <- struct{}{}
	return ch
}

// Waiting receives a value each time After is called (up to 100 not yet
// received), so that a test knows a wait has begun before it fires it.
func (c *Clock) Waiting() <-chan struct{} { return c.waiting }

// Fire ends every wait in progress.
func (c *Clock) Fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.waiters {
		ch <- time.Unix(0, 0)
	}
	c.waiters = nil
}
