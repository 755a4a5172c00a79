// Package eventq delivers events to listeners in the order they were
// published, on a goroutine of its own, so that a slow listener never
// blocks the publisher: package mcpclient's Manager publishes its events
// (a server registered, its state changed, its catalog changed) through
// one.
//
// # Usage
//
// [New] starts the delivering goroutine; [Queue.Stop] delivers what is
// queued and stops it. [Queue.Subscribe] adds a listener, [Queue.Publish]
// queues an event for the listeners present when it is delivered, and
// [Queue.Flush] waits until everything published so far is delivered.
//
// # Concurrency
//
// A Queue is safe for concurrent use. Listeners run one at a time, on the
// queue's goroutine, and may publish and subscribe; a listener that calls
// Flush waits for itself (until its context ends).
//
// # Errors
//
// None: publishing never fails; events published after Stop are not
// delivered.
package eventq

import (
	"context"
	"slices"
	"sync"
)

// Queue delivers events of type E in order, on its own goroutine.
type Queue[E any] struct {
	// mu guards the fields below.
	mu        sync.Mutex
	queue     []E
	published uint64        // events published so far
	delivered uint64        // events delivered so far
	waiters   []waiter      // Flush calls waiting for delivery
	listeners []listener[E] // in subscription order; never mutated in place
	next      int

	wake    chan struct{}
	done    chan struct{}
	stopped chan struct{}
}

type listener[E any] struct {
	id int
	fn func(E)
}

// waiter is a Flush waiting for the events up to seq to be delivered.
type waiter struct {
	seq  uint64
	done chan struct{}
}

// New returns a Queue and starts its goroutine; Stop stops it.
func New[E any]() *Queue[E] {
	q := &Queue[E]{
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go q.run()
	return q
}

// Publish queues ev for delivery.
func (q *Queue[E]) Publish(ev E) {
	q.mu.Lock()
	q.queue = append(q.queue, ev)
	q.published++
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Subscribe adds fn as a listener of the events delivered from now on.
// dispose removes it; it may be called more than once.
func (q *Queue[E]) Subscribe(fn func(E)) (dispose func()) {
	q.mu.Lock()
	id := q.next
	q.next++
	q.listeners = append(q.listeners, listener[E]{id, fn})
	q.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.listeners = slices.DeleteFunc(slices.Clone(q.listeners), func(l listener[E]) bool { return l.id == id })
			q.mu.Unlock()
		})
	}
}

func (q *Queue[E]) run() {
	defer close(q.stopped)
	for {
		select {
		case <-q.wake:
		case <-q.done:
			q.drain()
			return
		}
		q.drain()
	}
}

// drain delivers every queued event to the listeners present at the time.
func (q *Queue[E]) drain() {
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			q.mu.Unlock()
			return
		}
		ev := q.queue[0]
		q.queue = q.queue[1:]
		ls := q.listeners
		q.mu.Unlock()
		for _, l := range ls {
			l.fn(ev)
		}
		q.mu.Lock()
		q.delivered++
		q.waiters = slices.DeleteFunc(q.waiters, func(w waiter) bool {
			if w.seq <= q.delivered {
				close(w.done)
				return true
			}
			return false
		})
		q.mu.Unlock()
	}
}

// Flush waits until every event published so far has been delivered, or
// ctx is done, or the queue has stopped.
func (q *Queue[E]) Flush(ctx context.Context) {
	q.mu.Lock()
	if q.delivered >= q.published {
		q.mu.Unlock()
		return
	}
	w := waiter{seq: q.published, done: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	q.mu.Unlock()
	select {
	case <-w.done:
	case <-ctx.Done():
	case <-q.stopped:
	}
}

// Stop delivers what is queued and stops the goroutine. It is idempotent
// but must not be called concurrently with itself.
func (q *Queue[E]) Stop() {
	select {
	case <-q.done:
	default:
		close(q.done)
	}
	<-q.stopped
}
