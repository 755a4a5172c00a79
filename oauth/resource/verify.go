package resource

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentmcp/agentmcp/netguard"
)

// Options configures a Verifier. Issuer is required; the zero value of
// every other field gives the default it documents.
type Options struct {
	// Issuer is the authorization server's issuer URL; its metadata is
	// read from Issuer's RFC 8414 (or OpenID) well-known URL.
	Issuer string

	// Scopes are the scopes a token must have. Nil means none.
	Scopes []string

	// HTTPClient fetches the authorization server's metadata and keys.
	// Nil means a client with a 10 second timeout behind an SSRF guard
	// (package netguard) with the default policy plus Issuer's host: the
	// issuer, which the operator named, may be on a private network, but
	// a jwks_uri its metadata names elsewhere must pass the guard, so a
	// metadata document cannot point the verifier at a cloud metadata
	// endpoint or another internal host. A client given here is used as
	// is.
	HTTPClient *http.Client

	// Now is the clock tokens are checked against. Nil means time.Now.
	Now func() time.Time
}

// ErrInvalidToken is wrapped by the reasons a token is refused; their text
// is safe to show (it never quotes the token).
var ErrInvalidToken = errors.New("invalid token")

// Verifier checks JWT access tokens of one authorization server.
type Verifier struct {
	opts Options
	hc   *http.Client
	now  func() time.Time

	// mu guards the fields below.
	mu      sync.Mutex
	keys    map[string]crypto.PublicKey // by kid
	fetched time.Time                   // when keys were last fetched
}

// New returns a Verifier of opts.Issuer's tokens. It does no I/O: the keys
// are fetched by the first Verify.
func New(opts *Options) *Verifier {
	v := &Verifier{opts: *opts, hc: opts.HTTPClient, now: opts.Now}
	v.opts.Scopes = slices.Clone(opts.Scopes)
	if v.hc == nil {
		v.hc = guardedClient(opts.Issuer)
	}
	if v.now == nil {
		v.now = time.Now
	}
	return v
}

// guardedClient is Options.HTTPClient's default: a client whose every
// request and redirect passes an SSRF guard with the default policy plus
// the issuer's host.
func guardedClient(issuer string) *http.Client {
	p := &netguard.Policy{}
	if u, err := url.Parse(issuer); err == nil && u.Hostname() != "" {
		p.Allow = []string{u.Hostname()}
	}
	g, err := netguard.New(p, nil)
	if err != nil {
		// The issuer's host is not a valid entry: the defaults alone.
		g, _ = netguard.New(&netguard.Policy{}, nil)
	}
	return g.HTTPClient(&http.Client{Timeout: 10 * time.Second})
}

