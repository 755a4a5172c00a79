package netguard

import (
	"net/netip"
	"strings"
)

// A kind is the class of a destination under the default rules, which
// decides which Policy field, if any, opens it.
type kind int

const (
	public   kind = iota // allowed
	loopback             // allowed unless Policy.BlockLoopback
	private              // blocked unless Policy.AllowPrivate
	metadata             // blocked; only Policy.Allow opens it
	reserved             // unspecified and "this network": blocked; only Policy.Allow opens it
)

// A rule assigns a kind to a range of addresses. desc is a noun phrase for
// error messages.
type rule struct {
	prefix netip.Prefix
	kind   kind
	desc   string
}

// defaultRules classify addresses; the first match wins, so the cloud
// metadata addresses come before the ranges that contain them. Anything
// unmatched is public. Multicast (224.0.0.0/4, ff00::/8), broadcast
// (255.255.255.255) and the other IANA special-purpose ranges are public on
// purpose: TCP cannot connect to the first two, and the reference and the
// seed allow them all.
var defaultRules = []rule{
	// Cloud instance metadata services: AWS, GCP and Azure IMDS; AWS ECS
	// task metadata; AWS IMDS over IPv6 (inside fc00::/7); Alibaba Cloud
	// (inside 100.64.0.0/10).
	{netip.MustParsePrefix("169.254.169.254/32"), metadata, "a cloud metadata address"},
	{netip.MustParsePrefix("169.254.170.2/32"), metadata, "a cloud metadata address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), metadata, "a cloud metadata address"},
	{netip.MustParsePrefix("100.100.100.200/32"), metadata, "a cloud metadata address"},

	{netip.MustParsePrefix("0.0.0.0/8"), reserved, `a "this network" address`},
	{netip.MustParsePrefix("10.0.0.0/8"), private, "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), private, "a shared (CGNAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), loopback, "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), private, "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), private, "a private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), private, "a private address"},

	{netip.MustParsePrefix("::/128"), reserved, "the unspecified address"},
	{netip.MustParsePrefix("::1/128"), loopback, "a loopback address"},
	{netip.MustParsePrefix("fc00::/7"), private, "a unique-local address"},
	{netip.MustParsePrefix("fe80::/10"), private, "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), private, "a site-local address"},
	// The local-use NAT64 prefix (RFC 8215) is blocked whole: operators
	// choose its length, so where the IPv4 address sits is unknown, and it
	// only ever leads to a local translator.
	{netip.MustParsePrefix("64:ff9b:1::/48"), private, "a local-use NAT64 address"},
}

// classify returns the kind of a, which must carry no zone, and its
// description.
func classify(a netip.Addr) (kind, string) {
	for _, r := range defaultRules {
		if r.prefix.Contains(a) {
			return r.kind, r.desc
		}
	}
	return public, ""
}

var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052 well-known prefix
	translatedPrefix = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 IPv4-translated
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16")       // RFC 3056 6to4
	teredoPrefix     = netip.MustParsePrefix("2001::/32")       // RFC 4380 Teredo
)

// embeddedIPv4 reports the IPv4 address that the IPv6 address a delivers
// to, for the forms that carry one, and names the form. Such an address is
// judged as its IPv4 address, so that [::ffff:10.0.0.1], [::a00:1] and
// [64:ff9b::a00:1] are all 10.0.0.1.
//
//   - IPv4-mapped ::ffff:0:0/96: the kernel connects to the IPv4 address.
//   - IPv4-compatible ::/96 (deprecated), except :: and ::1.
//   - NAT64 64:ff9b::/96: a translator connects to the IPv4 address.
//     Judging the embedded address, rather than blocking the prefix,
//     keeps public hosts reachable from IPv6-only networks with DNS64.
//   - IPv4-translated ::ffff:0:0:0/96 (SIIT).
//   - 6to4 2002::/16, whose relay address is bits 16-47.
//   - Teredo 2001::/32, whose client address is the last 32 bits inverted.
func embeddedIPv4(a netip.Addr) (netip.Addr, string, bool) {
	if !a.Is6() {
		return netip.Addr{}, "", false
	}
	b := a.As16()
	last := netip.AddrFrom4([4]byte(b[12:]))
	switch {
	case a.Is4In6():
		return a.Unmap(), "IPv4-mapped", true
	case isZero(b[:12]) && !a.IsUnspecified() && !a.IsLoopback():
		return last, "IPv4-compatible", true
	case nat64Prefix.Contains(a):
		return last, "NAT64", true
	case translatedPrefix.Contains(a):
		return last, "IPv4-translated", true
	case sixToFourPrefix.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4", true
	case teredoPrefix.Contains(a):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), "Teredo", true
	}
	return netip.Addr{}, "", false
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// A nameSet matches host names exactly or, for "*.example.com" entries,
// by subdomain. Names are stored lower-case, in ASCII, without trailing
// dots.
type nameSet struct {
	exact    map[string]bool
	suffixes []string // ".example.com"
}

func (s *nameSet) add(name string) {
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		s.suffixes = append(s.suffixes, "."+rest)
		return
	}
	if s.exact == nil {
		s.exact = make(map[string]bool)
	}
	s.exact[name] = true
}

func (s *nameSet) contains(name string) bool {
	if s.exact[name] {
		return true
	}
	for _, suf := range s.suffixes {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// canonicalName prepares a host name for matching: trailing dots go, so
// that "metadata.google.internal." is the same host as
// "metadata.google.internal", as it is to DNS.
func canonicalName(host string) string {
	return strings.TrimRight(host, ".")
}
