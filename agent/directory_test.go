package agent_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
)

// directory is a scripted Directory: it owns what it is told, records
// every claim and release, and checks that an agent is released only once
// its connections are closed (open says whether they are).
type directory struct {
	t      *testing.T
	open   func(ns string) bool
	gate   atomic.Pointer[error]
	epoch  atomic.Int64
	mu     sync.Mutex
	owners map[string]string // ns -> another process, for agents not ours
	log    []string
}

func (d *directory) Claim(ctx context.Context, ns string) (store.Fence, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if owner, ok := d.owners[ns]; ok {
		d.log = append(d.log, "refused "+ns)
		return store.Fence{}, &agent.OwnedElsewhereError{Namespace: ns, Owner: owner, URL: "http://127.0.0.1:1"}
	}
	d.log = append(d.log, "claim "+ns)
	return store.Fence{Namespace: ns, Replica: "me", Epoch: d.epoch.Add(1)}, nil
}

func (d *directory) Release(ctx context.Context, f store.Fence) error {
	if d.open != nil && d.open(f.Namespace) {
		d.t.Errorf("%s released while its connections are open", f.Namespace)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log = append(d.log, "release "+f.Namespace)
	return nil
}

func (d *directory) Gate() error {
	if err := d.gate.Load(); err != nil {
		return *err
	}
	return nil
}

func (d *directory) events() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.log...)
}

// TestHostDirectory: under a Directory, a host claims an agent before it
// opens it and releases it after it closed it (hibernation, Close), opens
// nothing for an agent another process owns, and stops every outbound
// request of its agents while the Directory's gate is closed.
func TestHostDirectory(t *testing.T) {
	ctx := testCtx(t)
	s := serve(t, mcptest.Stateful)
	dir := &directory{t: t, owners: map[string]string{"test-agent/theirs": "other-replica"}}
	h, _ := newHost(t, openSQLite(t, ""), &agent.HostOptions{Directory: dir})
	a, release := use(t, h, "mine")
	if _, err := a.AddMCPServer(ctx, "s", s.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	callEcho(t, a, "s")
	var current atomic.Pointer[agent.Agent]
	current.Store(a)
	dir.open = func(ns string) bool {
		w := current.Load().Watch(1) // ends at once, with ErrClosed, on a closed agent
		defer w.Stop()
		select {
		case <-w.Done():
			return !errors.Is(w.Err(), agent.ErrClosed)
		default:
			return true
		}
	}
	release()
	if !h.Hibernate(ctx, "test-agent", "mine") {
		t.Fatal("not hibernated")
	}
	_, _, err := h.Use(ctx, "test-agent", "theirs")
	var owned *agent.OwnedElsewhereError
	if !errors.Is(err, agent.ErrOwnedElsewhere) || !errors.As(err, &owned) || owned.Owner != "other-replica" {
		t.Errorf("use of an agent owned elsewhere: %v", err)
	}
	if got := h.Awake(); len(got) != 0 {
		t.Errorf("awake: %v", got)
	}

	// Woken again, then the gate closes: nothing goes out.
	a, release = use(t, h, "mine")
	defer release()
	current.Store(a)
	callEcho(t, a, "s")
	stopped := errors.New("lease not trusted")
	dir.gate.Store(&stopped)
	before := s.requests.Load()
	if _, err := a.CallTool(ctx, "s", "echo", map[string]any{"text": "x"}, nil); !errors.Is(err, mcpclient.ErrGateClosed) {
		t.Errorf("call through a closed gate: %v", err)
	}
	if n := s.requests.Load() - before; n != 0 {
		t.Errorf("%d requests sent through a closed gate", n)
	}
	want := []string{"claim test-agent/mine", "release test-agent/mine", "refused test-agent/theirs", "claim test-agent/mine"}
	if got := dir.events(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("directory saw %v, want %v", got, want)
	}
}
