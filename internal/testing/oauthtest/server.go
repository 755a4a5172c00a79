package oauthtest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Discovery is how an AuthServer publishes its metadata.
type Discovery int

const (
	// DiscoveryOAuth serves RFC 8414 metadata at
	// /.well-known/oauth-authorization-server (with the issuer's path
	// appended, when it has one).
	DiscoveryOAuth Discovery = iota
	// DiscoveryOIDC serves only OpenID Connect discovery: at
	// /.well-known/openid-configuration, and for an issuer with a path both
	// at /.well-known/openid-configuration/<path> and
	// <path>/.well-known/openid-configuration.
	DiscoveryOIDC
	// DiscoveryNone serves no metadata: the endpoints are at the 2025-03-26
	// fallback paths /authorize, /token and /register of the server's root,
	// whatever Options.IssuerPath says.
	DiscoveryNone
)

// IssMode is how an AuthServer uses the RFC 9207 iss parameter.
type IssMode int

const (
	// IssOff neither advertises nor sends iss.
	IssOff IssMode = iota
	// IssOn advertises authorization_response_iss_parameter_supported and
	// sends iss with every redirect, successful or not.
	IssOn
	// IssUnadvertised sends iss without advertising it.
	IssUnadvertised
	// IssAdvertisedOnly advertises iss support but never sends it.
	IssAdvertisedOnly
)

func (m IssMode) advertised() bool { return m == IssOn || m == IssAdvertisedOnly }
func (m IssMode) sent() bool       { return m == IssOn || m == IssUnadvertised }

// RefreshPolicy says when the token endpoint issues refresh tokens.
type RefreshPolicy int

const (
	// RefreshAlways issues a refresh token with every access token.
	RefreshAlways RefreshPolicy = iota
	// RefreshNever issues none.
	RefreshNever
	// RefreshIfOfflineAccess issues one only when the authorization's
	// scopes include offline_access.
	RefreshIfOfflineAccess
	// RefreshIfRegistered issues one only to clients whose registration
	// lists the refresh_token grant type.
	RefreshIfRegistered
)

