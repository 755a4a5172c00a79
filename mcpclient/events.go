package mcpclient

import (
	"context"
	"slices"
	"sync"
)

// State is the connection state of one server, as in the seed.
type State string

const (
	// StateConnecting: a handshake is under way, or about to be (every
	// registered server starts here).
	StateConnecting State = "connecting"
	// StateAuthenticating: the server answered 401 (or 403 with an OAuth
	// error); the connection waits for authorisation.
	StateAuthenticating State = "authenticating"
	// StateConnected: the session is up; its catalog is not (yet) known.
	StateConnected State = "connected"
	// StateDiscovering: the catalog is being fetched.
	StateDiscovering State = "discovering"
	// StateReady: the session is up and its catalog is known.
	StateReady State = "ready"
	// StateFailed: the last handshake failed; see the server's Error.
	StateFailed State = "failed"
	// StateNotConnected: the server is registered but has no connection,
	// after CloseConnection. (The seed reports this pseudo-state for stored
	// servers without a connection.)
	StateNotConnected State = "not-connected"
)

// EventKind says what an Event is about.
type EventKind string

const (
	EventRegistered       EventKind = "registered"
	EventStateChanged     EventKind = "state"
	EventToolsChanged     EventKind = "tools"
	EventPromptsChanged   EventKind = "prompts"
	EventResourcesChanged EventKind = "resources"
	EventRemoved          EventKind = "removed"
)

// An Event reports a change to one server.
type Event struct {
	Kind     EventKind
	ServerID string
	// State is the server's state after the change.
	State State
	// Err is the error that came with the change, if any (a failed
	// handshake or discovery).
	Err error
}

// dispatcher delivers events in order, on its own goroutine, so that a
// slow listener never blocks the Manager.
type dispatcher struct {
	mu        sync.Mutex
	queue     []Event
	published uint64   // events published so far
	delivered uint64   // events delivered so far
	waiters   []waiter // flush calls waiting for delivery
	wake      chan struct{}
	listeners []listener // in subscription order
	next      int
	done      chan struct{}
	stopped   chan struct{}
}

type listener struct {
	id int
	fn func(Event)
}

func newDispatcher() *dispatcher {
	d := &dispatcher{
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go d.run()
	return d
}

// waiter is a flush waiting for the events up to seq to be delivered.
type waiter struct {
	seq  uint64
	done chan struct{}
}

func (d *dispatcher) publish(ev Event) {
	d.mu.Lock()
	d.queue = append(d.queue, ev)
	d.published++
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dispatcher) subscribe(fn func(Event)) (dispose func()) {
	d.mu.Lock()
	id := d.next
	d.next++
	d.listeners = append(d.listeners, listener{id, fn})
	d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			d.listeners = slices.DeleteFunc(slices.Clone(d.listeners), func(l listener) bool { return l.id == id })
			d.mu.Unlock()
		})
	}
}

func (d *dispatcher) run() {
	defer close(d.stopped)
	for {
		select {
		case <-d.wake:
		case <-d.done:
			d.drain()
			return
		}
		d.drain()
	}
}

// drain delivers every queued event to the listeners present at the time.
func (d *dispatcher) drain() {
	for {
		d.mu.Lock()
		if len(d.queue) == 0 {
			d.mu.Unlock()
			return
		}
		ev := d.queue[0]
		d.queue = d.queue[1:]
		ls := d.listeners // never mutated in place
		d.mu.Unlock()
		for _, l := range ls {
			l.fn(ev)
		}
		d.mu.Lock()
		d.delivered++
		d.waiters = slices.DeleteFunc(d.waiters, func(w waiter) bool {
			if w.seq <= d.delivered {
				close(w.done)
				return true
			}
			return false
		})
		d.mu.Unlock()
	}
}

// flush waits until every event published so far has been delivered, or
// ctx is done.
func (d *dispatcher) flush(ctx context.Context) {
	d.mu.Lock()
	if d.delivered >= d.published {
		d.mu.Unlock()
		return
	}
	w := waiter{seq: d.published, done: make(chan struct{})}
	d.waiters = append(d.waiters, w)
	d.mu.Unlock()
	select {
	case <-w.done:
	case <-ctx.Done():
	case <-d.stopped:
	}
}

// stop delivers what is queued and stops the goroutine.
func (d *dispatcher) stop() {
	select {
	case <-d.done:
	default:
		close(d.done)
	}
	<-d.stopped
}
