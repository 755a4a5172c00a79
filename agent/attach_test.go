package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// part is an Attachment that records its Close and asks pending
// questions.
type part struct {
	closed  chan struct{}
	pending int
}

func (p *part) Close(ctx context.Context) error {
	close(p.closed)
	return nil
}

func (p *part) PendingInputs() int { return p.pending }

// TestAttach: an agent makes one attachment per key, once, however many
// ask at the same moment; its pending questions count in Busyness.Inputs;
// the agent closes it first when it closes, and makes none after.
func TestAttach(t *testing.T) {
	ctx := testCtx(t)
	st, err := sqlite.Open(ctx, sqlite.Memory, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := agent.Open(ctx, st, "test", "attach", nil)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{}
	var made int
	var mu sync.Mutex
	newPart := func(a *agent.Agent) agent.Attachment {
		mu.Lock()
		made++
		mu.Unlock()
		return &part{closed: make(chan struct{}), pending: 2}
	}
	var wg sync.WaitGroup
	got := make([]agent.Attachment, 8)
	for i := range got {
		wg.Go(func() { got[i] = a.Attach(key{}, newPart) })
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatalf("two attachments under one key: %p %p", g, got[0])
		}
	}
	if made != 1 {
		t.Errorf("made %d times, want once", made)
	}
	if b := a.Busyness(); b.Inputs != 2 || b.String() != "idle" {
		t.Errorf("busyness: %+v %q", b, b.String())
	}
	p := got[0].(*part)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.closed:
	default:
		t.Fatal("the agent's Close did not close its attachment")
	}
	if a.Attach(key{}, newPart) != nil || made != 1 {
		t.Errorf("a closed agent made an attachment (%d made)", made)
	}
}
