package mcpclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder collects the events of a Manager.
type recorder struct {
	mu     sync.Mutex
	events []mcpclient.Event
	pos    int // waitFor looks at events from here on
	notify chan struct{}
}

func record(m *mcpclient.Manager) *recorder {
	r := &recorder{notify: make(chan struct{}, 1000)}
	m.Subscribe(func(ev mcpclient.Event) {
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
		r.notify <- struct{}{}
	})
	return r
}

// states returns the states the server went through, in order.
func (r *recorder) states(id string) []mcpclient.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []mcpclient.State
	for _, ev := range r.events {
		if ev.ServerID == id && (ev.Kind == mcpclient.EventStateChanged || ev.Kind == mcpclient.EventRegistered) {
			out = append(out, ev.State)
		}
	}
	return out
}

// waitFor waits until an event after the one the previous waitFor
// matched satisfies ok.
func (r *recorder) waitFor(t *testing.T, what string, ok func(mcpclient.Event) bool) mcpclient.Event {
	t.Helper()
	timeout := time.After(20 * time.Second) // safety net only
	for {
		r.mu.Lock()
		for ; r.pos < len(r.events); r.pos++ {
			if ev := r.events[r.pos]; ok(ev) {
				r.pos++
				r.mu.Unlock()
				return ev
			}
		}
		r.mu.Unlock()
		select {
		case <-r.notify:
		case <-timeout:
			t.Fatalf("timed out waiting for %s; events: %+v", what, r.events)
		}
	}
}

func stateIs(id string, s mcpclient.State) func(mcpclient.Event) bool {
	return func(ev mcpclient.Event) bool {
		return ev.ServerID == id && ev.Kind == mcpclient.EventStateChanged && ev.State == s
	}
}

