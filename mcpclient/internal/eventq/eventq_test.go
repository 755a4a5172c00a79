package eventq

import (
	"context"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestOrder: every listener gets every event, in the order published;
// Flush returns once they have; a disposed listener gets no more.
func TestOrder(t *testing.T) {
	q := New[int]()
	defer q.Stop()
	var mu sync.Mutex
	var a, b []int
	disposeA := q.Subscribe(func(n int) { mu.Lock(); a = append(a, n); mu.Unlock() })
	q.Subscribe(func(n int) { mu.Lock(); b = append(b, n); mu.Unlock() })
	for n := range 100 {
		q.Publish(n)
	}
	q.Flush(context.Background())
	mu.Lock()
	want := make([]int, 100)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(a, want) || !slices.Equal(b, want) {
		t.Errorf("delivered a=%v b=%v; want 0..99 to both", a, b)
	}
	mu.Unlock()

	disposeA()
	disposeA() // a second dispose is harmless
	q.Publish(100)
	q.Flush(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(a) != 100 || len(b) != 101 {
		t.Errorf("after dispose: a got %d, b %d; want 100 and 101", len(a), len(b))
	}
}

// TestSlowListener: a listener that blocks holds up neither Publish nor a
// Flush whose context ends; Stop delivers what is queued.
func TestSlowListener(t *testing.T) {
	q := New[string]()
	release := make(chan struct{})
	started := make(chan struct{})
	var got []string
	q.Subscribe(func(s string) {
		if s == "first" {
			close(started)
			<-release
		}
		got = append(got, s)
	})
	q.Publish("first")
	<-started
	q.Publish("second") // does not block
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q.Flush(ctx) // returns: ctx is done
	q.Publish("third")
	close(release)
	q.Stop()
	q.Stop() // idempotent
	if !slices.Equal(got, []string{"first", "second", "third"}) {
		t.Errorf("delivered %v; want first, second, third", got)
	}
	q.Flush(context.Background()) // stopped: returns
}

// TestListenerPublishes: a listener may publish and subscribe; what it
// publishes is delivered after the event it handles.
func TestListenerPublishes(t *testing.T) {
	q := New[int]()
	defer q.Stop()
	var got []int
	q.Subscribe(func(n int) {
		got = append(got, n)
		if n < 3 {
			q.Publish(n + 1)
		}
	})
	q.Publish(0)
	for {
		q.Flush(context.Background())
		q.mu.Lock()
		done := q.delivered == q.published
		q.mu.Unlock()
		if done && len(got) == 4 {
			break
		}
	}
	if !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("delivered %v; want 0 1 2 3", got)
	}
}
