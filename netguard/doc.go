// Package netguard keeps agentmcp's outbound requests away from private and
// internal networks: the server-side request forgery (SSRF) guard that every
// HTTP request the library makes goes through, from MCP streams to OAuth
// metadata and token endpoints.
//
// It checks twice. CheckURL judges a URL lexically, when a server is
// registered or restored and on every redirect hop, parsing it as a
// browser does (package internal/whatwg), so http://0x0a000001/ is
// 10.0.0.1. DialContext judges every connection when it is made, after DNS,
// so a name that resolves to 10.0.0.5, or starts to after passing CheckURL
// (DNS rebinding), is refused before any packet is sent to it.
//
// By default these are blocked:
//
//   - private ranges: 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16;
//   - shared address space (CGNAT) 100.64.0.0/10;
//   - link-local 169.254.0.0/16 and fe80::/10;
//   - unique-local fc00::/7 and site-local fec0::/10;
//   - "this network" 0.0.0.0/8 and the unspecified address [::];
//   - the local-use NAT64 prefix 64:ff9b:1::/48;
//   - cloud metadata endpoints: metadata.google.internal (with or without
//     a trailing dot, any case), 169.254.169.254, 169.254.170.2,
//     fd00:ec2::254 and 100.100.100.200;
//   - IPv6 addresses that embed a blocked IPv4 address: IPv4-mapped
//     (::ffff:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96),
//     IPv4-translated (::ffff:0:0:0/96), 6to4 (2002::/16) and Teredo
//     (2001::/32). NAT64 addresses of public hosts stay reachable, so
//     IPv6-only networks with DNS64 keep working.
//
// Loopback (127.0.0.0/8, [::1], localhost, *.localhost) is allowed unless
// Policy.BlockLoopback is set, as in the seed, for local development.
// Multicast and broadcast addresses are allowed, as in the reference: TCP
// cannot connect to them. Policy.AllowPrivate opens the private ranges for
// internal deployments, but not the metadata endpoints or 0.0.0.0/8;
// Policy.Allow and Policy.Block list hosts and prefixes, and Allow wins.
//
// Compared with the reference implementation, which checks only the
// literal host once at registration, this package adds the dial-time
// check, redirect checks, CGNAT, site-local, NAT64 and the other embedded
// IPv4 forms, and also blocks metadata.google.internal spelled with a
// trailing dot.
//
// # Usage
//
// Build one Guard from the policy and use it everywhere:
//
//	guard, err := netguard.New(&netguard.Policy{BlockLoopback: true}, nil)
//	if err != nil {
//		return err // a malformed Allow or Block entry
//	}
//	if err := guard.CheckURL(serverURL); err != nil {
//		return err // refuse to register the server
//	}
//	client := guard.HTTPClient(nil) // for every request to the server
//
// HTTPClient, Transport and RoundTripper adapt a guard to net/http;
// DialContext and CheckAddr serve other transports. Sanitize and RedactURL
// prepare server-supplied text and URLs for logs and UIs.
//
// # Concurrency
//
// A Guard is immutable once New returns it and is safe for concurrent use,
// as are the clients and transports it returns. The Resolver and Dial in
// Options must be safe for concurrent use too. DialContext may start a
// second goroutine to race address families; it ends before or shortly
// after DialContext returns, and closes any connection it loses the race
// with.
//
// # Errors
//
// A refused destination is a *BlockedError, which wraps ErrBlockedURL:
// test with errors.Is(err, netguard.ErrBlockedURL), or errors.As for its
// fields. Its message starts "Blocked URL: " and never contains userinfo,
// query strings or fragments. An unparseable URL is blocked too. A URL with
// an acceptable host but a scheme other than http, https, ws or wss fails
// with an error wrapping ErrUnsupportedScheme instead. net/http wraps these
// errors in *url.Error, and net.Dialer in *net.OpError; errors.Is sees
// through both.
package netguard