// Verify checks tok, a JWT access token: its type, its signature by a key
// of the issuer's JWKS, its issuer, its audience, its expiry and its
// scopes, in that order. audience is called once the signature holds, for
// the audience the token must carry; an error it returns is returned as
// is. A refused token is an error wrapping ErrInvalidToken.
func (v *Verifier) Verify(ctx context.Context, tok string, audience func() (string, error)) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%w: not a JWT", ErrInvalidToken)
	}
	var header struct {
		Alg, Kid, Typ string
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return fmt.Errorf("%w: bad JWT header", ErrInvalidToken)
	}
	if header.Typ != "" && !strings.EqualFold(header.Typ, "at+jwt") && !strings.EqualFold(header.Typ, "application/at+jwt") && !strings.EqualFold(header.Typ, "JWT") {
		return fmt.Errorf("%w: JWT type %q is not an access token", ErrInvalidToken, header.Typ)
	}
	key, err := v.key(ctx, header.Kid)
	if err != nil {
		return err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("%w: bad signature encoding", ErrInvalidToken)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := key.(type) {
	case *rsa.PublicKey:
		if header.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) != nil {
			return fmt.Errorf("%w: bad signature", ErrInvalidToken)
		}
	case *ecdsa.PublicKey:
		if header.Alg != "ES256" || len(sig) != 64 || !ecdsa.Verify(k, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return fmt.Errorf("%w: bad signature", ErrInvalidToken)
		}
	default:
		return fmt.Errorf("%w: unsupported key", ErrInvalidToken)
	}
	var claims struct {
		Iss   string          `json:"iss"`
		Aud   json.RawMessage `json:"aud"`
		Exp   *float64        `json:"exp"`
		Nbf   *float64        `json:"nbf"`
		Scope string          `json:"scope"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return fmt.Errorf("%w: bad JWT claims", ErrInvalidToken)
	}
	now := v.now()
	const skew = 30 * time.Second
	want, err := audience()
	if err != nil {
		return err
	}
	switch {
	case claims.Iss != v.opts.Issuer:
		return fmt.Errorf("%w: issued by another authorization server", ErrInvalidToken)
	case !hasAudience(claims.Aud, want):
		return fmt.Errorf("%w: issued for another audience (want %s)", ErrInvalidToken, want)
	case claims.Exp == nil:
		return fmt.Errorf("%w: no expiry", ErrInvalidToken)
	case now.After(time.Unix(int64(*claims.Exp), 0).Add(skew)):
		return fmt.Errorf("%w: expired", ErrInvalidToken)
	case claims.Nbf != nil && now.Add(skew).Before(time.Unix(int64(*claims.Nbf), 0)):
		return fmt.Errorf("%w: not valid yet", ErrInvalidToken)
	}
	granted := strings.Fields(claims.Scope)
	for _, s := range v.opts.Scopes {
		if !slices.Contains(granted, s) {
			return fmt.Errorf("%w: scope %q is missing", ErrInvalidToken, s)
		}
	}
	return nil
}

// Subject names who tok, a token Verify accepted, is for, to bind what it
// opens to them: "sub:" and its sub claim, else "client:" and its client
// (client_id, else azp), else "token:" and a hash of the token. It reads
// the claims without checking them again.
func Subject(tok string) string {
	var claims struct {
		Sub      string `json:"sub"`
		ClientID string `json:"client_id"`
		Azp      string `json:"azp"`
	}
	if parts := strings.Split(tok, "."); len(parts) == 3 {
		decodeSegment(parts[1], &claims)
	}
	switch {
	case claims.Sub != "":
		return "sub:" + claims.Sub
	case claims.ClientID != "":
		return "client:" + claims.ClientID
	case claims.Azp != "":
		return "client:" + claims.Azp
	}
	sum := sha256.Sum256([]byte(tok))
	return "token:" + hex.EncodeToString(sum[:])
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// hasAudience reports whether an aud claim (a string or an array) holds
// want.
func hasAudience(aud json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(aud, &many) == nil && slices.Contains(many, want)
}

// keyRefetch is how soon the keys are fetched again for an unknown key id.
const keyRefetch = 30 * time.Second

// key returns the signing key kid, fetching the keys when they were never
// fetched, or when kid is unknown and they were not fetched in the last
// keyRefetch (a key rotation), so that made-up key ids cannot make the
// verifier hammer the authorization server.
func (v *Verifier) key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.keys[kid]; ok {
		return k, nil
	}
	if v.keys != nil && v.now().Sub(v.fetched) < keyRefetch {
		return nil, fmt.Errorf("%w: unknown signing key", ErrInvalidToken)
	}
	// Fetched under the lock: concurrent requests wait for one fetch.
	keys, err := v.fetchKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the keys of authorization server %s: %w", v.opts.Issuer, err)
	}
	v.keys, v.fetched = keys, v.now()
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("%w: unknown signing key", ErrInvalidToken)
}

// metadataURLs are where an issuer's metadata may be: RFC 8414's, then
// OpenID Connect's two (the well-known suffix inserted before the issuer's
// path, or appended to it).
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	origin, p := u.Scheme+"://"+u.Host, strings.TrimSuffix(u.EscapedPath(), "/")
	out := []string{origin + "/.well-known/oauth-authorization-server" + p, origin + "/.well-known/openid-configuration" + p}
	if p != "" {
		out = append(out, origin+p+"/.well-known/openid-configuration")
	}
	return out
}

// fetchKeys reads the issuer's metadata, then its JWKS.
func (v *Verifier) fetchKeys(ctx context.Context) (map[string]crypto.PublicKey, error) {
	var meta *oauthex.AuthServerMeta
	var err error
	for _, u := range metadataURLs(v.opts.Issuer) {
		if meta, err = oauthex.GetAuthServerMeta(ctx, u, v.opts.Issuer, v.hc); err == nil && meta != nil {
			break
		}
	}
	if meta == nil {
		if err == nil {
			err = errors.New("no metadata")
		}
		return nil, err
	}
	if meta.JWKSURI == "" {
		return nil, errors.New("its metadata has no jwks_uri")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, meta.JWKSURI, nil)
	if err != nil {
		return nil, err
	}
	res, err := v.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks_uri: %s", res.Status)
	}
	var set struct {
		Keys []struct {
			Kty, Kid, Use, Crv, N, E, X, Y string
		}
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("jwks_uri: %w", err)
	}
	keys := map[string]crypto.PublicKey{}
	b := func(s string) *big.Int {
		v, _ := base64.RawURLEncoding.DecodeString(s)
		return new(big.Int).SetBytes(v)
	}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch {
		case k.Kty == "RSA" && k.N != "" && k.E != "":
			keys[k.Kid] = &rsa.PublicKey{N: b(k.N), E: int(b(k.E).Int64())}
		case k.Kty == "EC" && k.Crv == "P-256":
			// The uncompressed point 0x04 || X || Y, each coordinate
			// 32 bytes (a shorter one left-padded, as the big integer
			// it stands for); a longer one, or a point off the curve, is
			// refused.
			x, y := b(k.X), b(k.Y)
			if x.BitLen() > 256 || y.BitLen() > 256 {
				continue
			}
			point := append([]byte{4}, x.FillBytes(make([]byte, 32))...)
			point = append(point, y.FillBytes(make([]byte, 32))...)
			if pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point); err == nil {
				keys[k.Kid] = pub
			}
		}
	}
	return keys, nil
}
