package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDialBlocksPrivateResolution is the DNS case: a name that passes the
// lexical check but resolves to a private address is refused before any
// connection is attempted.
func TestDialBlocksPrivateResolution(t *testing.T) {
	t.Parallel()
	g, env := newTestGuard(t, nil)
	env.resolver.set("evil.test", "10.0.0.5")
	env.resolver.set("mixed.test", "127.0.0.1", "10.0.0.5")
	env.resolver.set("mapped.test", "::ffff:169.254.169.254")
	env.resolver.set("v6.test", "fd00::5")

	if err := g.CheckURL("http://evil.test/mcp"); err != nil {
		t.Fatalf("CheckURL(evil.test) = %v; a name alone should pass", err)
	}
	tests := []struct {
		address string
		addr    string // the refused address
	}{
		{"evil.test:80", "10.0.0.5"},
		{"EVIL.test.:80", "10.0.0.5"}, // canonicalised to the same name
		{"mixed.test:443", "10.0.0.5"},
		{"mapped.test:80", "169.254.169.254"},
		{"v6.test:80", "fd00::5"},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			c, err := g.DialContext(t.Context(), "tcp", tt.address)
			if err == nil {
				c.Close()
				t.Fatal("DialContext succeeded, want it blocked")
			}
			var be *BlockedError
			if !errors.As(err, &be) || !errors.Is(err, ErrBlockedURL) {
				t.Fatalf("DialContext error %v, want a *BlockedError", err)
			}
			if be.Addr != netip.MustParseAddr(tt.addr) {
				t.Errorf("BlockedError.Addr = %v, want %s", be.Addr, tt.addr)
			}
		})
	}
	if d := env.dialer.dialed(); len(d) != 0 {
		t.Errorf("dialled %v; want no connection attempt at all", d)
	}
}

// TestDialRebinding models DNS rebinding: the name passes CheckURL and
// resolves publicly (here: to loopback, the only place tests may connect),
// then the attacker's DNS answers with a private address.
func TestDialRebinding(t *testing.T) {
	t.Parallel()
	g, env := newTestGuard(t, nil)
	addr := listen(t)
	_, port, _ := net.SplitHostPort(addr)

	env.resolver.set("rebind.test", "127.0.0.1")
	c, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort("rebind.test", port))
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	c.Close()

	env.resolver.mu.Lock()
	env.resolver.hosts["rebind.test"] = []netip.Addr{netip.MustParseAddr("10.0.0.5")}
	env.resolver.mu.Unlock()
	if _, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort("rebind.test", port)); !errors.Is(err, ErrBlockedURL) {
		t.Fatalf("second dial = %v, want ErrBlockedURL", err)
	}
	if diff := cmp.Diff([]string{addr}, env.dialer.dialed()); diff != "" {
		t.Errorf("dialled addresses mismatch (-want +got):\n%s", diff)
	}
}

func TestDialLiteralsAndNames(t *testing.T) {
	t.Parallel()
	g, env := newTestGuard(t, nil)
	for _, address := range []string{
		"10.0.0.1:80",
		"0x0a000001:80", // as a browser parses it
		"167772161:80",  // ditto
		"[fe80::1%eth0]:80",
		"[::ffff:10.0.0.1]:80",
		"0.0.0.0:80",
		"metadata.google.internal:80",
		"Metadata.Google.Internal.:80",
		"exa mple.com:80", // not a valid host
		"no-port",
	} {
		if _, err := g.DialContext(t.Context(), "tcp", address); !errors.Is(err, ErrBlockedURL) {
			t.Errorf("DialContext(%q) = %v, want ErrBlockedURL", address, err)
		}
	}
	if l := env.resolver.looked(); len(l) != 0 {
		t.Errorf("looked up %v; literals and refused names need no DNS", l)
	}
	if d := env.dialer.dialed(); len(d) != 0 {
		t.Errorf("dialled %v, want nothing", d)
	}
}

