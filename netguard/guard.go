package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/agentmcp/agentmcp/internal/whatwg"
)

// A Policy says which destinations outbound requests may reach. Every field
// is optional; the zero value, and a nil *Policy, give the safe defaults:
// private, link-local, unique-local, CGNAT, site-local, unspecified and
// cloud metadata destinations are blocked, loopback and public ones are
// allowed.
type Policy struct {
	// BlockLoopback blocks loopback destinations: 127.0.0.0/8, ::1, the
	// IPv6 forms that embed a 127/8 address, and the names localhost and
	// *.localhost. The zero value allows them, as the seed does, so that
	// MCP servers on the developer's machine work.
	BlockLoopback bool

	// AllowPrivate allows the private ranges, for deployments whose MCP
	// servers live on an internal network: 10.0.0.0/8, 172.16.0.0/12,
	// 192.168.0.0/16, 100.64.0.0/10, 169.254.0.0/16, fc00::/7, fe80::/10,
	// fec0::/10 and 64:ff9b:1::/48. It does not open cloud metadata
	// endpoints (metadata.google.internal, 169.254.169.254 and friends),
	// 0.0.0.0/8 or [::]: list those in Allow to reach them. The zero value
	// blocks the private ranges.
	AllowPrivate bool

	// Allow lists destinations that are always allowed, whatever the other
	// rules and Block say: host names ("mcp.internal"; "*.corp.example"
	// for every subdomain of corp.example), IP addresses ("10.1.2.3",
	// "fd00::1") and CIDR prefixes ("10.20.0.0/16"). A name on the list is
	// trusted at dial time too: whatever it resolves to may be dialled.
	// Nil allows nothing beyond the defaults.
	Allow []string

	// Block lists extra destinations to refuse, in the same forms as
	// Allow. A name on the list is refused before it is resolved; its
	// addresses are not blocked unless listed too. Nil blocks nothing
	// beyond the defaults.
	Block []string
}

// A Resolver looks up the IP addresses of a host name. *net.Resolver
// implements it. Implementations must be safe for concurrent use.
type Resolver interface {
	// LookupNetIP returns the addresses of host for network "ip", "ip4" or
	// "ip6".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure how a Guard reaches the network. Every field is
// optional; a nil *Options means the defaults. Tests use them to make
// names resolve where they want and to see every connection attempt.
type Options struct {
	// Resolver looks up host names at dial time. Nil means
	// net.DefaultResolver.
	Resolver Resolver

	// Dial opens a connection after the guard has approved the address. It
	// is only ever called with a literal IP address and port, never with a
	// name. Nil means a net.Dialer whose Control function checks the
	// address once more on the socket, just before it connects.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// A Guard applies a Policy to URLs, addresses and connections. It is
// immutable and safe for concurrent use; build one with New and share it.
type Guard struct {
	blockLoopback bool
	allowPrivate  bool
	allowNames    nameSet
	blockNames    nameSet
	allowPrefixes []netip.Prefix
	blockPrefixes []netip.Prefix

	resolver Resolver
	dial     func(ctx context.Context, network, address string) (net.Conn, error)
}

// New compiles p into a Guard. A nil p means the default policy and nil
// opts the default resolver and dialer; neither is kept. New fails only if
// an Allow or Block entry is not a host name, IP address or CIDR prefix.
func New(p *Policy, opts *Options) (*Guard, error) {
	if p == nil {
		p = &Policy{}
	}
	g := &Guard{
		blockLoopback: p.BlockLoopback,
		allowPrivate:  p.AllowPrivate,
	}
	for _, e := range p.Allow {
		if err := addEntry(e, &g.allowNames, &g.allowPrefixes); err != nil {
			return nil, fmt.Errorf("netguard: Policy.Allow: %w", err)
		}
	}
	for _, e := range p.Block {
		if err := addEntry(e, &g.blockNames, &g.blockPrefixes); err != nil {
			return nil, fmt.Errorf("netguard: Policy.Block: %w", err)
		}
	}
	if opts != nil {
		g.resolver = opts.Resolver
		g.dial = opts.Dial
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dial == nil {
		d := &net.Dialer{ControlContext: g.control}
		g.dial = d.DialContext
	}
	return g, nil
}

// addEntry parses one Allow or Block entry into names or prefixes.
func addEntry(entry string, names *nameSet, prefixes *[]netip.Prefix) error {
	e := strings.TrimSpace(entry)
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("invalid CIDR prefix %q", entry)
		}
		// Addresses are matched in their IPv4 form, so an IPv4-mapped
		// prefix ("::ffff:10.0.0.0/104") is stored as IPv4 ("10.0.0.0/8").
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		*prefixes = append(*prefixes, p.Masked())
		return nil
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]")); err == nil {
		if a.Zone() != "" {
			return fmt.Errorf("invalid address %q: zones are not supported", entry)
		}
		a = a.Unmap()
		*prefixes = append(*prefixes, netip.PrefixFrom(a, a.BitLen()))
		return nil
	}
	wildcard := strings.HasPrefix(e, "*.")
	// Parse names as a browser would, so "BÜCHER.example" matches the
	// punycode host of a parsed URL and "0x7f.1" is an address.
	host, err := whatwg.ParseHost(strings.TrimPrefix(e, "*."))
	if err != nil {
		return fmt.Errorf("invalid host %q", entry)
	}
	if a, ok := hostAddr(host); ok {
		if wildcard {
			return fmt.Errorf("invalid host %q: wildcard on an address", entry)
		}
		*prefixes = append(*prefixes, netip.PrefixFrom(a, a.BitLen()))
		return nil
	}
	host = canonicalName(host)
	if host == "" {
		return fmt.Errorf("invalid host %q", entry)
	}
	if wildcard {
		host = "*." + host
	}
	names.add(host)
	return nil
}

