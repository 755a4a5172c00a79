package agent

import (
	"errors"
	"slices"
	"sync"
)

// Update is what a [Watcher] receives after the agent changed.
type Update struct {
	// State is the agent's MCPServersState after the change, or nil when
	// only the pending elicitations changed. Watchers share it: do not
	// modify it.
	State *MCPServersState
	// Elicitations are the pending elicitations, oldest first, when they
	// changed (an empty, non-nil slice when none is left), and in a
	// watcher's first update when any are pending; nil otherwise.
	Elicitations []Elicitation
}

// ErrWatcherTooSlow ends a watch whose buffer was full when an update
// was due: a watcher that does not keep up is dropped rather than
// allowed to hold the agent back.
var ErrWatcherTooSlow = errors.New("agent: the watcher fell behind")

// ErrClosed is returned by the methods of an agent that was closed (or
// hibernated by its Host), and ends its watches.
var ErrClosed = errors.New("agent: closed")

// Watcher is one watch of an agent's changes (see [Agent.Watch]).
type Watcher struct {
	u    *updates
	c    chan Update
	done chan struct{}
	err  error // set before done is closed
}

// Updates returns the channel of updates. Its first update has the state
// at the time the watch started; later ones follow every change, several
// quick changes possibly coalesced into one.
func (w *Watcher) Updates() <-chan Update { return w.c }

// Done is closed when the watch ends: Stop, the agent closed, or the
// watcher dropped as too slow. Updates already buffered stay readable.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Err says why the watch ended, once Done is closed: ErrWatcherTooSlow,
// ErrClosed, or nil after Stop.
func (w *Watcher) Err() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// Stop ends the watch. It is idempotent.
func (w *Watcher) Stop() {
	w.u.mu.Lock()
	defer w.u.mu.Unlock()
	w.u.dropLocked(w, nil)
}

// Watch starts a watch of the agent's state and pending elicitations:
// a snapshot first, then an update after every change. buffer (at least
// 1; zero means 16) is how many updates may wait unread; a watcher with
// a full buffer when an update is due is dropped (Err is
// ErrWatcherTooSlow) instead of blocking the agent. A watch keeps its
// agent awake (see [Host]) until it ends. On a closed agent the watch
// has ended already, with ErrClosed. An update that shows a server
// authenticating comes after its authorization URL is stored (waiting at
// most a few seconds for a store that does not answer), so that a watcher
// may read the store on it.
func (a *Agent) Watch(buffer int) *Watcher {
	if buffer <= 0 {
		buffer = 16
	}
	return a.updates.watch(buffer)
}

// OnMCPUpdate calls fn with the new MCPServersState after every change
// (registration, connection, discovery, list_changed, authorisation,
// removal): the seed's onMcpUpdate. Changes that come in quick succession
// may be reported once, with the latest state. Calls are made in order on
// one goroutine; fn must not block. The result removes fn.
func (a *Agent) OnMCPUpdate(fn func(MCPServersState)) (dispose func()) {
	return a.updates.subscribe(fn)
}

// updates turns changes (Manager events, the agent's own, the pending
// elicitations) into one computed state per change, handed to every
// OnMCPUpdate listener and watcher. One goroutine computes and delivers,
// so that everyone sees states in order, a new watcher's first one
// computed after it joined; delivery to watchers never blocks.
type updates struct {
	a    *Agent
	wake chan struct{} // capacity 1
	done chan struct{} // closed when run returns

	// mu guards the fields below.
	mu            sync.Mutex
	changed       bool // the state changed since the last delivery
	elicitChanged bool // the pending elicitations changed
	listeners     map[int]func(MCPServersState)
	next          int
	watchers      map[*Watcher]struct{} // had their first update
	joining       []*Watcher            // waiting for their first update
	stopped       bool
}

func newUpdates(a *Agent) *updates {
	u := &updates{a: a, wake: make(chan struct{}, 1), done: make(chan struct{}),
		listeners: map[int]func(MCPServersState){}, watchers: map[*Watcher]struct{}{}}
	a.m.OnServerStateChanged(u.stateChanged)
	go u.run()
	return u
}

// stateChanged notes that the state changed.
func (u *updates) stateChanged() { u.note(&u.changed) }

