package server

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/netguard"
)

// OAuthOptions make the agents' MCP endpoints OAuth 2.1 resource servers
// of an external authorization server, so that an MCP host can sign in the
// standard way: a request without a valid token gets 401 with a
// WWW-Authenticate challenge naming the endpoint's protected resource
// metadata (RFC 9728), which names the authorization server.
//
// Access tokens are verified as JWTs (RFC 9068): signed (RS256 or ES256)
// by a key of the authorization server's JWKS (its metadata's jwks_uri),
// issued by Issuer, for Audience, not expired. JWTs rather than token
// introspection (RFC 7662): a request costs no round trip to the
// authorization server (the keys are fetched once and again only for an
// unknown key id), and the server needs no client credentials of its own;
// the price is that a revoked token works until it expires, so keep
// access tokens short-lived.
type OAuthOptions struct {
	// Issuer is the authorization server's issuer URL; its metadata is
	// read from Issuer's RFC 8414 (or OpenID) well-known URL. Required.
	Issuer string

	// Audience is the audience (aud) a token must carry. Empty means the
	// endpoint's own URL, the resource indicator (RFC 8707) an MCP host
	// asks tokens for: at the public URL (Options.Agent.CallbackHost) when
	// there is one; else at the request's Host only when it names this
	// machine's loopback interface or one of Options.AllowedHosts, with the
	// port of the listener the request came in on. A request for another
	// Host is then refused (403 host_not_allowed) unless it carries the
	// server's own token: the client cannot choose the audience its token
	// is checked against.
	Audience string

	// Scopes are the scopes a token must have, also advertised as
	// scopes_supported. Nil means none.
	Scopes []string

	// HTTPClient fetches the authorization server's metadata and keys.
	// Nil means a client with a 10 second timeout behind an SSRF guard
	// (package netguard) with the default policy plus Issuer's host: the
	// issuer, which the operator named, may be on a private network, but
	// a jwks_uri its metadata names elsewhere must pass the guard, so a
	// metadata document cannot point the server at a cloud metadata
	// endpoint or another internal host. A client given here is used as
	// is.
	HTTPClient *http.Client

	// Now is the clock tokens are checked against. Nil means time.Now.
	Now func() time.Time
}

// resourceMetadataRoute serves the protected resource metadata of an
// agent's MCP endpoint (RFC 9728 §3.1: the well-known prefix inserted
// before the resource's path). It needs no token.
const resourceMetadataRoute = "GET /.well-known/oauth-protected-resource/agents/{class}/{name}/mcp"

// wellKnownResource is the RFC 9728 well-known prefix.
const wellKnownResource = "/.well-known/oauth-protected-resource"

// resourceServer checks the OAuth access tokens of the MCP endpoints.
type resourceServer struct {
	opts      OAuthOptions
	hc        *http.Client
	now       func() time.Time
	publicURL string // the server's public origin, "" for the request's
	// hostServed reports whether a host name (no port) is one the server
	// serves as its own (security.hostAllowed); nil: none.
	hostServed func(host string) bool

	// mu guards the fields below.
	mu      sync.Mutex
	keys    map[string]crypto.PublicKey // by kid
	fetched time.Time                   // when keys were last fetched
}

func newResourceServer(o *OAuthOptions, publicURL string) *resourceServer {
	rs := &resourceServer{opts: *o, hc: o.HTTPClient, now: o.Now, publicURL: strings.TrimSuffix(publicURL, "/")}
	rs.opts.Scopes = slices.Clone(o.Scopes)
	if rs.hc == nil {
		rs.hc = guardedClient(o.Issuer)
	}
	if rs.now == nil {
		rs.now = time.Now
	}
	return rs
}

// guardedClient is OAuthOptions.HTTPClient's default: a client whose every
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

