package agent

import (
	"crypto/rand"
	"strings"
	"unicode"

	"github.com/agentmcp/agentmcp/internal/whatwg"
)

// MaxServerIDLength is the longest server id NormalizeServerID returns.
const MaxServerIDLength = 64

// NormalizeServerID turns any string into a stable server id matching
// ^[a-z][a-z0-9_-]{0,63}$, exactly as the seed's normalizeServerId:
// lower-case; every run of characters outside [a-z0-9_-] becomes one "-";
// runs of "-" collapse; leading and trailing "-" and "_" go; an id that is
// empty or does not start with a letter gets the prefix "id-" (so "" gives
// "id"); one longer than 64 characters is cut, with trailing "-" removed.
// It is idempotent.
func NormalizeServerID(s string) string {
	var b strings.Builder
	dash := false // the last character written is a "-"
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
			dash = false
			continue
		}
		// "-" itself and every other character: one "-" per run.
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	id := strings.Trim(b.String(), "-_")
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		id = strings.TrimRight("id-"+id, "-")
	}
	if len(id) > MaxServerIDLength {
		id = strings.TrimRight(id[:MaxServerIDLength], "-")
	}
	return id
}

// NormalizeURL returns the WHATWG serialisation of raw (new URL(raw).href):
// scheme and host lower-cased, default ports dropped, an empty path made
// "/", dot segments resolved, IPv4 and IPv6 literals canonical, IDN hosts in
// punycode. It is the URL AddMCPServer stores and dials. SameServerURL
// says whether two URLs name the same server.
func NormalizeURL(raw string) (string, error) { return whatwg.Normalize(raw) }

// SameServerURL reports whether a and b name the same server, as
// AddMCPServer compares them: alike once normalised with NormalizeURL,
// where one trailing slash of the path does not count
// (https://x.example/mcp and https://X.example:443/mcp/ are the same
// server). An invalid URL is the same as no other.
func SameServerURL(a, b string) bool {
	ka, err := urlKey(a)
	if err != nil {
		return false
	}
	kb, err := urlKey(b)
	return err == nil && ka == kb
}

// urlKey is what SameServerURL compares: the normalised URL without one
// trailing slash on its path ("/" itself stays).
func urlKey(raw string) (string, error) {
	u, err := whatwg.Parse(raw)
	if err != nil {
		return "", err
	}
	if len(u.Path) > 1 && strings.HasSuffix(u.Path, "/") {
		u.Path = u.Path[:len(u.Path)-1]
	}
	return u.Href(), nil
}

// newServerID returns a random id of 8 characters, as the seed's
// nanoid(8), but in the form every id has here (the help text's, and
// NormalizeServerID's): lower-case letters and digits, starting with a
// letter, so that it reads well, survives case-insensitive places and
// never looks like a flag. 26·36⁷ ≈ 2·10¹² ids.
func newServerID() string {
	const (
		letters = "abcdefghijklmnopqrstuvwxyz"
		chars   = letters + "0123456789"
	)
	var id [8]byte
	var buf [32]byte
	for i := 0; i < len(id); {
		rand.Read(buf[:])
		for _, c := range buf {
			if i == len(id) {
				break
			}
			// Draw without modulo bias: keep bytes below the largest
			// multiple of the alphabet's size.
			switch {
			case i == 0 && c < 26*9:
				id[0] = letters[int(c)%26]
			case i > 0 && c < 36*7:
				id[i] = chars[int(c)%36]
			default:
				continue
			}
			i++
		}
	}
	return string(id[:])
}

// kebab turns an agent class name into the path segment of its callback
// URL, as the seed does: all-caps names are lower-cased; otherwise each
// capital becomes "-" and its lower case, a leading "-" goes, "_" becomes
// "-", and one trailing "-" goes (TestOAuthAgent → test-o-auth-agent).
func kebab(name string) string {
	if strings.ToUpper(name) == name {
		return strings.ReplaceAll(strings.ToLower(name), "_", "-")
	}
	var b strings.Builder
	for _, r := range name {
		if unicode.IsUpper(r) {
			b.WriteByte('-')
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	s := strings.TrimPrefix(b.String(), "-")
	s = strings.ReplaceAll(s, "_", "-")
	return strings.TrimSuffix(s, "-")
}
