package agent

import (
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

// PauseAuthURLWrite pauses the next queued write of server id's
// authorisation URL after it read the Manager's URL: reached is closed
// there, and the write goes on when release is called. queued is closed
// when another write of that URL is queued after the pause was reached.
func PauseAuthURLWrite(a *Agent, id string) (reached, queued <-chan struct{}, release func()) {
	r, q, rel := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var paused, requeued sync.Once
	a.writes.mu.Lock()
	defer a.writes.mu.Unlock()
	a.testHookAuthURL = func(got string) {
		if got != id {
			return
		}
		paused.Do(func() {
			a.writes.mu.Lock()
			a.writes.onPut = func(key string) {
				if key == "auth:"+id {
					requeued.Do(func() { close(q) })
				}
			}
			a.writes.mu.Unlock()
			close(r)
			<-rel
		})
	}
	return r, q, sync.OnceFunc(func() { close(rel) })
}

// OnCallbackWait calls fn with the server id whenever an OAuth callback
// waits for another callback of the same server to finish.
func OnCallbackWait(a *Agent, fn func(id string)) {
	a.oauth.mu.Lock()
	defer a.oauth.mu.Unlock()
	a.oauth.testHookWait = fn
}

// OnAuthURLWait calls fn whenever an update waits for a pending
// authorisation URL to be stored before it is delivered.
func OnAuthURLWait(a *Agent, fn func()) {
	a.oauth.mu.Lock()
	defer a.oauth.mu.Unlock()
	a.oauth.testHookURLWait = fn
}

// TaskWakesPending returns how many hibernated agents of h wait to be
// woken to poll their tasks.
func TaskWakesPending(h *Host) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.wakes)
}
