package agent_test

import (
	"errors"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestWatch: a watch gets the state first, then an update after every
// change; a watcher that does not read is dropped once its buffer is full
// (ErrWatcherTooSlow) while the others go on; closing the agent ends the
// rest with ErrClosed, and a watch of a closed agent has ended already.
func TestWatch(t *testing.T) {
	ctx := testCtx(t)
	s := serve(t, mcptest.Stateless)
	st := openSQLite(t, "")
	a, err := agent.Open(ctx, st, "TestAgent", "watched", nil)
	if err != nil {
		t.Fatal(err)
	}
	slow := a.Watch(2)  // never read
	fast := a.Watch(64) // read all along
	first := <-fast.Updates()
	if first.State == nil || len(first.State.Servers) != 0 {
		t.Fatalf("first update %+v, want the empty state", first)
	}
	read := make(chan int)
	stop := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case up := <-fast.Updates():
				if up.State == nil {
					t.Errorf("update %d has no state", n)
				}
				n++
			case <-stop:
				read <- n
				return
			}
		}
	}()
	if _, err := a.AddMCPServer(ctx, "s", s.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	// Changes until the slow watcher is gone.
	for dropped := false; !dropped; {
		a.RemoveMCPServer(ctx, "no-such-server") // a change
		select {
		case <-slow.Done():
			dropped = true
		case <-ctx.Done():
			t.Fatal("the slow watcher was never dropped")
		default:
		}
	}
	if !errors.Is(slow.Err(), agent.ErrWatcherTooSlow) {
		t.Fatalf("slow watcher ended with %v", slow.Err())
	}
	close(stop)
	if n := <-read; n < 2 {
		t.Errorf("the fast watcher read %d updates", n)
	}
	select {
	case <-fast.Done():
		t.Fatalf("the fast watcher was dropped too: %v", fast.Err())
	default:
	}
	if !a.Busy() {
		t.Error("a watched agent is not busy")
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-fast.Done()
	if !errors.Is(fast.Err(), agent.ErrClosed) {
		t.Errorf("after Close: %v", fast.Err())
	}
	late := a.Watch(0)
	<-late.Done()
	if !errors.Is(late.Err(), agent.ErrClosed) {
		t.Errorf("a watch of a closed agent: %v", late.Err())
	}
}

// TestWatchBusyWhileJoining: a watch keeps its agent busy from Watch on,
// also while its first update is being computed (the watcher has left the
// joining ones and is not yet among those with a first update).
func TestWatchBusyWhileJoining(t *testing.T) {
	a := openAgent(t, openSQLite(t, ""), "joining", nil)
	for i := range 2000 {
		w := a.Watch(1)
		for first := false; !first; {
			select {
			case <-w.Updates():
				first = true
			default:
			}
			if !a.Busy() {
				w.Stop()
				t.Fatalf("watch %d: a watched agent is not busy before its first update", i)
			}
		}
		w.Stop()
	}
}