func TestDialLoopback(t *testing.T) {
	t.Parallel()
	addr := listen(t)
	_, port, _ := net.SplitHostPort(addr)

	g, env := newTestGuard(t, nil)
	env.resolver.set("local.test", "127.0.0.1")
	for _, address := range []string{addr, net.JoinHostPort("local.test", port), net.JoinHostPort("0x7f.1", port)} {
		c, err := g.DialContext(t.Context(), "tcp", address)
		if err != nil {
			t.Errorf("DialContext(%q): %v", address, err)
			continue
		}
		c.Close()
	}
	if diff := cmp.Diff([]string{addr, addr, addr}, env.dialer.dialed()); diff != "" {
		t.Errorf("dialled addresses mismatch (-want +got):\n%s", diff)
	}

	strict, env := newTestGuard(t, &Policy{BlockLoopback: true})
	env.resolver.set("local.test", "127.0.0.1")
	for _, address := range []string{addr, net.JoinHostPort("local.test", port), net.JoinHostPort("localhost", port)} {
		if _, err := strict.DialContext(t.Context(), "tcp", address); !errors.Is(err, ErrBlockedURL) {
			t.Errorf("BlockLoopback: DialContext(%q) = %v, want ErrBlockedURL", address, err)
		}
	}
	if d := env.dialer.dialed(); len(d) != 0 {
		t.Errorf("BlockLoopback: dialled %v, want nothing", d)
	}
}

// TestDialTrustedName checks that a name on the allow list may resolve to
// an address the policy would otherwise refuse.
func TestDialTrustedName(t *testing.T) {
	t.Parallel()
	addr := listen(t)
	_, port, _ := net.SplitHostPort(addr)
	g, env := newTestGuard(t, &Policy{BlockLoopback: true, Allow: []string{"internal.test"}})
	env.resolver.set("internal.test", "127.0.0.1")
	env.resolver.set("other.test", "127.0.0.1")

	c, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort("internal.test", port))
	if err != nil {
		t.Fatalf("allowed name: %v", err)
	}
	c.Close()
	if _, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort("other.test", port)); !errors.Is(err, ErrBlockedURL) {
		t.Errorf("other name = %v, want ErrBlockedURL", err)
	}
}

func TestDialNetworks(t *testing.T) {
	t.Parallel()
	addr := listen(t)
	_, port, _ := net.SplitHostPort(addr)
	g, env := newTestGuard(t, nil)
	env.resolver.set("dual.test", "::1", "127.0.0.1")
	env.resolver.set("v6only.test", "::1")

	c, err := g.DialContext(t.Context(), "tcp4", net.JoinHostPort("dual.test", port))
	if err != nil {
		t.Fatalf("tcp4: %v", err)
	}
	c.Close()
	if diff := cmp.Diff([]string{addr}, env.dialer.dialed()); diff != "" {
		t.Errorf("tcp4 dialled mismatch (-want +got):\n%s", diff)
	}
	if _, err := g.DialContext(t.Context(), "tcp4", net.JoinHostPort("v6only.test", port)); err == nil {
		t.Error("tcp4 to an IPv6-only name succeeded")
	}
	if _, err := g.DialContext(t.Context(), "udp", addr); err == nil {
		t.Error("udp dial succeeded, want an error")
	}
	if _, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort("nxdomain.test", port)); err == nil || errors.Is(err, ErrBlockedURL) {
		t.Errorf("unknown name = %v, want a lookup error", err)
	}
}

