package agent

import (
	"context"
	"sync"
	"time"
)

// SetHostClock makes h (and the agents it opens from now on) tell time by
// now.
func SetHostClock(h *Host, now func() time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = now
}

// Sweep hibernates the agents idle for the idle timeout, as the host's
// ticker does, and waits until they are asleep.
func Sweep(h *Host) {
	h.sweep()
	WaitAsleep(h)
}

// WaitAsleep waits for the hibernations in flight to finish.
func WaitAsleep(h *Host) {
	h.mu.Lock()
	var chans []chan struct{}
	for _, ch := range h.sleeping {
		chans = append(chans, ch)
	}
	h.mu.Unlock()
	for _, ch := range chans {
		<-ch
	}
}

// HoldWrites holds the database writes a makes off the event path (a
// pending authorisation's URL, a session to resume) until release is
// called: a slow database.
func HoldWrites(a *Agent) (release func()) {
	ch := make(chan struct{})
	a.writes.put("test:hold", func(context.Context) { <-ch })
	return sync.OnceFunc(func() { close(ch) })
}
