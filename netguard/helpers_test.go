package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// No test in this package may reach DNS or connect beyond 127.0.0.0/8.
// Every Guard is built by newTestGuard, with a fakeResolver and a
// loopbackDialer, or given a Dial that never opens a socket (refuseDial,
// pipeDialer). The one exception, TestDefaultDialerControl, points the
// default dialer at a 127.0.0.1 listener to watch its Control refuse it.

// testEnv is what newTestGuard returns besides the guard.
type testEnv struct {
	resolver *fakeResolver
	dialer   *loopbackDialer
}

func newTestGuard(t *testing.T, p *Policy) (*Guard, testEnv) {
	t.Helper()
	env := testEnv{
		resolver: &fakeResolver{hosts: make(map[string][]netip.Addr)},
		dialer:   &loopbackDialer{t: t},
	}
	g, err := New(p, &Options{Resolver: env.resolver, Dial: env.dialer.Dial})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g, env
}

// fakeResolver answers from a fixed table and records every lookup. Like
// DNS it ignores case and a trailing dot. An unknown name fails as
// NXDOMAIN would.
type fakeResolver struct {
	mu      sync.Mutex
	hosts   map[string][]netip.Addr
	lookups []string
}

func (r *fakeResolver) set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range addrs {
		r.hosts[host] = append(r.hosts[host], netip.MustParseAddr(a))
	}
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups = append(r.lookups, host)
	addrs, ok := r.hosts[strings.TrimSuffix(strings.ToLower(host), ".")]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return slices.Clone(addrs), nil
}

func (r *fakeResolver) looked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lookups)
}

var testLoopback = netip.MustParsePrefix("127.0.0.0/8")

// errNotLoopback is what loopbackDialer returns for a forbidden address.
var errNotLoopback = errors.New("test dialer: refusing to connect outside 127.0.0.0/8")

// loopbackDialer is the only Dial the tests give a Guard. It records every
// address it is asked for and fails the test if one is outside
// 127.0.0.0/8. The connection itself goes through a net.Dialer whose
// Control refuses any other address, so even a bug here cannot connect
// elsewhere.
type loopbackDialer struct {
	t     *testing.T
	mu    sync.Mutex
	addrs []string
}

func (d *loopbackDialer) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, address)
	d.mu.Unlock()
	if err := checkLoopback(address); err != nil {
		d.t.Errorf("guard asked to dial %s %s: %v", network, address, err)
		return nil, err
	}
	nd := &net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
		return checkLoopback(address)
	}}
	return nd.DialContext(ctx, network, address)
}

// refuseDial is the Dial of guards that are never meant to dial.
func refuseDial(_ context.Context, _, address string) (net.Conn, error) {
	return nil, fmt.Errorf("%w: refusing every dial (%s)", errNotLoopback, address)
}

func (d *loopbackDialer) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.addrs)
}

func checkLoopback(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !testLoopback.Contains(ap.Addr()) {
		return fmt.Errorf("%w: %s", errNotLoopback, address)
	}
	return nil
}

// listen starts a TCP listener on 127.0.0.1 that accepts and closes
// connections until the test ends.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}
