package agent

import (
	"context"
	"sync"
	"time"
)

// writeTimeout bounds one queued database write.
const writeTimeout = 30 * time.Second

// writes keeps the agent's database writes off the event path: Manager
// listeners queue a write under a key, the latest write of a key replacing
// one not yet made, and a goroutine started on demand makes them in the
// order their keys were first queued, then ends. An agent at rest has no
// goroutine here.
type writes struct {
	mu      sync.Mutex
	queue   map[string]func(context.Context)
	order   []string
	drained chan struct{} // closed when the running goroutine ends; nil when none runs

	onPut func(key string) // set by tests: called by put, under mu
}

// put queues fn under key.
func (w *writes) put(key string, fn func(context.Context)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil {
		w.queue = map[string]func(context.Context){}
	}
	if _, ok := w.queue[key]; !ok {
		w.order = append(w.order, key)
	}
	w.queue[key] = fn
	if w.onPut != nil {
		w.onPut(key)
	}
	if w.drained == nil {
		w.drained = make(chan struct{})
		go w.run(w.drained)
	}
}

func (w *writes) run(drained chan struct{}) {
	defer close(drained)
	for {
		w.mu.Lock()
		if len(w.order) == 0 {
			w.drained = nil
			w.mu.Unlock()
			return
		}
		key := w.order[0]
		w.order = w.order[1:]
		fn := w.queue[key]
		delete(w.queue, key)
		w.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		fn(ctx)
		cancel()
	}
}

// flush waits until every write queued so far is made, or ctx is done.
func (w *writes) flush(ctx context.Context) {
	for {
		w.mu.Lock()
		d := w.drained
		w.mu.Unlock()
		if d == nil {
			return
		}
		select {
		case <-d:
		case <-ctx.Done():
			return
		}
	}
}
