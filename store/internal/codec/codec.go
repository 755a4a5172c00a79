// Package codec holds what the store backends share: how options and
// key-value entries are sealed, argument checks, the clock and lock ids.
package codec

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmcp/agentmcp/store"
)

// Additional data binds a sealed value to the namespace (and, for key-value
// entries, the key) it is stored under, so a value copied into another
// agent's row does not decrypt. The server id is not bound: RenameServer
// moves entries without re-encrypting them.
func optionsAD(ns string) []byte { return []byte("agentmcp/server-options\x00" + ns) }
func kvAD(ns, key string) []byte { return []byte("agentmcp/kv\x00" + ns + "\x00" + key) }

// sealedOptions is the document sealed in the options column: the server's
// options and, when the server URL has secret parts, the whole URL.
type sealedOptions struct {
	store.ServerOptions
	// URL is the server URL when it has userinfo, a query or a fragment;
	// the url column then holds it without them (PublicURL). Empty means
	// the url column holds the whole URL, as in rows written before URLs
	// were split.
	URL string `json:"url,omitempty"`
}

// SealServer returns the stored forms of a server's URL and options: the
// url column, which holds the URL without its secret parts (userinfo,
// query, fragment), and the sealed options, which hold the whole URL when
// it has such parts. A URL's secrets are thus encrypted with the header
// values when the Cipher has a key.
func SealServer(c *store.Cipher, ns, rawURL string, o store.ServerOptions) (urlColumn string, options []byte, err error) {
	doc := sealedOptions{ServerOptions: o}
	urlColumn = rawURL
	if public, secret := PublicURL(rawURL); secret {
		urlColumn, doc.URL = public, rawURL
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", nil, fmt.Errorf("encode options: %w", err)
	}
	return urlColumn, c.Seal(b, optionsAD(ns)), nil
}

// OpenServer decodes what SealServer stored: the server's URL and options.
// Rows written before URLs were split (the whole URL in the url column)
// read the same.
func OpenServer(c *store.Cipher, ns, urlColumn string, options []byte) (rawURL string, o store.ServerOptions, err error) {
	var doc sealedOptions
	b, err := c.Open(options, optionsAD(ns))
	if err != nil {
		return "", o, fmt.Errorf("options: %w", err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", o, fmt.Errorf("decode options: %w", err)
	}
	if doc.URL != "" {
		return doc.URL, doc.ServerOptions, nil
	}
	return urlColumn, doc.ServerOptions, nil
}

// PublicURL returns rawURL without userinfo, query and fragment, and
// whether it had any of them (or could not be parsed: then public is "").
func PublicURL(rawURL string) (public string, secret bool) {
	if !strings.ContainsAny(rawURL, "@?#") {
		return rawURL, false
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", true
	}
	if u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && u.RawFragment == "" && !strings.HasSuffix(rawURL, "#") {
		return rawURL, false
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String(), true
}

// SealValue returns the stored form of a key-value entry's value.
func SealValue(c *store.Cipher, ns, key string, v []byte) []byte {
	return c.Seal(v, kvAD(ns, key))
}

// OpenValue decodes the stored form of a key-value entry's value.
func OpenValue(c *store.Cipher, ns, key string, stored []byte) ([]byte, error) {
	v, err := c.Open(stored, kvAD(ns, key))
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	return v, nil
}

// Clock returns a store's time: UTC, truncated to microseconds so that
// every backend stores and returns the same instant.
type Clock func() time.Time

// NewClock returns a Clock that reads now, or time.Now when now is nil.
func NewClock(now func() time.Time) Clock {
	if now == nil {
		now = time.Now
	}
	return func() time.Time { return now().UTC().Truncate(time.Microsecond) }
}

// Expiry returns t as stored: truncated like Clock, or zero for "never".
func Expiry(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Microsecond)
}

var (
	errNoNamespace = errors.New("empty namespace")
	errNoID        = errors.New("empty server id")
	errNoKey       = errors.New("empty key")
	errBadText     = errors.New("namespace, id and key must be valid UTF-8 without NUL bytes")
)

// text reports whether s can be stored as text by every backend (Postgres
// text holds neither NUL nor invalid UTF-8; SQLite is held to the same
// rules so that both behave alike).
func text(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// CheckNamespace checks a namespace.
func CheckNamespace(ns string) error {
	switch {
	case ns == "":
		return errNoNamespace
	case !text(ns):
		return errBadText
	}
	return nil
}

// CheckScope checks a namespace and server id.
func CheckScope(ns, id string) error {
	if err := CheckNamespace(ns); err != nil {
		return err
	}
	switch {
	case id == "":
		return errNoID
	case !text(id):
		return errBadText
	}
	return nil
}

// CheckKey checks a key-value entry's scope and key (or key prefix, when
// empty is allowed).
func CheckKey(ns, id, key string, emptyOK bool) error {
	if err := CheckScope(ns, id); err != nil {
		return err
	}
	switch {
	case key == "" && !emptyOK:
		return errNoKey
	case !text(key):
		return errBadText
	}
	return nil
}

// ErrIDChanged is returned by UpdateServer when fn changed the namespace or id.
var ErrIDChanged = errors.New("update must not change namespace or id (use RenameServer)")

// LockID returns the 64-bit id of the lock named by (ns, serverID, name),
// for databases whose locks are numbered (Postgres advisory locks). Distinct
// names may share an id; that only makes them exclude each other.
func LockID(ns, serverID, name string) int64 {
	h := sha256.Sum256([]byte("agentmcp/lock\x00" + ns + "\x00" + serverID + "\x00" + name))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// LockName returns the unique string name of the lock named by (ns,
// serverID, name), for process-local lock tables.
func LockName(ns, serverID, name string) string {
	return ns + "\x00" + serverID + "\x00" + name
}

// SealedServer is a server in the form the backends write it.
type SealedServer struct {
	store.Server
	URLColumn string // the url column (SealServer)
	Options   []byte // the sealed options (SealServer)
}

// SealBatch checks and seals the servers of a PutServers call. A server
// that appears more than once (same namespace and id) is written once, at
// the place of its first appearance with the fields of its last, which is
// what PutServer for each in turn would leave. An invalid server fails the
// batch, naming it.
func SealBatch(c *store.Cipher, servers []store.Server) ([]SealedServer, error) {
	type key struct{ ns, id string }
	at := make(map[key]int, len(servers))
	out := make([]SealedServer, 0, len(servers))
	for i, srv := range servers {
		if err := CheckScope(srv.Namespace, srv.ID); err != nil {
			return nil, fmt.Errorf("server %d (%q of %q): %w", i, srv.ID, srv.Namespace, err)
		}
		urlColumn, opts, err := SealServer(c, srv.Namespace, srv.URL, srv.Options)
		if err != nil {
			return nil, fmt.Errorf("server %q of %q: %w", srv.ID, srv.Namespace, err)
		}
		sealed := SealedServer{Server: srv, URLColumn: urlColumn, Options: opts}
		k := key{srv.Namespace, srv.ID}
		if j, dup := at[k]; dup {
			out[j] = sealed
			continue
		}
		at[k] = len(out)
		out = append(out, sealed)
	}
	return out, nil
}

// CheckExposure checks a namespace and the patterns of its exposure rules
// (text every backend can store; their syntax is agent.Exposure's
// business).
func CheckExposure(ns string, e store.Exposure) error {
	if err := CheckNamespace(ns); err != nil {
		return err
	}
	for _, p := range append(slices.Clip(e.Allow), e.Deny...) {
		if !text(p) {
			return errBadText
		}
	}
	return nil
}