// TestStateMachine walks a server through every state of the seed's
// machine and checks the events.
func TestStateMachine(t *testing.T) {
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	m := newManager(t, nil)
	rec := record(m)
	ctx := testCtx(t)

	if _, err := m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{Name: "S", URL: hs.URL}); err != nil {
		t.Fatal(err)
	}
	if info, _ := m.Server("s1"); info.State != mcpclient.StateConnecting {
		t.Errorf("registered server is %s, want connecting", info.State)
	}
	// Registering the id again keeps the one connection.
	if _, err := m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{Name: "Other", URL: hs.URL}); err != nil {
		t.Fatal(err)
	}
	if got := len(m.Servers()); got != 1 {
		t.Fatalf("%d servers after registering one id twice", got)
	}
	if info, _ := m.Server("s1"); info.Name != "S" {
		t.Errorf("second registration replaced the first: name %q", info.Name)
	}

	// Discovery before connecting is skipped.
	if d, _ := m.DiscoverIfConnected(ctx, "s1", nil); d.Success || d.Err == nil {
		t.Errorf("discovery of an unconnected server: %+v", d)
	}
	if r, _ := m.ConnectToServer(ctx, "s1"); r.State != mcpclient.StateConnected {
		t.Fatalf("connect: %+v", r)
	}
	if d, _ := m.DiscoverIfConnected(ctx, "s1", nil); !d.Success {
		t.Fatalf("discover: %+v", d)
	}
	// A discovery from ready is a manual refresh.
	srv.AddTool("extra")
	if d, _ := m.DiscoverIfConnected(ctx, "s1", nil); !d.Success || d.State != mcpclient.StateReady {
		t.Fatalf("refresh: %+v", d)
	}
	if !slices.Contains(toolNames(m.ListTools(mcpclient.Filter{})), "s1/extra") {
		t.Errorf("manual refresh did not pick up the new tool")
	}
	// A failed discovery returns to connected, not failed.
	hs.SetFault(http.StatusBadGateway)
	if d, _ := m.DiscoverIfConnected(ctx, "s1", nil); d.Success || d.State != mcpclient.StateConnected || d.Err == nil {
		t.Errorf("failed discovery: %+v; want connected with an error", d)
	}
	hs.SetFault(0)
	if d, _ := m.DiscoverIfConnected(ctx, "s1", nil); !d.Success {
		t.Fatalf("discovery after the fault: %+v", d)
	}
	// CloseConnection keeps the registration.
	if err := m.CloseConnection(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if info, ok := m.Server("s1"); !ok || info.State != mcpclient.StateNotConnected {
		t.Errorf("after CloseConnection: %+v, %v", info.State, ok)
	}
	if got := m.ListTools(mcpclient.Filter{}); len(got) != 0 {
		t.Errorf("closed server still lists %d tools", len(got))
	}
	if _, err := m.CallTool(ctx, "s1", "echo", nil, nil); !errors.Is(err, mcpclient.ErrNotConnected) {
		t.Errorf("call on a closed server: %v", err)
	}
	// A 500 fails the handshake, with the error kept.
	hs.SetFault(http.StatusInternalServerError)
	if r, _ := m.ConnectToServer(ctx, "s1"); r.State != mcpclient.StateFailed || r.Err == nil {
		t.Errorf("connect to a failing server: %+v", r)
	}
	// A 401 authenticates.
	hs.SetFault(http.StatusUnauthorized)
	if r, _ := m.ConnectToServer(ctx, "s1"); r.State != mcpclient.StateAuthenticating {
		t.Errorf("connect to a server that wants auth: %+v", r)
	}
	hs.SetFault(0)
	if r, _ := m.ConnectToServer(ctx, "s1"); r.State != mcpclient.StateConnected {
		t.Errorf("reconnect: %+v", r)
	}
	if err := m.RemoveServer(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Server("s1"); ok {
		t.Errorf("removed server is still registered")
	}
	if err := m.RemoveServer(ctx, "unknown"); err != nil {
		t.Errorf("removing an unknown id: %v", err)
	}
	rec.waitFor(t, "removal", func(ev mcpclient.Event) bool { return ev.Kind == mcpclient.EventRemoved && ev.ServerID == "unknown" })

	C, D, R, F, A, N := mcpclient.StateConnected, mcpclient.StateDiscovering, mcpclient.StateReady, mcpclient.StateFailed, mcpclient.StateAuthenticating, mcpclient.StateNotConnected
	want := []mcpclient.State{mcpclient.StateConnecting, C, D, R, D, R, D, C, D, R, N, F, A, C}
	if diff := cmp.Diff(want, rec.states("s1")); diff != "" {
		t.Errorf("state sequence (-want +got):\n%s", diff)
	}
}

func TestUnknownServer(t *testing.T) {
	m := newManager(t, nil)
	ctx := testCtx(t)
	if _, err := m.ConnectToServer(ctx, "nope"); !errors.Is(err, mcpclient.ErrNotRegistered) {
		t.Errorf("ConnectToServer: %v", err)
	}
	if _, err := m.DiscoverIfConnected(ctx, "nope", nil); !errors.Is(err, mcpclient.ErrNotRegistered) {
		t.Errorf("DiscoverIfConnected: %v", err)
	}
	if _, err := m.CallTool(ctx, "nope", "x", nil, nil); !errors.Is(err, mcpclient.ErrNotRegistered) {
		t.Errorf("CallTool: %v", err)
	}
	if err := m.CloseConnection(ctx, "nope"); !errors.Is(err, mcpclient.ErrNotRegistered) {
		t.Errorf("CloseConnection: %v", err)
	}
}

func TestRegisterValidation(t *testing.T) {
	m := newManager(t, nil)
	ctx := testCtx(t)
	bad := []mcpclient.ServerOptions{
		{},
		{URL: "http://127.0.0.1/mcp", Command: &mcpclient.CommandOptions{Path: "x"}},
		{URL: "http://127.0.0.1/mcp", Transport: mcpclient.TransportOptions{Type: "carrier-pigeon"}},
		{URL: "http://127.0.0.1/mcp", Transport: mcpclient.TransportOptions{Type: mcpclient.TransportStdio}},
		{URL: "http://127.0.0.1/mcp", Retry: &mcpclient.RetryOptions{BaseDelay: time.Second, MaxDelay: time.Millisecond}},
		{URL: "http://127.0.0.1/mcp", Client: mcpclient.ClientOptions{ProtocolVersion: "1999-01-01"}},
		{Command: &mcpclient.CommandOptions{}},
	}
	for i, o := range bad {
		if _, err := m.RegisterServer(ctx, "x", o); err == nil {
			t.Errorf("case %d: RegisterServer(%+v) succeeded", i, o)
		}
	}
	if _, err := m.RegisterServer(ctx, "", mcpclient.ServerOptions{URL: "http://127.0.0.1/mcp"}); err == nil {
		t.Errorf("empty id accepted")
	}
}

// TestDiscoveryTimeout: a server that never answers tools/list leaves the
// connection connected after the discovery timeout.
func TestDiscoveryTimeout(t *testing.T) {
	srv := mcptest.NewServer("s")
	block := make(chan struct{})
	defer close(block)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-block:
				}
			}
			return next(ctx, method, req)
		}
	})
	m := newManager(t, nil)
	ctx := testCtx(t)
	m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{InProcess: inProcess(srv)})
	if r, _ := m.ConnectToServer(ctx, "s1"); r.State != mcpclient.StateConnected {
		t.Fatalf("connect: %+v", r)
	}
	d, _ := m.DiscoverIfConnected(ctx, "s1", &mcpclient.DiscoverOptions{Timeout: 50 * time.Millisecond})
	if d.Success || d.State != mcpclient.StateConnected || d.Err == nil {
		t.Fatalf("discovery = %+v; want connected with a timeout error", d)
	}
	if info, _ := m.Server("s1"); info.State != mcpclient.StateConnected || info.Error == nil {
		t.Errorf("server state %s, error %v", info.State, info.Error)
	}
}