// Options configure an AuthServer. Every field is optional; the zero value
// of each is described with it.
type Options struct {
	// Now is the server's clock, for codes and tokens: tests move it to
	// expire them without sleeping (see Clock). Nil means time.Now.
	Now func() time.Time

	// IssuerPath is a path for the issuer, like "/tenant1": the issuer is
	// then URL+IssuerPath, its endpoints are under that path and its
	// metadata is at the path-inserted well-known URL. Empty means the
	// issuer is URL.
	IssuerPath string

	// Discovery is where metadata is served. The zero value is
	// DiscoveryOAuth.
	Discovery Discovery

	// MetadataIssuer, if set, is served as the metadata's "issuer" instead
	// of the real one, for clients that must refuse such metadata.
	MetadataIssuer string

	// OmitPKCEMethods leaves code_challenge_methods_supported out of the
	// metadata, for clients that must refuse to proceed. False lists
	// ["S256"]. The authorization endpoint requires S256 either way.
	OmitPKCEMethods bool

	// Scopes is scopes_supported. When set, authorization requests for
	// other scopes fail with invalid_scope. Nil lists none and accepts any.
	Scopes []string

	// OfflineAccess adds offline_access to scopes_supported (and to the
	// scopes accepted).
	OfflineAccess bool

	// AuthMethods is token_endpoint_auth_methods_supported, the methods
	// registrations may choose among "none", "client_secret_post" and
	// "client_secret_basic". Nil means all three.
	AuthMethods []string

	// Iss is the RFC 9207 behaviour. The zero value is IssOff.
	Iss IssMode

	// WrongIss, if set, is sent as iss instead of the issuer (when Iss
	// sends one), for mix-up defence tests.
	WrongIss string

	// ClientMetadataDocuments advertises
	// client_id_metadata_document_supported and accepts as client_id an
	// https URL with a path, whose JSON document the server fetches at
	// each authorization request with CIMDClient and checks (client_id
	// equal to the URL, redirect_uris, token_endpoint_auth_method "none").
	ClientMetadataDocuments bool

	// CIMDClient fetches client ID metadata documents, for example an
	// httptest TLS server's Client(). Nil means a client with a 10 second
	// timeout and the default transport.
	CIMDClient *http.Client

	// DisableRegistration removes the registration endpoint.
	DisableRegistration bool

	// OmitRegisteredAuthMethod leaves token_endpoint_auth_method out of
	// registration responses (RFC 7591 then means client_secret_basic),
	// while the method registered still applies: a quirk of real servers.
	OmitRegisteredAuthMethod bool

	// RequireApplicationType rejects registrations without
	// application_type ("native" or "web"), which 2026-07-28 clients must
	// send. False accepts them; a value other than those two is always
	// rejected.
	RequireApplicationType bool

	// AllowHTTPRedirects accepts http redirect URIs on hosts other than
	// loopback ones. False accepts http only for localhost, 127.0.0.0/8 and
	// [::1]; https is always accepted.
	AllowHTTPRedirects bool

	// Clients are pre-registered. See Client for defaults.
	Clients []Client

	// Resources, if set, are the only resource indicators (RFC 8707) that
	// authorization requests may name; others get invalid_target. Nil
	// accepts any absolute URI without a fragment.
	Resources []string

	// CodeTTL is how long an authorization code can be redeemed. Zero
	// means one minute.
	CodeTTL time.Duration

	// AccessTokenTTL is the lifetime of access tokens. Zero means one hour.
	AccessTokenTTL time.Duration

	// RefreshTokenTTL is the lifetime of refresh tokens. Zero means they
	// do not expire.
	RefreshTokenTTL time.Duration

	// RefreshTokens says when refresh tokens are issued. The zero value is
	// RefreshAlways.
	RefreshTokens RefreshPolicy

	// KeepRefreshToken turns rotation off: a refresh keeps the refresh
	// token valid and its response has no refresh_token. False rotates: each
	// refresh returns a new refresh token and invalidates the one used.
	KeepRefreshToken bool

	// LenientRefreshReuse only rejects a rotated refresh token that is
	// presented again. False also revokes every token descended from the
	// same authorization, as OAuth 2.1 §4.3.1 asks, so a client that
	// refreshes twice with one token loses its session.
	LenientRefreshReuse bool

	// RefreshReuseGrace honours a rotated refresh token presented again
	// within this long of its rotation: the request gets a new pair of
	// tokens, as the first one did, and is counted in
	// Counts.RefreshReusedInGrace. It is the reuse interval of real servers
	// (Auth0's "reuse interval", Okta's "grace period for token rotation",
	// 0 to 60 seconds), which lets a client that crashed between the
	// server's answer and saving it use the token it still has. Past the
	// grace, reuse is refused as LenientRefreshReuse says. Zero means no
	// grace: a rotated token is never honoured again.
	RefreshReuseGrace time.Duration

	// JWT, if set ("RS256" or "ES256"), makes access tokens JWTs (RFC
	// 9068) signed with a key of that algorithm, whose public key the
	// server publishes at its jwks_uri (in its metadata, at
	// IssuerPath+"/jwks"): iss, sub, client_id, aud (the resource), scope,
	// iat, exp and jti. Empty means opaque random access tokens.
	JWT string

	// OnAuthorize, if set, sees each authorization request that passed
	// validation, before it is approved. A non-nil error denies it: an
	// *Error chooses the error code, any other error is access_denied with
	// the error's text as error_description.
	OnAuthorize func(AuthorizationRequest) error
}