// endpoint returns the URL of the MCP endpoint r is for, and of its
// metadata. Without a public URL the origin is r's, and ok reports whether
// it is this server's (ownOrigin); with an Audience the origin names the
// endpoint only, and any is ok.
func (rs *resourceServer) endpoint(r *http.Request) (resource, metadata string, ok bool) {
	origin, ok := rs.publicURL, true
	if origin == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
		ok = rs.opts.Audience != "" || rs.ownOrigin(r, scheme)
	}
	// The request is for the endpoint or for its metadata: the path
	// (as routed, /agents/{class}/{name}/mcp) names the endpoint either way.
	p := strings.TrimPrefix(r.URL.EscapedPath(), wellKnownResource)
	return origin + p, origin + wellKnownResource + p, ok
}

// ownOrigin reports whether r's Host names this server: a host it serves
// (a loopback name or address, or an allowed host) and the port of the
// listener r came in on (the scheme's default when the Host has none). A
// Host header is the client's to write: any other would let it choose the
// audience its token is checked against.
func (rs *resourceServer) ownOrigin(r *http.Request, scheme string) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil || rs.hostServed == nil {
		return false
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
		if scheme == "https" {
			port = "443"
		}
	}
	_, localPort, err := net.SplitHostPort(local.String())
	return err == nil && port == localPort && rs.hostServed(host)
}

// refuseHost answers a request whose Host is not this server's when the
// audience would come from it.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	refuse(w, r, apiErrorf(http.StatusForbidden, api.CodeHostNotAllowed,
		"host %q is not this server's: access tokens are accepted for its public URL (agentmcp serve --public-url), or for loopback and allowed host names at the port it listens on", r.Host))
}

// challenge answers 401 with the RFC 9728 challenge.
func (rs *resourceServer) challenge(w http.ResponseWriter, r *http.Request, reason string) {
	_, metadata, ok := rs.endpoint(r)
	if !ok {
		refuseHost(w, r)
		return
	}
	params := fmt.Sprintf("resource_metadata=%q", metadata)
	if len(rs.opts.Scopes) > 0 {
		params += fmt.Sprintf(", scope=%q", strings.Join(rs.opts.Scopes, " "))
	}
	if reason != "" {
		params += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+params)
	msg := "an access token is required: sign in with the authorization server named by the resource metadata (WWW-Authenticate), or send the access token of agentmcp serve"
	if reason != "" {
		msg = "the access token is not valid here: " + reason
	}
	refuse(w, r, apiErrorf(http.StatusUnauthorized, api.CodeUnauthorized, "%s", msg))
}

// serveMetadata serves an endpoint's protected resource metadata.
func (rs *resourceServer) serveMetadata(w http.ResponseWriter, r *http.Request) {
	resource, _, ok := rs.endpoint(r)
	if !ok {
		refuseHost(w, r)
		return
	}
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{rs.opts.Issuer},
		ScopesSupported:        rs.opts.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "agentmcp agent " + r.PathValue("class") + "/" + r.PathValue("name"),
	}).ServeHTTP(w, r)
}

// bearerToken returns r's bearer token, or "".
func bearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// errToken is wrapped by the reasons a token is refused; their text is
// safe to show (it never quotes the token).
var errToken = errors.New("invalid token")

// errHostNotServed refuses a token when the audience would come from a
// Host that is not this server's (resourceServer.ownOrigin).
var errHostNotServed = errors.New("host not served")