// TestDefaultDialerControl checks the default dialer's last line of
// defence: its Control function refuses a blocked address on the socket,
// before connect. Only loopback addresses are used.
func TestDefaultDialerControl(t *testing.T) {
	t.Parallel()
	addr := listen(t)
	g, err := New(&Policy{BlockLoopback: true}, &Options{Resolver: &fakeResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	// g.dial is the default net.Dialer; DialContext's own checks are
	// bypassed on purpose.
	_, err = g.dial(t.Context(), "tcp", addr)
	if !errors.Is(err, ErrBlockedURL) {
		t.Fatalf("default dialer to %s = %v, want ErrBlockedURL from Control", addr, err)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("error %T is not a *net.OpError", err)
	}

	// A trusted dial is let through.
	ctx := context.WithValue(t.Context(), trustedKey{}, true)
	c, err := g.dial(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("trusted dial: %v", err)
	}
	c.Close()
}

// pipeDialer stands in for the network in the synctest bubble: it never
// opens a socket. It fails the test for any address but 127.0.0.1 and ::1.
type pipeDialer struct {
	t     *testing.T
	delay map[string]time.Duration // per IP; absent means fail at once
	mu    sync.Mutex
	log   []string
}

func (d *pipeDialer) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().IsLoopback() {
		d.t.Errorf("dial %s outside loopback", address)
		return nil, errNotLoopback
	}
	d.mu.Lock()
	d.log = append(d.log, ap.Addr().String())
	d.mu.Unlock()
	delay, ok := d.delay[ap.Addr().String()]
	if !ok {
		return nil, errors.New("connection refused")
	}
	select {
	case <-time.After(delay):
		c1, c2 := net.Pipe()
		c2.Close()
		return c1, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestDialHappyEyeballs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		delay    map[string]time.Duration
		wantTime time.Duration
		wantLog  []string
		wantErr  bool
	}{
		{"primary fast", map[string]time.Duration{"::1": 10 * time.Millisecond, "127.0.0.1": 0},
			10 * time.Millisecond, []string{"::1"}, false},
		{"primary hangs", map[string]time.Duration{"::1": time.Hour, "127.0.0.1": 50 * time.Millisecond},
			fallbackDelay + 50*time.Millisecond, []string{"::1", "127.0.0.1"}, false},
		{"primary refused", map[string]time.Duration{"127.0.0.1": 0},
			0, []string{"::1", "127.0.0.1"}, false},
		{"both refused", map[string]time.Duration{},
			0, []string{"::1", "127.0.0.1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pd := &pipeDialer{t: t, delay: tt.delay}
				res := &fakeResolver{hosts: map[string][]netip.Addr{
					"dual.test": {netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.1")},
				}}
				g, err := New(nil, &Options{Resolver: res, Dial: pd.Dial})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				c, err := g.DialContext(t.Context(), "tcp", "dual.test:80")
				if elapsed := time.Since(start); elapsed != tt.wantTime {
					t.Errorf("took %v, want %v", elapsed, tt.wantTime)
				}
				if (err != nil) != tt.wantErr {
					t.Fatalf("DialContext error = %v, want error %v", err, tt.wantErr)
				}
				if c != nil {
					c.Close()
				}
				// Let the losing racer give up before reading the log.
				synctest.Wait()
				pd.mu.Lock()
				log := slices.Clone(pd.log)
				pd.mu.Unlock()
				slices.Sort(log)
				want := slices.Clone(tt.wantLog)
				slices.Sort(want)
				if diff := cmp.Diff(want, log); diff != "" {
					t.Errorf("dial log mismatch (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestDialSerialDeadlineShare checks that, with a deadline, one hanging
// address does not use up the time of the next.
func TestDialSerialDeadlineShare(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		pd := &pipeDialer{t: t, delay: map[string]time.Duration{
			"127.0.0.1": time.Hour,
			"127.0.0.2": 0,
		}}
		res := &fakeResolver{hosts: map[string][]netip.Addr{
			"two.test": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")},
		}}
		g, err := New(nil, &Options{Resolver: res, Dial: pd.Dial})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		c, err := g.DialContext(ctx, "tcp", "two.test:80")
		if err != nil {
			t.Fatalf("DialContext: %v", err)
		}
		c.Close()
		if elapsed := time.Since(start); elapsed != 5*time.Second {
			t.Errorf("took %v, want 5s (half of the deadline)", elapsed)
		}
	})
}