// TestFilter checks that filter criteria are ANDed and empty ones match all.
func TestFilter(t *testing.T) {
	m := newManager(t, nil)
	a, b, c := mcptest.NewServer("a"), mcptest.NewServer("b"), mcptest.NewServer("c")
	connectReady(t, m, "a", mcpclient.ServerOptions{Name: "Alpha", InProcess: inProcess(a)})
	connectReady(t, m, "b", mcpclient.ServerOptions{Name: "Beta", InProcess: inProcess(b)})
	ctx := testCtx(t)
	m.RegisterServer(ctx, "c", mcpclient.ServerOptions{Name: "Alpha", InProcess: inProcess(c)})
	m.ConnectToServer(ctx, "c") // connected, not discovered: no tools yet

	servers := func(f mcpclient.Filter) []string {
		var ids []string
		for _, p := range m.ListPrompts(f) {
			if !slices.Contains(ids, p.ServerID) {
				ids = append(ids, p.ServerID)
			}
		}
		return ids
	}
	tests := []struct {
		f    mcpclient.Filter
		want []string
	}{
		{mcpclient.Filter{}, []string{"a", "b"}},
		{mcpclient.Filter{ServerID: []string{"b"}}, []string{"b"}},
		{mcpclient.Filter{ServerID: []string{"a", "b"}}, []string{"a", "b"}},
		{mcpclient.Filter{ServerName: []string{"Alpha"}}, []string{"a"}},
		{mcpclient.Filter{ServerName: []string{"Alpha"}, ServerID: []string{"b"}}, nil},
		{mcpclient.Filter{State: []mcpclient.State{mcpclient.StateReady}}, []string{"a", "b"}},
		{mcpclient.Filter{State: []mcpclient.State{mcpclient.StateConnected}}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, servers(tt.f)); diff != "" {
			t.Errorf("filter %+v (-want +got):\n%s", tt.f, diff)
		}
	}
	if got := len(m.ListTools(mcpclient.Filter{ServerName: []string{"Alpha"}, State: []mcpclient.State{mcpclient.StateConnected}})); got != 0 {
		t.Errorf("connected-but-undiscovered server lists %d tools", got)
	}
}

func TestWaitForConnections(t *testing.T) {
	m := newManager(t, nil)
	// Nothing pending: returns at once, even with a context that never ends.
	m.WaitForConnections(context.Background())

	srv := mcptest.NewServer("s")
	block, blocked := make(chan struct{}), make(chan struct{})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "prompts/list" {
				close(blocked)
				<-block
			}
			return next(ctx, method, req)
		}
	})
	ctx := testCtx(t)
	m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{InProcess: inProcess(srv)})
	m.ConnectToServer(ctx, "s1")
	done := make(chan mcpclient.DiscoverResult)
	go func() {
		d, _ := m.DiscoverIfConnected(ctx, "s1", nil)
		done <- d
	}()
	<-blocked
	// The discovery is in flight: a bounded wait gives up.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	m.WaitForConnections(short)
	if short.Err() != context.DeadlineExceeded {
		t.Fatal("WaitForConnections returned while a discovery was blocked")
	}
	close(block)
	m.WaitForConnections(ctx)
	if info, _ := m.Server("s1"); info.State != mcpclient.StateReady {
		t.Errorf("after WaitForConnections: %s (%v)", info.State, info.Error)
	}
	if d := <-done; !d.Success {
		t.Errorf("discovery: %+v", d)
	}
}

// TestRefreshPastListTTL: a manual refresh fetches the lists again even when
// the server said its last answers stay valid for a minute (2026-07-28
// ttlMs, which go-sdk would otherwise serve from its cache): the Manager's
// catalog is the cache, and a refresh is asked for.
func TestRefreshPastListTTL(t *testing.T) {
	srv := mcptest.NewServer("ttl")
	var lists atomic.Int32
	srv.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				// A tool that changes with every answer, and no
				// list_changed for it.
				n := lists.Add(1)
				r.Tools = append(r.Tools, &mcp.Tool{Name: fmt.Sprintf("gen-%d", n), InputSchema: map[string]any{"type": "object"}})
				r.TTLMs = 60000
			}
			return res, err
		}
	})
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	m := newManager(t, nil)
	connectReady(t, m, "s", mcpclient.ServerOptions{URL: hs.URL, Client: mcpclient.ClientOptions{ProtocolVersion: "2026-07-28"}})
	ctx := testCtx(t)
	before := lists.Load()
	if !slices.Contains(toolNames(m.ListTools(mcpclient.Filter{})), fmt.Sprintf("s/gen-%d", before)) {
		t.Fatalf("tools after discovery: %v", toolNames(m.ListTools(mcpclient.Filter{})))
	}
	if d, err := m.DiscoverIfConnected(ctx, "s", nil); err != nil || !d.Success {
		t.Fatalf("refresh: %+v, %v", d, err)
	}
	if got := lists.Load(); got != before+1 {
		t.Errorf("the refresh listed the tools %d times, want once", got-before)
	}
	names := toolNames(m.ListTools(mcpclient.Filter{}))
	if !slices.Contains(names, fmt.Sprintf("s/gen-%d", before+1)) || slices.Contains(names, fmt.Sprintf("s/gen-%d", before)) {
		t.Errorf("tools after the refresh: %v; want gen-%d only", names, before+1)
	}
}