// Counts counts the requests an AuthServer received, whatever their
// outcome, faults included.
type Counts struct {
	// Requests counts every HTTP request.
	Requests atomic.Int64
	// Metadata counts requests for authorization server metadata that
	// were answered with it.
	Metadata atomic.Int64
	// Registrations counts requests to the registration endpoint.
	Registrations atomic.Int64
	// Authorizations counts requests to the authorization endpoint.
	Authorizations atomic.Int64
	// TokenRequests counts requests to the token endpoint.
	TokenRequests atomic.Int64
	// CodeGrants counts token requests with grant_type
	// authorization_code.
	CodeGrants atomic.Int64
	// RefreshGrants counts token requests with grant_type refresh_token.
	RefreshGrants atomic.Int64
	// RefreshReusedInGrace counts refreshes that presented a rotated
	// refresh token within Options.RefreshReuseGrace and were honoured.
	RefreshReusedInGrace atomic.Int64
	// MetadataDocuments counts client ID metadata documents fetched.
	MetadataDocuments atomic.Int64
}

// Request is an HTTP request as a server recorded it.
type Request struct {
	Method string
	Path   string
	// Status is the response status; 0 for a dropped connection and for
	// requests a Resource passed to the MCP handler.
	Status int
}

// Error is an OAuth error. OnAuthorize returns one to deny an authorization
// with a code of its choice.
type Error struct {
	Code        string // "access_denied", "invalid_scope", ...
	Description string
}

func (e *Error) Error() string {
	if e.Description == "" {
		return e.Code
	}
	return e.Code + ": " + e.Description
}

func oauthErr(code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...)}
}

// AuthServer is a fake OAuth 2.1 authorization server on 127.0.0.1.
type AuthServer struct {
	// URL is the server's base URL, "http://127.0.0.1:port", without a
	// trailing slash. The issuer is URL+Options.IssuerPath.
	URL string

	// Counts counts the requests received.
	Counts Counts

	t          testing.TB
	srv        *httptest.Server
	now        func() time.Time
	opts       Options // a copy; slices are copied too
	issuer     string
	prefix     string // path of the endpoints: IssuerPath, or "" for DiscoveryNone
	metaPaths  []string
	authMethod []string
	cimd       *http.Client
	closeOnce  sync.Once

	// mu guards the fields below.
	mu            sync.Mutex
	clients       map[string]*Client
	codes         map[string]*authCode
	tokens        map[string]*token
	families      int
	tokenFaults   []Fault
	regFaults     []Fault
	deny          *string // non-nil: deny every authorization with this description
	requests      []Request
	authRequests  []AuthorizationRequest
	tokenRequests []TokenRequest
	registrations []Registration
	mcp           *Resource // served on this server by ServeMCP with SameOrigin

	jwt *jwtSigner // Options.JWT's key; nil without
}

