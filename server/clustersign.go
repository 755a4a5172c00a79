package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ClusterSignatureHeader carries the signature of a request one replica
// forwards to another (SignClusterRequest): the cluster listener
// (ClusterHandler) serves only requests signed with the cluster key, each
// once, within ClusterSkew of its time.
const ClusterSignatureHeader = "Agentmcp-Cluster-Signature"

// ClusterSkew bounds how far a signed request's time may be from the
// receiving replica's clock, either way: the replicas' clocks must agree
// within it (NTP does), and a recorded request is refused once it is
// older.
const ClusterSkew = 30 * time.Second

// maxReplayEntries bounds the signatures a replica remembers per
// generation (two generations of 2*ClusterSkew each): about 8,700
// forwarded requests a second sustained, 40 MB at most. Past it, forwarded
// requests are answered 503 (retry) rather than remembered less.
const maxReplayEntries = 1 << 19

// clusterSignVersion starts every signed message and header.
const clusterSignVersion = "v1"

// SignClusterRequest signs req for a cluster listener (ClusterHandler)
// with the cluster key, as a replica forwarding it does: its method, Host,
// request URI (path and query), X-Forwarded-Proto, a hash of body (its
// body, nil for none), the time, a random nonce and from, who signs (a
// replica id, or a tool's name; no spaces). Set those before signing. The
// signature is good once, within ClusterSkew of now: sign each request,
// and each retry, again.
func SignClusterRequest(req *http.Request, key, from string, body []byte) error {
	if from == "" || strings.ContainsAny(from, " \r\n") {
		return fmt.Errorf("server: cluster signature: invalid signer %q", from)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	req.Header.Set(ClusterSignatureHeader, clusterSignature([]byte(key), from, time.Now(), newNonce(),
		req.Method, host, req.URL.RequestURI(), req.Header.Get("X-Forwarded-Proto"), sha256.Sum256(body)))
	return nil
}

// newNonce returns 16 random bytes, base64url.
func newNonce() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// clusterSignature is the header value signing a request's parts.
func clusterSignature(key []byte, from string, at time.Time, nonce, method, host, uri, proto string, bodySum [32]byte) string {
	ts := strconv.FormatInt(at.UnixNano(), 10)
	mac := clusterMAC(key, from, ts, nonce, method, host, uri, proto, bodySum)
	return clusterSignVersion + " " + from + " " + ts + " " + nonce + " " + base64.RawURLEncoding.EncodeToString(mac)
}

// clusterMAC is HMAC-SHA256, keyed with the cluster key, of the request's
// parts, one a line (no part but the URI and the Host can hold a newline,
// and neither can in a request net/http sends or parses).
func clusterMAC(key []byte, from, ts, nonce, method, host, uri, proto string, bodySum [32]byte) []byte {
	m := hmac.New(sha256.New, key)
	var sum [64]byte
	hex.Encode(sum[:], bodySum[:])
	for _, part := range []string{clusterSignVersion, from, ts, nonce, method, host, uri, proto} {
		m.Write([]byte(part))
		m.Write([]byte{'\n'})
	}
	m.Write(sum[:])
	return m.Sum(nil)
}

// The reasons a signed request is refused.
var (
	errUnsigned = errors.New("not a request from a replica of this cluster")
	errStale    = errors.New("the request's signature is stale (or the replicas' clocks disagree by more than 30 s)")
	errReplayed = errors.New("the request's signature was used before")
	errFull     = errors.New("too many forwarded requests to remember; retry")
)

// clusterAuth checks the signatures of the requests to the cluster
// listener.
type clusterAuth struct {
	key []byte
	now func() time.Time

	// mu guards the replay cache: the signatures (the first 16 bytes of
	// each MAC) seen in the current and the previous generation, each
	// 2*ClusterSkew long, so that a signature is remembered for as long as
	// its time is within ClusterSkew of the clock.
	mu         sync.Mutex
	cur, prev  map[[16]byte]struct{}
	generation time.Time // when cur began
}

func newClusterAuth(key string) *clusterAuth {
	return &clusterAuth{key: []byte(key), now: time.Now, cur: map[[16]byte]struct{}{}, prev: map[[16]byte]struct{}{}}
}

// signature is a parsed ClusterSignatureHeader.
type signature struct {
	from, ts, nonce string
	mac             []byte
}

// parse reads r's signature and checks its time, before r's body is read:
// a request without a well-formed, current signature is refused without
// reading its body.
func (c *clusterAuth) parse(r *http.Request) (signature, error) {
	v, ok := strings.CutPrefix(r.Header.Get(ClusterSignatureHeader), clusterSignVersion+" ")
	if !ok {
		return signature{}, errUnsigned
	}
	parts := strings.Split(v, " ")
	if len(parts) != 4 {
		return signature{}, errUnsigned
	}
	sig := signature{from: parts[0], ts: parts[1], nonce: parts[2]}
	mac, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || len(mac) != sha256.Size {
		return signature{}, errUnsigned
	}
	sig.mac = mac
	nanos, err := strconv.ParseInt(sig.ts, 10, 64)
	if err != nil {
		return signature{}, errUnsigned
	}
	if d := c.now().Sub(time.Unix(0, nanos)); d > ClusterSkew || d < -ClusterSkew {
		return signature{}, errStale
	}
	return sig, nil
}

// check verifies sig, r's signature, given r's body, and that it was not
// seen before (it is then remembered).
func (c *clusterAuth) check(r *http.Request, sig signature, body []byte) error {
	want := clusterMAC(c.key, sig.from, sig.ts, sig.nonce, r.Method, r.Host, r.RequestURI, r.Header.Get("X-Forwarded-Proto"), sha256.Sum256(body))
	if !hmac.Equal(sig.mac, want) {
		return errUnsigned
	}
	return c.remember([16]byte(sig.mac[:16]), c.now())
}

// remember adds a signature to the replay cache, or says it is there.
func (c *clusterAuth) remember(id [16]byte, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	const period = 2 * ClusterSkew
	switch age := now.Sub(c.generation); {
	case age >= 2*period || age < 0:
		c.prev, c.cur, c.generation = map[[16]byte]struct{}{}, map[[16]byte]struct{}{}, now
	case age >= period:
		c.prev, c.cur, c.generation = c.cur, map[[16]byte]struct{}{}, c.generation.Add(period)
	}
	if _, ok := c.cur[id]; ok {
		return errReplayed
	}
	if _, ok := c.prev[id]; ok {
		return errReplayed
	}
	if len(c.cur) >= maxReplayEntries {
		return errFull
	}
	c.cur[id] = struct{}{}
	return nil
}
