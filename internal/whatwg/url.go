package whatwg

import (
	"errors"
	"net/netip"
	"strings"
)

// ErrInvalidURL is wrapped by every error that Parse, Normalize and
// ParseHost return.
var ErrInvalidURL = errors.New("invalid URL")

// invalid returns an error for the named failure. The input is never part
// of the message: it may hold credentials or tokens.
func invalid(reason string) error {
	return &parseError{reason}
}

type parseError struct{ reason string }

func (e *parseError) Error() string { return "whatwg: invalid URL: " + e.reason }
func (e *parseError) Unwrap() error { return ErrInvalidURL }

// A URL is a parsed absolute URL in canonical form. Every string field holds
// the serialised (percent-encoded, lower-cased where the standard says so)
// form of its part, so Href is plain concatenation.
//
// URLs are made by Parse. The fields may be read freely; the boolean fields
// record what the standard models as null versus empty, and must be kept
// consistent with the strings by anyone who edits a URL.
type URL struct {
	// Scheme is the lower-cased scheme, without the trailing ':'.
	Scheme string

	// Username and Password are the percent-encoded credentials, empty
	// when absent.
	Username string
	Password string

	// Host is the serialised host: a lower-case ASCII domain (punycode for
	// internationalised names, trailing dot kept), a dotted-decimal IPv4
	// address, a bracketed compressed IPv6 address ("[::1]"), or for
	// non-special schemes an opaque host. It is empty for file URLs without
	// a host and for URLs with no authority (see OmitHost).
	Host string

	// Port is the decimal port, or empty when absent or equal to the
	// scheme's default port.
	Port string

	// Path is the serialised path. For special schemes it always starts
	// with '/'. For a non-special URL without a host it may be an opaque
	// path, one that does not start with '/' ("mailto:x" has path "x").
	Path string

	// Query is the percent-encoded query, without the leading '?'.
	Query string

	// Fragment is the percent-encoded fragment, without the leading '#'.
	Fragment string

	// OmitHost reports that the URL has no host at all, as in "mailto:x"
	// or "urn:/x", rather than an empty one, as in "foo:///x". It is always
	// false for special schemes.
	OmitHost bool

	// ForceQuery reports that the URL has a query even though Query is
	// empty ("http://h/?").
	ForceQuery bool

	// ForceFragment reports that the URL has a fragment even though
	// Fragment is empty ("http://h/#").
	ForceFragment bool
}

// Href returns the URL serialised exactly as the WHATWG URL serializer does:
// what JavaScript's URL.href returns for the same input.
func (u *URL) Href() string {
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteByte(':')
	if !u.OmitHost {
		b.WriteString("//")
		if u.Username != "" || u.Password != "" {
			b.WriteString(u.Username)
			if u.Password != "" {
				b.WriteByte(':')
				b.WriteString(u.Password)
			}
			b.WriteByte('@')
		}
		b.WriteString(u.Host)
		if u.Port != "" {
			b.WriteByte(':')
			b.WriteString(u.Port)
		}
	} else if strings.HasPrefix(u.Path, "//") {
		// Without this, "web+demo:/.//not-a-host/" would serialise as
		// "web+demo://not-a-host/", which parses with a host.
		b.WriteString("/.")
	}
	b.WriteString(u.Path)
	if u.Query != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(u.Query)
	}
	if u.Fragment != "" || u.ForceFragment {
		b.WriteByte('#')
		b.WriteString(u.Fragment)
	}
	return b.String()
}

// Hostname returns Host without the brackets of an IPv6 address, in the
// form net.Dial and netip.ParseAddr expect.
func (u *URL) Hostname() string {
	if strings.HasPrefix(u.Host, "[") && strings.HasSuffix(u.Host, "]") {
		return u.Host[1 : len(u.Host)-1]
	}
	return u.Host
}

// IP returns the host as an address, and true, when the host is an IPv4 or
// IPv6 address. Hosts of non-special schemes are opaque, so "foo://1.2.3.4/"
// has no IP: only a bracketed IPv6 host is an address there.
func (u *URL) IP() (netip.Addr, bool) {
	if strings.HasPrefix(u.Host, "[") || Special(u.Scheme) {
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// Parse parses raw as an absolute URL with the WHATWG basic URL parser and
// no base URL. Leading and trailing C0 controls and spaces are removed, as
// are tabs and newlines anywhere. Invalid UTF-8 in raw is read as U+FFFD.
func Parse(raw string) (*URL, error) {
	return parse(raw)
}

// Normalize returns the canonical serialisation of raw: Parse followed by
// Href. Two URLs that a browser treats as the same normalise to the same
// string.
func Normalize(raw string) (string, error) {
	u, err := Parse(raw)
	if err != nil {
		return "", err
	}
	return u.Href(), nil
}

// Special reports whether scheme is one of the standard's special schemes:
// ftp, file, http, https, ws and wss.
func Special(scheme string) bool {
	switch scheme {
	case "ftp", "file", "http", "https", "ws", "wss":
		return true
	}
	return false
}

// defaultPort returns the default port of a special scheme, or "".
func defaultPort(scheme string) string {
	switch scheme {
	case "ftp":
		return "21"
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}
