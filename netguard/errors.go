package netguard

import (
	"errors"
	"net/netip"
)

// ErrBlockedURL is wrapped by every error that reports a destination the
// policy refuses: test for it with errors.Is. The concrete error is a
// *BlockedError.
var ErrBlockedURL = errors.New("netguard: blocked URL")

// ErrUnsupportedScheme is wrapped by the error CheckURL returns for a URL
// whose host is acceptable but whose scheme is not http, https, ws or wss.
// It is a different error from ErrBlockedURL because nothing about the
// destination is unsafe: the URL is simply not one an MCP client can use.
var ErrUnsupportedScheme = errors.New("netguard: unsupported URL scheme")

// A BlockedError reports a URL, dial address or IP address that the policy
// refuses. Its fields are safe to log and to show to users: URL carries no
// credentials, query or fragment.
type BlockedError struct {
	// URL is what was checked, redacted: the URL without userinfo, query
	// and fragment for CheckURL and redirects, the "host:port" being
	// dialled for dial-time checks, the address for CheckAddr.
	URL string

	// Host is the host that was judged, in canonical form: a lower-case
	// ASCII name, a dotted IPv4 address or a bracketed IPv6 address. It is
	// empty when the URL could not be parsed.
	Host string

	// Addr is the IP address that was judged, if any: the literal address
	// of the URL, or the address a name resolved to at dial time.
	Addr netip.Addr

	// Reason says briefly why the destination is blocked, for example
	// "10.0.0.5 is a private address".
	Reason string
}

// Error returns the message the seed documents, "Blocked URL: <url> — MCP
// client connections to private/internal addresses are not allowed",
// followed by the reason in parentheses.
func (e *BlockedError) Error() string {
	msg := "Blocked URL: " + e.URL + " — MCP client connections to private/internal addresses are not allowed"
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// Unwrap returns ErrBlockedURL.
func (e *BlockedError) Unwrap() error { return ErrBlockedURL }