// verify checks a JWT access token for the endpoint r is for.
func (rs *resourceServer) verify(ctx context.Context, r *http.Request, tok string) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%w: not a JWT", errToken)
	}
	var header struct {
		Alg, Kid, Typ string
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return fmt.Errorf("%w: bad JWT header", errToken)
	}
	if header.Typ != "" && !strings.EqualFold(header.Typ, "at+jwt") && !strings.EqualFold(header.Typ, "application/at+jwt") && !strings.EqualFold(header.Typ, "JWT") {
		return fmt.Errorf("%w: JWT type %q is not an access token", errToken, header.Typ)
	}
	key, err := rs.key(ctx, header.Kid)
	if err != nil {
		return err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("%w: bad signature encoding", errToken)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := key.(type) {
	case *rsa.PublicKey:
		if header.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) != nil {
			return fmt.Errorf("%w: bad signature", errToken)
		}
	case *ecdsa.PublicKey:
		if header.Alg != "ES256" || len(sig) != 64 || !ecdsa.Verify(k, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return fmt.Errorf("%w: bad signature", errToken)
		}
	default:
		return fmt.Errorf("%w: unsupported key", errToken)
	}
	var claims struct {
		Iss   string          `json:"iss"`
		Aud   json.RawMessage `json:"aud"`
		Exp   *float64        `json:"exp"`
		Nbf   *float64        `json:"nbf"`
		Scope string          `json:"scope"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return fmt.Errorf("%w: bad JWT claims", errToken)
	}
	now := rs.now()
	const skew = 30 * time.Second
	audience := rs.opts.Audience
	if audience == "" {
		var ok bool
		if audience, _, ok = rs.endpoint(r); !ok {
			return errHostNotServed
		}
	}
	switch {
	case claims.Iss != rs.opts.Issuer:
		return fmt.Errorf("%w: issued by another authorization server", errToken)
	case !hasAudience(claims.Aud, audience):
		return fmt.Errorf("%w: issued for another audience (want %s)", errToken, audience)
	case claims.Exp == nil:
		return fmt.Errorf("%w: no expiry", errToken)
	case now.After(time.Unix(int64(*claims.Exp), 0).Add(skew)):
		return fmt.Errorf("%w: expired", errToken)
	case claims.Nbf != nil && now.Add(skew).Before(time.Unix(int64(*claims.Nbf), 0)):
		return fmt.Errorf("%w: not valid yet", errToken)
	}
	granted := strings.Fields(claims.Scope)
	for _, s := range rs.opts.Scopes {
		if !slices.Contains(granted, s) {
			return fmt.Errorf("%w: scope %q is missing", errToken, s)
		}
	}
	return nil
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
// server hammer the authorization server.
func (rs *resourceServer) key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if k, ok := rs.keys[kid]; ok {
		return k, nil
	}
	if rs.keys != nil && rs.now().Sub(rs.fetched) < keyRefetch {
		return nil, fmt.Errorf("%w: unknown signing key", errToken)
	}
	// Fetched under the lock: concurrent requests wait for one fetch.
	keys, err := rs.fetchKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the keys of authorization server %s: %w", rs.opts.Issuer, err)
	}
	rs.keys, rs.fetched = keys, rs.now()
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("%w: unknown signing key", errToken)
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
func (rs *resourceServer) fetchKeys(ctx context.Context) (map[string]crypto.PublicKey, error) {
	var meta *oauthex.AuthServerMeta
	var err error
	for _, u := range metadataURLs(rs.opts.Issuer) {
		if meta, err = oauthex.GetAuthServerMeta(ctx, u, rs.opts.Issuer, rs.hc); err == nil && meta != nil {
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
	res, err := rs.hc.Do(req)
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

// mcpAuthorized checks a request to an MCP endpoint when Options.OAuth is
// set: the server's own token (bearer or cookie), or a valid access token
// of the authorization server. Otherwise it answers 401 with the RFC 9728
// challenge (or 503 when the authorization server's keys cannot be read)
// and returns false.
func (sec *security) mcpAuthorized(w http.ResponseWriter, r *http.Request) bool {
	tok := bearerToken(r)
	if sec.token != nil {
		if tok != "" && sec.matches(tok) {
			return true
		}
		if c, err := r.Cookie(cookieName(r)); err == nil && tok == "" && sec.matches(c.Value) {
			return true
		}
	}
	if tok == "" {
		sec.resource.challenge(w, r, "")
		return false
	}
	err := sec.resource.verify(r.Context(), r, tok)
	switch {
	case err == nil:
		return true
	case errors.Is(err, errToken):
		sec.resource.challenge(w, r, strings.TrimPrefix(err.Error(), errToken.Error()+": "))
	case errors.Is(err, errHostNotServed):
		refuseHost(w, r)
	default:
		refuse(w, r, apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "cannot check the access token: %v", err))
	}
	return false
}

// oauthRoutes adds the protected resource metadata of the MCP endpoints,
// when Options.OAuth is set.
func (s *Server) oauthRoutes(mux *http.ServeMux) {
	if s.sec.resource != nil {
		mux.HandleFunc(resourceMetadataRoute, s.sec.resource.serveMetadata)
	}
}