// NewServer starts an authorization server on a fresh 127.0.0.1 port and
// closes it when the test ends. opts may be nil.
func NewServer(t testing.TB, opts *Options) *AuthServer {
	t.Helper()
	s := &AuthServer{
		t:       t,
		clients: map[string]*Client{},
		codes:   map[string]*authCode{},
		tokens:  map[string]*token{},
	}
	if opts != nil {
		s.opts = *opts
		s.opts.Scopes = slices.Clone(opts.Scopes)
		s.opts.AuthMethods = slices.Clone(opts.AuthMethods)
		s.opts.Resources = slices.Clone(opts.Resources)
		s.opts.Clients = nil
	}
	s.now = s.opts.Now
	if s.now == nil {
		s.now = time.Now
	}
	if s.opts.CodeTTL == 0 {
		s.opts.CodeTTL = time.Minute
	}
	if s.opts.AccessTokenTTL == 0 {
		s.opts.AccessTokenTTL = time.Hour
	}
	s.authMethod = s.opts.AuthMethods
	if s.authMethod == nil {
		s.authMethod = []string{methodBasic, methodPost, methodNone}
	}
	for _, m := range s.authMethod {
		if !slices.Contains([]string{methodBasic, methodPost, methodNone}, m) {
			t.Fatalf("oauthtest: unsupported token endpoint auth method %q", m)
		}
	}
	s.cimd = s.opts.CIMDClient
	if s.cimd == nil {
		s.cimd = &http.Client{Timeout: 10 * time.Second}
	}
	p := strings.TrimSuffix(s.opts.IssuerPath, "/")
	if p != "" && !strings.HasPrefix(p, "/") {
		t.Fatalf("oauthtest: IssuerPath %q does not start with a slash", s.opts.IssuerPath)
	}
	switch s.opts.Discovery {
	case DiscoveryOAuth:
		s.metaPaths = []string{"/.well-known/oauth-authorization-server" + p}
		s.prefix = p
	case DiscoveryOIDC:
		s.metaPaths = []string{"/.well-known/openid-configuration" + p}
		if p != "" {
			s.metaPaths = append(s.metaPaths, p+"/.well-known/openid-configuration")
		}
		s.prefix = p
	case DiscoveryNone:
		p = ""
	default:
		t.Fatalf("oauthtest: unknown Discovery %d", s.opts.Discovery)
	}

	if s.opts.JWT != "" {
		j, err := newJWTSigner(s.opts.JWT)
		if err != nil {
			t.Fatalf("oauthtest: %v", err)
		}
		s.jwt = j
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	s.issuer = s.URL + p
	if opts != nil {
		for _, c := range opts.Clients {
			s.AddClient(c)
		}
	}
	t.Cleanup(s.Close)
	return s
}

// Close stops the server, dropping open connections, as an authorization
// server that went away. It is idempotent; the test's end calls it.
func (s *AuthServer) Close() {
	s.closeOnce.Do(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Issuer is the issuer identifier: URL+Options.IssuerPath.
func (s *AuthServer) Issuer() string { return s.issuer }

// MetadataURL is where the metadata is served (the first such URL for
// DiscoveryOIDC with an issuer path), or "" for DiscoveryNone.
func (s *AuthServer) MetadataURL() string {
	if len(s.metaPaths) == 0 {
		return ""
	}
	return s.URL + s.metaPaths[0]
}

// AuthorizationEndpoint is the authorization endpoint's URL.
func (s *AuthServer) AuthorizationEndpoint() string { return s.URL + s.prefix + "/authorize" }

// TokenEndpoint is the token endpoint's URL.
func (s *AuthServer) TokenEndpoint() string { return s.URL + s.prefix + "/token" }

// RegistrationEndpoint is the registration endpoint's URL, or "" when
// registration is disabled.
func (s *AuthServer) RegistrationEndpoint() string {
	if s.opts.DisableRegistration {
		return ""
	}
	return s.URL + s.prefix + "/register"
}

// Client returns a copy of the client registered (or pre-registered, or
// known from its metadata document) under id.
func (s *AuthServer) Client(id string) (Client, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return Client{}, false
	}
	return c.clone(), true
}

// Clients returns copies of every known client, in no particular order.
func (s *AuthServer) Clients() []Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := make([]Client, 0, len(s.clients))
	for _, c := range s.clients {
		cs = append(cs, c.clone())
	}
	return cs
}

// Requests returns every HTTP request received so far, in order.
func (s *AuthServer) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Deny makes every authorization request from now on (that passes
// validation) end in error=access_denied with description as
// error_description, until Allow.
func (s *AuthServer) Deny(description string) {
	s.mu.Lock()
	s.deny = &description
	s.mu.Unlock()
}

// Allow undoes Deny.
func (s *AuthServer) Allow() {
	s.mu.Lock()
	s.deny = nil
	s.mu.Unlock()
}

func (s *AuthServer) logf(format string, args ...any) {
	s.t.Helper()
	s.t.Logf("oauthtest: "+format, args...)
}

// serveHTTP routes a request and records it.
func (s *AuthServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.Counts.Requests.Add(1)
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Status: rec.status})
		s.mu.Unlock()
	}()
	w = rec

	p := r.URL.Path
	switch {
	case slices.Contains(s.metaPaths, p):
		if !allowMethods(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		s.serveMetadata(w)
	case p == s.prefix+"/authorize":
		if !allowMethods(w, r, http.MethodGet) {
			return
		}
		s.serveAuthorize(w, r)
	case p == s.prefix+"/token":
		if !allowMethods(w, r, http.MethodPost) {
			return
		}
		s.serveToken(w, r)
	case p == s.prefix+"/register" && !s.opts.DisableRegistration:
		if !allowMethods(w, r, http.MethodPost) {
			return
		}
		s.serveRegister(w, r)
	case p == s.prefix+"/jwks" && (s.opts.Discovery == DiscoveryOIDC || s.jwt != nil):
		s.serveJWKS(w)
	default:
		s.mu.Lock()
		res := s.mcp
		s.mu.Unlock()
		if res != nil {
			res.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

func allowMethods(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	if slices.Contains(methods, r.Method) {
		return true
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// serveMetadata serves RFC 8414 (or OpenID) metadata.
func (s *AuthServer) serveMetadata(w http.ResponseWriter) {
	s.Counts.Metadata.Add(1)
	issuer := s.issuer
	if s.opts.MetadataIssuer != "" {
		issuer = s.opts.MetadataIssuer
	}
	m := map[string]any{
		"issuer":                                issuer,
		"authorization_endpoint":                s.AuthorizationEndpoint(),
		"token_endpoint":                        s.TokenEndpoint(),
		"response_types_supported":              []string{"code"},
		"response_modes_supported":              []string{"query"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported": s.authMethod,
	}
	if ep := s.RegistrationEndpoint(); ep != "" {
		m["registration_endpoint"] = ep
	}
	if scopes := s.supportedScopes(); len(scopes) > 0 {
		m["scopes_supported"] = scopes
	}
	if !s.opts.OmitPKCEMethods {
		m["code_challenge_methods_supported"] = []string{"S256"}
	}
	if s.opts.Iss.advertised() {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if s.opts.ClientMetadataDocuments {
		m["client_id_metadata_document_supported"] = true
	}
	if s.jwt != nil {
		m["jwks_uri"] = s.JWKSURI()
	}
	if s.opts.Discovery == DiscoveryOIDC {
		m["jwks_uri"] = s.URL + s.prefix + "/jwks"
		m["subject_types_supported"] = []string{"public"}
		m["id_token_signing_alg_values_supported"] = []string{"RS256"}
	}
	writeJSON(w, http.StatusOK, m)
}

// supportedScopes is scopes_supported, or nil when any scope is accepted.
func (s *AuthServer) supportedScopes() []string {
	scopes := slices.Clone(s.opts.Scopes)
	if s.opts.OfflineAccess && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	return scopes
}

// VisitAuthURL does what the user's browser does with an authorization
// URL: it GETs it without following the redirect, and returns the redirect's
// Location (the client's redirect URI with code and state, or with error).
// A response other than a redirect (an unknown client or redirect URI) is
// an error carrying its status and text.
func (s *AuthServer) VisitAuthURL(ctx context.Context, authURL string) (*url.URL, error) {
	c := *s.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, fmt.Errorf("oauthtest: visit auth URL: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauthtest: visit auth URL: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("oauthtest: visit auth URL: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("oauthtest: visit auth URL: %w", err)
	}
	return loc, nil
}

// statusRecorder notes the status of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// dropConnection ends the request without a response, as a connection
// lost on the way back.
func dropConnection(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
		return
	}
	panic(http.ErrAbortHandler)
}

// random returns a URL-safe random string of 256 bits, after prefix.
func random(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// singleValues checks that no parameter occurs twice (RFC 6749 §3.1).
func singleValues(v url.Values) *Error {
	for k, vs := range v {
		if len(vs) > 1 {
			return oauthErr("invalid_request", "parameter %q repeated", k)
		}
	}
	return nil
}
