package mcpclient

import "time"

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