// elicitationsChanged notes that the pending elicitations changed.
func (u *updates) elicitationsChanged() { u.note(&u.elicitChanged) }

func (u *updates) note(flag *bool) {
	u.mu.Lock()
	if u.stopped {
		u.mu.Unlock()
		return
	}
	*flag = true
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

func (u *updates) subscribe(fn func(MCPServersState)) func() {
	u.mu.Lock()
	id := u.next
	u.next++
	u.listeners[id] = fn
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		delete(u.listeners, id)
		u.mu.Unlock()
	}
}

func (u *updates) watch(buffer int) *Watcher {
	w := &Watcher{u: u, c: make(chan Update, buffer), done: make(chan struct{})}
	u.mu.Lock()
	if u.stopped {
		w.err = ErrClosed
		close(w.done)
		u.mu.Unlock()
		return w
	}
	u.joining = append(u.joining, w)
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
	return w
}

// watching reports how many watches are open.
func (u *updates) watching() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.watchers) + len(u.joining)
}

func (u *updates) run() {
	defer close(u.done)
	for range u.wake {
		u.mu.Lock()
		if u.stopped {
			u.mu.Unlock()
			return
		}
		// The joining watchers stay in u.joining until they had their
		// first update: counted by watching() all along, so that their
		// agent is busy (and cannot be hibernated) in between.
		changed, elicitChanged, joining := u.changed, u.elicitChanged, slices.Clone(u.joining)
		u.changed, u.elicitChanged = false, false
		fns := make([]func(MCPServersState), 0, len(u.listeners))
		for _, fn := range u.listeners {
			fns = append(fns, fn)
		}
		watched := len(u.watchers) > 0
		u.mu.Unlock()
		// The state is computed after the flags were taken: it includes
		// every change they report. A pending authorisation it shows is
		// stored first: whoever reads the store on it finds the URL.
		var state *MCPServersState
		if len(joining) > 0 || (changed && (len(fns) > 0 || watched)) {
			u.a.awaitAuthURLs()
			st := u.a.MCPServers()
			state = &st
		}
		var pending []Elicitation
		if len(joining) > 0 || (elicitChanged && watched) {
			pending = u.a.pending.list()
		}
		if changed && state != nil {
			for _, fn := range fns {
				fn(*state)
			}
		}
		u.mu.Lock()
		if u.stopped {
			u.mu.Unlock()
			return
		}
		for w := range u.watchers {
			up := Update{}
			if changed {
				up.State = state
			}
			if elicitChanged {
				up.Elicitations = pending
			}
			if up.State != nil || up.Elicitations != nil {
				u.deliverLocked(w, up)
			}
		}
		u.joining = slices.DeleteFunc(u.joining, func(w *Watcher) bool { return slices.Contains(joining, w) })
		for _, w := range joining {
			select {
			case <-w.done:
				continue // stopped before its first update
			default:
			}
			up := Update{State: state}
			if len(pending) > 0 {
				up.Elicitations = pending
			}
			if u.deliverLocked(w, up) {
				u.watchers[w] = struct{}{}
			}
		}
		u.mu.Unlock()
	}
}

// deliverLocked queues up for w, or drops w when its buffer is full.
func (u *updates) deliverLocked(w *Watcher, up Update) bool {
	select {
	case w.c <- up:
		return true
	default:
		u.dropLocked(w, ErrWatcherTooSlow)
		return false
	}
}

// dropLocked ends the watch w with err, once.
func (u *updates) dropLocked(w *Watcher, err error) {
	delete(u.watchers, w)
	for i, j := range u.joining {
		if j == w {
			u.joining = append(u.joining[:i:i], u.joining[i+1:]...)
			break
		}
	}
	select {
	case <-w.done:
	default:
		w.err = err
		close(w.done)
	}
}

// stop ends every watch with ErrClosed and the goroutine.
func (u *updates) stop() {
	u.mu.Lock()
	if !u.stopped {
		u.stopped = true
		for w := range u.watchers {
			u.dropLocked(w, ErrClosed)
		}
		for _, w := range u.joining {
			u.dropLocked(w, ErrClosed)
		}
		close(u.wake)
	}
	u.mu.Unlock()
	<-u.done
}
