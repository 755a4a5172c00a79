package main

import (
	"net/netip"

	"github.com/agentmcp/agentmcp/netguard"
)

// netFlags are serve's --allow-private and --allow-net: which private
// destinations the agents may reach, beyond netguard's defaults.
type netFlags struct {
	private bool
	allow   rawHeaders // CIDR prefixes or addresses, repeatable
}

// blockedHint ends the message of a blocked URL through serve: the flags
// that open private destinations.
const blockedHint = "; to reach MCP servers on a private network, start agentmcp serve with --allow-private, or --allow-net CIDR for one range"

// guard returns the SSRF guard of the flags, or nil for netguard's
// defaults. Each --allow-net is a CIDR prefix or one address.
func (f *netFlags) guard() (*netguard.Guard, error) {
	if !f.private && len(f.allow) == 0 {
		return nil, nil
	}
	p := &netguard.Policy{AllowPrivate: f.private}
	for _, v := range f.allow {
		if pfx, err := netip.ParsePrefix(v); err == nil {
			p.Allow = append(p.Allow, pfx.Masked().String())
			continue
		}
		if addr, err := netip.ParseAddr(v); err == nil {
			p.Allow = append(p.Allow, addr.String())
			continue
		}
		return nil, usageErrorf("--allow-net %q: want a CIDR prefix (10.20.0.0/16) or an IP address", v)
	}
	g, err := netguard.New(p, nil)
	if err != nil {
		return nil, usageErrorf("--allow-net: %v", err)
	}
	return g, nil
}
