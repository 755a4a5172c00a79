package cluster

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

// Signatures of the requests replicas forward to each other: package
// server signs each request it forwards to an agent's owner, and the
// owner's cluster listener (server.ClusterHandler) serves only requests
// signed with the cluster key, each once, within Skew of its time.

// SignatureHeader carries the signature of a request one replica forwards
// to another (SignRequest, Signer).
const SignatureHeader = "Agentmcp-Cluster-Signature"

// Skew bounds how far a signed request's time may be from the
// receiving replica's clock, either way: the replicas' clocks must agree
// within it (NTP does), and a recorded request is refused once it is
// older.
const Skew = 30 * time.Second

// maxReplayEntries bounds the signatures a replica remembers per
// generation (two generations of 2*Skew each): about 8,700
// forwarded requests a second sustained, 40 MB at most. Past it, forwarded
// requests are answered 503 (retry) rather than remembered less.
const maxReplayEntries = 1 << 19

// clusterSignVersion starts every signed message and header.
const clusterSignVersion = "v1"

// SignRequest signs req for a cluster listener (server.ClusterHandler)
// with the cluster key, as a replica forwarding it does: its method, Host,
// request URI (path and query), X-Forwarded-Proto, a hash of body (its
// body, nil for none), the time, a random nonce and from, who signs (a
// replica id, or a tool's name; no spaces). Set those before signing. The
// signature is good once, within Skew of now: sign each request, and each
// retry, again.
func SignRequest(req *http.Request, key, from string, body []byte) error {
	if from == "" || strings.ContainsAny(from, " \r\n") {
		return fmt.Errorf("cluster: signature: invalid signer %q", from)
	}
	sign(req, []byte(key), from, time.Now(), sha256.Sum256(body))
	return nil
}

// sign sets req's signature by from at the time at, bodySum being its
// body's hash.
func sign(req *http.Request, key []byte, from string, at time.Time, bodySum [32]byte) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	req.Header.Set(SignatureHeader, signature(key, from, at, newNonce(),
		req.Method, host, req.URL.RequestURI(), req.Header.Get("X-Forwarded-Proto"), bodySum))
}

// newNonce returns 16 random bytes, base64url.
func newNonce() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// signature is the header value signing a request's parts.
func signature(key []byte, from string, at time.Time, nonce, method, host, uri, proto string, bodySum [32]byte) string {
	ts := strconv.FormatInt(at.UnixNano(), 10)
	mac := signatureMAC(key, from, ts, nonce, method, host, uri, proto, bodySum)
	return clusterSignVersion + " " + from + " " + ts + " " + nonce + " " + base64.RawURLEncoding.EncodeToString(mac)
}

// signatureMAC is HMAC-SHA256, keyed with the cluster key, of the request's
// parts, one a line (no part but the URI and the Host can hold a newline,
// and neither can in a request net/http sends or parses).
func signatureMAC(key []byte, from, ts, nonce, method, host, uri, proto string, bodySum [32]byte) []byte {
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
)

// ErrReplayFull is Signer.Check's error when it remembers as many
// signatures as it may: the request may be sent again a little later.
var ErrReplayFull = errors.New("too many forwarded requests to remember; retry")

// Signer signs the requests a replica forwards with the cluster key, and
// checks those its cluster listener receives: signed with the key, within
// Skew of its clock, each only once (a replay cache of two generations,
// bounded). It is safe for concurrent use.
type Signer struct {
	key []byte
	now func() time.Time

	// mu guards the replay cache: the signatures (the first 16 bytes of
	// each MAC) seen in the current and the previous generation, each
	// 2*Skew long, so that a signature is remembered for as long as its
	// time is within Skew of the clock.
	mu         sync.Mutex
	cur, prev  map[[16]byte]struct{}
	generation time.Time // when cur began
}

// NewSigner returns a Signer with the cluster key.
func NewSigner(key string) *Signer {
	return &Signer{key: []byte(key), now: time.Now, cur: map[[16]byte]struct{}{}, prev: map[[16]byte]struct{}{}}
}

// Sign signs req (its method, Host, request URI, X-Forwarded-Proto, and
// bodySum, its body's SHA-256) as from, at the time at: good once, within
// Skew of at.
func (c *Signer) Sign(req *http.Request, from string, at time.Time, bodySum [32]byte) {
	sign(req, c.key, from, at, bodySum)
}

// Signature is a parsed SignatureHeader.
type Signature struct {
	from, ts, nonce string
	mac             []byte
}

// Parse reads r's signature and checks its time, before r's body is read:
// a request without a well-formed, current signature is refused without
// reading its body.
func (c *Signer) Parse(r *http.Request) (Signature, error) {
	v, ok := strings.CutPrefix(r.Header.Get(SignatureHeader), clusterSignVersion+" ")
	if !ok {
		return Signature{}, errUnsigned
	}
	parts := strings.Split(v, " ")
	if len(parts) != 4 {
		return Signature{}, errUnsigned
	}
	sig := Signature{from: parts[0], ts: parts[1], nonce: parts[2]}
	mac, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || len(mac) != sha256.Size {
		return Signature{}, errUnsigned
	}
	sig.mac = mac
	nanos, err := strconv.ParseInt(sig.ts, 10, 64)
	if err != nil {
		return Signature{}, errUnsigned
	}
	if d := c.now().Sub(time.Unix(0, nanos)); d > Skew || d < -Skew {
		return Signature{}, errStale
	}
	return sig, nil
}

// Check verifies sig, r's signature (Parse), given r's body, and that it
// was not seen before (it is then remembered): an error says why not
// (ErrReplayFull: retry later).
func (c *Signer) Check(r *http.Request, sig Signature, body []byte) error {
	want := signatureMAC(c.key, sig.from, sig.ts, sig.nonce, r.Method, r.Host, r.RequestURI, r.Header.Get("X-Forwarded-Proto"), sha256.Sum256(body))
	if !hmac.Equal(sig.mac, want) {
		return errUnsigned
	}
	return c.remember([16]byte(sig.mac[:16]), c.now())
}

// remember adds a signature to the replay cache, or says it is there.
func (c *Signer) remember(id [16]byte, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	const period = 2 * Skew
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
		return ErrReplayFull
	}
	c.cur[id] = struct{}{}
	return nil
}
