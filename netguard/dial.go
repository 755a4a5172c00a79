package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/agentmcp/agentmcp/internal/whatwg"
)

// DialContext connects to address ("host:port") on network "tcp", "tcp4"
// or "tcp6", after checking where the connection would go: the dial-time
// check that covers what a lexical check cannot see.
//
// The host is parsed as a URL host, so "0x7f.1" is 127.0.0.1 here as in
// CheckURL. A name is judged (metadata.google.internal, the block list),
// then resolved with the Options.Resolver, and every address it resolves to
// must pass, or the dial fails with a *BlockedError before any connection
// is attempted: a name that resolves privately, or one whose DNS answer
// changed since CheckURL (DNS rebinding), is refused. A name on the allow
// list is trusted with whatever it resolves to.
//
// The approved addresses are dialled by literal IP, so no second lookup
// can substitute another address. When a name has both IPv4 and IPv6
// addresses they race as in net.Dialer (RFC 6555 Happy Eyeballs), the
// second family starting 300 ms after the first.
//
// DialContext has the signature of http.Transport.DialContext.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var lookupNet string
	switch network {
	case "tcp":
		lookupNet = "ip"
	case "tcp4":
		lookupNet = "ip4"
	case "tcp6":
		lookupNet = "ip6"
	default:
		return nil, fmt.Errorf("netguard: dial %s %s: unsupported network", network, address)
	}
	hostport := Sanitize(address) // for errors
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &BlockedError{URL: hostport, Reason: "invalid dial address"}
	}

	// Canonicalise the host as CheckURL would. An IPv6 literal, possibly
	// with a zone, arrives without brackets.
	addr, err := netip.ParseAddr(host)
	if err == nil {
		host = addrHost(addr)
	} else {
		canon, err := whatwg.ParseHost(host)
		if err != nil {
			return nil, &BlockedError{URL: hostport, Reason: "invalid host"}
		}
		host = canon
		addr, _ = hostAddr(canon)
	}
	if addr.IsValid() {
		if desc, blocked := g.judgeAddr(addr); blocked {
			return nil, &BlockedError{URL: hostport, Host: host, Addr: addr, Reason: addr.String() + " is " + desc}
		}
		return g.dialAddrs(ctx, network, []netip.Addr{addr.Unmap()}, port)
	}

	trusted, desc := g.judgeName(host)
	if desc != "" {
		return nil, &BlockedError{URL: hostport, Host: host, Reason: host + " is " + desc}
	}
	addrs, err := g.resolver.LookupNetIP(ctx, lookupNet, host)
	if err != nil {
		return nil, fmt.Errorf("netguard: look up %s: %w", host, err)
	}
	var dialable []netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if network == "tcp4" && !a.Is4() || network == "tcp6" && !a.Is6() {
			continue
		}
		if !trusted {
			if desc, blocked := g.judgeAddr(a); blocked {
				// One bad answer refuses the name: a mix of public and
				// private addresses is a misconfiguration or an attack.
				return nil, &BlockedError{URL: hostport, Host: host, Addr: a,
					Reason: fmt.Sprintf("%s resolves to %s, %s", host, a, desc)}
			}
		}
		dialable = append(dialable, a)
	}
	if len(dialable) == 0 {
		return nil, fmt.Errorf("netguard: look up %s: no %s addresses", host, lookupNet)
	}
	if trusted {
		ctx = context.WithValue(ctx, trustedKey{}, true)
	}
	return g.dialAddrs(ctx, network, dialable, port)
}

// trustedKey marks the context of a dial to a name on the allow list, so
// that control does not re-judge its addresses.
type trustedKey struct{}

// control is the default dialer's Control function. It runs on the socket
// after it is created and before it connects, with the exact address the
// kernel is about to connect to: a second check for any path that reaches
// the dialer without DialContext's.
func (g *Guard) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	if ctx.Value(trustedKey{}) != nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{URL: address, Reason: "invalid socket address"}
	}
	if desc, blocked := g.judgeAddr(ap.Addr()); blocked {
		a := ap.Addr()
		return &BlockedError{URL: address, Host: addrHost(a), Addr: a, Reason: a.String() + " is " + desc}
	}
	return nil
}

// fallbackDelay is how long the first address family gets before the other
// one joins the race, as net.Dialer's default FallbackDelay.
const fallbackDelay = 300 * time.Millisecond

// dialAddrs connects to one of addrs. With addresses of both families it
// races them, the family of addrs[0] first; within a family it tries the
// addresses in order.
func (g *Guard) dialAddrs(ctx context.Context, network string, addrs []netip.Addr, port string) (net.Conn, error) {
	var primaries, fallbacks []netip.Addr
	for _, a := range addrs {
		if a.Is4() == addrs[0].Is4() {
			primaries = append(primaries, a)
		} else {
			fallbacks = append(fallbacks, a)
		}
	}
	if len(fallbacks) == 0 {
		return g.dialSerial(ctx, network, primaries, port)
	}

	type result struct {
		conn    net.Conn
		err     error
		primary bool
	}
	results := make(chan result) // unbuffered: a racer that loses closes its conn
	returned := make(chan struct{})
	defer close(returned)
	race := func(ctx context.Context, primary bool) {
		addrs := primaries
		if !primary {
			addrs = fallbacks
		}
		c, err := g.dialSerial(ctx, network, addrs, port)
		select {
		case results <- result{c, err, primary}:
		case <-returned:
			if c != nil {
				c.Close()
			}
		}
	}

	primaryCtx, cancelPrimary := context.WithCancel(ctx)
	defer cancelPrimary()
	go race(primaryCtx, true)

	fallbackTimer := time.NewTimer(fallbackDelay)
	defer fallbackTimer.Stop()
	fallbackCtx, cancelFallback := context.WithCancel(ctx)
	defer cancelFallback()

	var primaryErr error
	var primaryDone, fallbackDone bool
	for {
		select {
		case <-fallbackTimer.C:
			go race(fallbackCtx, false)
		case res := <-results:
			if res.err == nil {
				return res.conn, nil
			}
			if res.primary {
				primaryErr, primaryDone = res.err, true
				// The primary family failed: start the fallback now.
				if fallbackTimer.Stop() {
					fallbackTimer.Reset(0)
				}
			} else {
				fallbackDone = true
			}
			if primaryDone && fallbackDone {
				return nil, primaryErr
			}
		}
	}
}

// dialSerial tries addrs in order. When ctx has a deadline, each address
// but the last gets an equal share of the time left, and at least two
// seconds, as in net.Dialer.
func (g *Guard) dialSerial(ctx context.Context, network string, addrs []netip.Addr, port string) (net.Conn, error) {
	var errs []error
	for i, a := range addrs {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		dctx, cancel := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok && i < len(addrs)-1 {
			share := max(time.Until(deadline)/time.Duration(len(addrs)-i), 2*time.Second)
			dctx, cancel = context.WithTimeout(ctx, share)
		}
		c, err := g.dial(dctx, network, net.JoinHostPort(a.String(), port))
		cancel()
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, errors.Join(errs...)
}