// hostAddr returns the address of a host serialised by whatwg, if it is
// an IPv4 or bracketed IPv6 address.
func hostAddr(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return a, err == nil
}

// judgeAddr decides whether a may be reached. If not, it returns a noun
// phrase saying what a is, such as "a private address".
func (g *Guard) judgeAddr(a netip.Addr) (desc string, blocked bool) {
	a = a.WithZone("")
	v4, form, embeds := embeddedIPv4(a)
	if containsAddr(g.allowPrefixes, a) || embeds && containsAddr(g.allowPrefixes, v4) {
		return "", false
	}
	if containsAddr(g.blockPrefixes, a) || embeds && containsAddr(g.blockPrefixes, v4) {
		return "on the block list", true
	}
	target := a
	if embeds {
		target = v4
	}
	k, desc := classify(target)
	if !g.blocks(k) {
		return "", false
	}
	if embeds {
		desc = fmt.Sprintf("%s %s, %s", form, v4, desc)
	}
	return desc, true
}

// blocks reports whether the policy refuses destinations of kind k.
func (g *Guard) blocks(k kind) bool {
	switch k {
	case loopback:
		return g.blockLoopback
	case private:
		return !g.allowPrivate
	case metadata, reserved:
		return true
	}
	return false
}

// judgeName decides what to do with a host name (not an address) before it
// is resolved. trusted means the name is on the allow list, so whatever it
// resolves to may be dialled; otherwise desc is non-empty if the name is
// refused outright.
func (g *Guard) judgeName(host string) (trusted bool, desc string) {
	name := canonicalName(strings.ToLower(host))
	switch {
	case g.allowNames.contains(name):
		return true, ""
	case g.blockNames.contains(name):
		return false, "on the block list"
	case name == "metadata.google.internal":
		return false, "a cloud metadata host"
	case g.blockLoopback && (name == "localhost" || strings.HasSuffix(name, ".localhost")):
		return false, "a loopback host"
	}
	return false, ""
}

func containsAddr(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
