//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package roots

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// owner runs the Syncer's goroutines and waits for them, as the Manager
// does; closed refuses new ones.
type owner struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (o *owner) spawn(fn func()) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.wg.Go(fn)
	return true
}

func (o *owner) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.wg.Wait()
}

func uris(list []*mcp.Root) []string {
	var out []string
	for _, r := range list {
		out = append(out, r.URI+" "+r.Name)
	}
	return out
}

// TestSyncer: a client connected to a real go-sdk server starts with the
// roots configured when it was built, and the server sees each later
// configuration once the Syncer is done (Wait), having been told of the
// change.
func TestSyncer(t *testing.T) {
	ctx := context.Background()
	changed := make(chan struct{}, 16)
	server := mcp.NewServer(&mcp.Implementation{Name: "s"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { changed <- struct{}{} },
	})
	var mu sync.Mutex
	configured := Sorted([]*mcp.Root{{URI: "file:///b", Name: "b"}, {URI: "file:///a", Name: "a"}})
	current := func() []*mcp.Root {
		mu.Lock()
		defer mu.Unlock()
		return configured
	}
	var o owner
	client := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil)
	s := NewSyncer(client, current(), current, o.spawn)

	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	// roots/list is a legacy request: a 2026-07-28 server asks for roots
	// through input requests instead.
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: transport.ProtocolLegacy})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	check := func(want []string) {
		t.Helper()
		res, err := ss.ListRoots(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, uris(res.Roots)); diff != "" {
			t.Errorf("roots the server sees (-want +got):\n%s", diff)
		}
	}
	check([]string{"file:///a a", "file:///b b"})

	mu.Lock()
	configured = Sorted([]*mcp.Root{{URI: "file:///a", Name: "renamed"}, {URI: "file:///c", Name: "c"}})
	mu.Unlock()
	s.Changed()
	s.Changed() // while the first may be at work: one more round at most
	if err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	o.close()
	select {
	case <-changed:
	case <-time.After(10 * time.Second): // a safety net: go-sdk notifies on its own goroutine
		t.Fatal("the server was not told the roots changed")
	}
	check([]string{"file:///a renamed", "file:///c c"})

	// Once the owner is closed, nothing is started and nobody waits.
	s.Changed()
	if err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSortedClone(t *testing.T) {
	in := []*mcp.Root{{URI: "file:///z"}, nil, {URI: "file:///a"}}
	out := Sorted(in)
	if diff := cmp.Diff([]string{"file:///a ", "file:///z "}, uris(out)); diff != "" {
		t.Errorf("Sorted (-want +got):\n%s", diff)
	}
	out[0].Name = "changed"
	if in[2].Name != "" {
		t.Error("Sorted shares its roots with its input")
	}
}
