package netguard

import (
	"fmt"
	"net/netip"

	"github.com/agentmcp/agentmcp/internal/whatwg"
)

// CheckURL reports whether raw may be requested, judging its host alone,
// without DNS: this is the check for a server URL when it is registered or
// restored, and for every redirect hop. The URL is parsed exactly as a
// browser parses it, so http://0x0a000001/, http://167772161/,
// http://10.1/ and http://0177.0.0.1/ are the IPv4 addresses they denote.
//
// It returns nil, a *BlockedError (errors.Is ErrBlockedURL) for an
// unparseable URL or a refused host, or an error wrapping
// ErrUnsupportedScheme for an acceptable host under a scheme other than
// http, https, ws and wss. The host is judged first, so ftp://10.0.0.1/ is
// blocked, as the reference has it, while ftp://example.com/ is merely
// unsupported.
//
// A name that passes may still resolve to a refused address; the dial-time
// check of DialContext catches that.
func (g *Guard) CheckURL(raw string) error {
	u, err := whatwg.Parse(raw)
	if err != nil {
		return &BlockedError{URL: RedactURL(raw), Reason: "invalid URL"}
	}
	return g.checkParsed(u)
}

// checkParsed is CheckURL on a parsed URL.
func (g *Guard) checkParsed(u *whatwg.URL) error {
	// Only special schemes have hosts a browser would connect to; the
	// others have opaque hosts and fail the scheme check below anyway.
	if whatwg.Special(u.Scheme) && u.Host != "" {
		if err := g.checkHost(redact(u), u.Host); err != nil {
			return err
		}
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
		return nil
	}
	return fmt.Errorf("%w %q: MCP servers are reached over http, https, ws or wss", ErrUnsupportedScheme, u.Scheme)
}

// checkHost judges a host serialised by whatwg, lexically. what is the
// redacted URL or address to report.
func (g *Guard) checkHost(what, host string) error {
	if a, ok := hostAddr(host); ok {
		if desc, blocked := g.judgeAddr(a); blocked {
			return &BlockedError{URL: what, Host: host, Addr: a, Reason: host + " is " + desc}
		}
		return nil
	}
	if _, desc := g.judgeName(host); desc != "" {
		return &BlockedError{URL: what, Host: host, Reason: host + " is " + desc}
	}
	return nil
}

// CheckAddr reports whether addr may be connected to: nil, or a
// *BlockedError. IPv6 addresses that embed an IPv4 address (IPv4-mapped,
// IPv4-compatible, NAT64, 6to4, Teredo) are judged by that IPv4 address;
// zones are ignored.
func (g *Guard) CheckAddr(addr netip.Addr) error {
	if desc, blocked := g.judgeAddr(addr); blocked {
		s := addr.String()
		return &BlockedError{URL: s, Host: addrHost(addr), Addr: addr, Reason: s + " is " + desc}
	}
	return nil
}

// addrHost returns a in the form of a URL host: IPv6 in brackets.
func addrHost(a netip.Addr) string {
	if a.Is6() {
		return "[" + a.String() + "]"
	}
	return a.String()
}
