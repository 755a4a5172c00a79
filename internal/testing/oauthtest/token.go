package oauthtest

import (
	"crypto/sha256"
	"encoding/base64"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// TokenRequest is a request to the token endpoint, as recorded.
type TokenRequest struct {
	// GrantType is the grant_type parameter.
	GrantType string
	// Form is the body's parameters as received, secrets included.
	Form url.Values
	// BasicAuth reports whether the request had HTTP Basic credentials.
	BasicAuth bool
	// ClientID is the client the request claimed to be, from Basic
	// credentials or the client_id parameter.
	ClientID string
	// Resource is the resource parameter.
	Resource string
	// Status is the response's status; 0 for a dropped connection.
	Status int
	// Error and ErrorDescription are the OAuth error returned, if any.
	Error, ErrorDescription string
	// Fault is the fault injected, if any.
	Fault Fault
}

// TokenRequests returns every token request received, in order.
func (s *AuthServer) TokenRequests() []TokenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := make([]TokenRequest, len(s.tokenRequests))
	for i, r := range s.tokenRequests {
		rs[i] = r
		rs[i].Form = cloneValues(r.Form)
	}
	return rs
}

// Token kinds.
const (
	kindAccess  = "access_token"
	kindRefresh = "refresh_token"
)

// token is an access or refresh token.
type token struct {
	kind     string
	clientID string
	resource string
	scopes   []string
	family   int       // the authorization it descends from
	expires  time.Time // zero: never
	revoked  bool
	rotated  bool      // a refresh token already used
	rotation time.Time // when it was first used, if rotated
}

// TokenInfo describes a token the server issued.
type TokenInfo struct {
	// Kind is "access_token" or "refresh_token".
	Kind     string
	ClientID string
	// Resource is the resource (audience) the token is for.
	Resource string
	Scopes   []string
	// Expiry is when it expires; zero for never.
	Expiry time.Time
	// Revoked: by Revoke, or with its family after a replay.
	Revoked bool
	// Rotated: a refresh token already exchanged.
	Rotated bool
	// Active reports whether the token can be used now (a rotated refresh
	// token within Options.RefreshReuseGrace can).
	Active bool
}

// Tokens are what IssueTokens returns.
type Tokens struct {
	AccessToken  string
	RefreshToken string // "" when the refresh policy issues none
	Expiry       time.Time
	Scopes       []string
}

// Lookup describes token, which may be an access or a refresh token.
func (s *AuthServer) Lookup(tok string) (TokenInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[tok]
	if !ok {
		return TokenInfo{}, false
	}
	return TokenInfo{
		Kind:     t.kind,
		ClientID: t.clientID,
		Resource: t.resource,
		Scopes:   slices.Clone(t.scopes),
		Expiry:   t.expires,
		Revoked:  t.revoked,
		Rotated:  t.rotated,
		Active:   s.activeLocked(t),
	}, true
}

// Valid reports whether tok is an access token that is neither expired nor
// revoked, and its scopes: what a resource server learns by introspection.
func (s *AuthServer) Valid(tok string) (scopes []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.tokens[tok]
	if !found || t.kind != kindAccess || !s.activeLocked(t) {
		return nil, false
	}
	return slices.Clone(t.scopes), true
}

// valid is Valid with the token's resource.
func (s *AuthServer) valid(tok string) (scopes []string, resource string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, found := s.tokens[tok]
	if !found || t.kind != kindAccess || !s.activeLocked(t) {
		return nil, "", false
	}
	return slices.Clone(t.scopes), t.resource, true
}

func (s *AuthServer) activeLocked(t *token) bool {
	return !t.revoked && (!t.rotated || s.inGraceLocked(t)) && (t.expires.IsZero() || s.now().Before(t.expires))
}

// inGraceLocked reports whether t is a rotated refresh token still within
// Options.RefreshReuseGrace of its rotation.
func (s *AuthServer) inGraceLocked(t *token) bool {
	return t.rotated && s.opts.RefreshReuseGrace > 0 && s.now().Before(t.rotation.Add(s.opts.RefreshReuseGrace))
}

// Revoke revokes an access or refresh token, and reports whether it knew
// it.
func (s *AuthServer) Revoke(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[tok]
	if ok {
		t.revoked = true
	}
	return ok
}

// RevokeAll revokes every token issued so far.
func (s *AuthServer) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		t.revoked = true
	}
}

// IssueTokens issues tokens for a client without an authorization flow,
// as if it had authorized earlier: for tests that start with stored
// tokens. The client must be known; the refresh policy applies.
func (s *AuthServer) IssueTokens(clientID, resource string, scopes ...string) Tokens {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok {
		s.t.Fatalf("oauthtest: IssueTokens: unknown client %q", clientID)
	}
	s.families++
	return s.issueLocked(c, resource, scopes, scopes, s.families, true)
}

// issueLocked issues an access token for scopes and, when newRefresh and
// the policy allow, a refresh token for grantScopes.
func (s *AuthServer) issueLocked(c *Client, resource string, scopes, grantScopes []string, family int, newRefresh bool) Tokens {
	now := s.now()
	out := Tokens{
		AccessToken: random("at-"),
		Expiry:      now.Add(s.opts.AccessTokenTTL),
		Scopes:      slices.Clone(scopes),
	}
	if s.jwt != nil {
		out.AccessToken = s.jwt.sign(s.accessClaims(c.ID, resource, scopes, out.Expiry))
	}
	s.tokens[out.AccessToken] = &token{kind: kindAccess, clientID: c.ID, resource: resource,
		scopes: slices.Clone(scopes), family: family, expires: out.Expiry}
	if !newRefresh || !s.issuesRefresh(c, grantScopes) {
		return out
	}
	out.RefreshToken = random("rt-")
	rt := &token{kind: kindRefresh, clientID: c.ID, resource: resource,
		scopes: slices.Clone(grantScopes), family: family}
	if s.opts.RefreshTokenTTL > 0 {
		rt.expires = now.Add(s.opts.RefreshTokenTTL)
	}
	s.tokens[out.RefreshToken] = rt
	return out
}

func (s *AuthServer) issuesRefresh(c *Client, scopes []string) bool {
	switch s.opts.RefreshTokens {
	case RefreshNever:
		return false
	case RefreshIfOfflineAccess:
		return slices.Contains(scopes, "offline_access")
	case RefreshIfRegistered:
		return slices.Contains(c.GrantTypes, "refresh_token")
	}
	return true
}

// revokeFamilyLocked revokes every token descended from one authorization.
func (s *AuthServer) revokeFamilyLocked(family int) {
	for _, t := range s.tokens {
		if t.family == family {
			t.revoked = true
		}
	}
}

// tokenResult is the token endpoint's answer, before it is written.
type tokenResult struct {
	status int
	body   map[string]any
	err    *Error
}

func tokenError(status int, e *Error) tokenResult {
	return tokenResult{status: status, err: e}
}

// serveToken is the token endpoint.
func (s *AuthServer) serveToken(w http.ResponseWriter, r *http.Request) {
	s.Counts.TokenRequests.Add(1)
	rec := TokenRequest{}
	recorded := false
	defer func() {
		if recorded {
			return
		}
		s.mu.Lock()
		s.tokenRequests = append(s.tokenRequests, rec)
		s.mu.Unlock()
	}()
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	perr := r.ParseForm()
	form := r.PostForm
	rec.Form = cloneValues(form)
	rec.GrantType = form.Get("grant_type")
	rec.Resource = form.Get("resource")
	rec.ClientID = form.Get("client_id")
	if user, _, ok := r.BasicAuth(); ok {
		rec.BasicAuth = true
		if id, err := url.QueryUnescape(user); err == nil {
			rec.ClientID = id
		}
	}
	switch rec.GrantType {
	case "authorization_code":
		s.Counts.CodeGrants.Add(1)
	case "refresh_token":
		s.Counts.RefreshGrants.Add(1)
	}

	s.mu.Lock()
	var fault Fault
	if len(s.tokenFaults) > 0 {
		fault, s.tokenFaults = s.tokenFaults[0], s.tokenFaults[1:]
	}
	s.mu.Unlock()
	rec.Fault = fault
	if fault == FaultDropConnection {
		// Recorded before the connection drops: the client, seeing it
		// drop, may send its next request before this handler returns,
		// and the record must keep the order the requests came in.
		rec.Error = fault.code()
		s.mu.Lock()
		s.tokenRequests = append(s.tokenRequests, rec)
		s.mu.Unlock()
		recorded = true
		fault.write(w)
		return
	}
	if fault != FaultNone && fault != FaultLoseResponse {
		rec.Status = fault.write(w)
		rec.Error = fault.code()
		return
	}

	var res tokenResult
	switch {
	case mt != "application/x-www-form-urlencoded":
		res = tokenError(http.StatusBadRequest, oauthErr("invalid_request", "content type %q, want application/x-www-form-urlencoded", mt))
	case perr != nil:
		res = tokenError(http.StatusBadRequest, oauthErr("invalid_request", "parsing the body: %v", perr))
	case r.URL.RawQuery != "":
		res = tokenError(http.StatusBadRequest, oauthErr("invalid_request", "parameters in the query string; send them in the body"))
	default:
		res = s.token(r, form)
	}
	if fault == FaultLoseResponse {
		dropConnection(w)
		return
	}
	rec.Status = res.status
	if res.err != nil {
		s.logf("token (%s): %v", rec.GrantType, res.err)
		rec.Error, rec.ErrorDescription = res.err.Code, res.err.Description
		if res.status == http.StatusUnauthorized && rec.BasicAuth {
			w.Header().Set("WWW-Authenticate", `Basic realm="oauthtest"`)
		}
		writeJSON(w, res.status, map[string]string{"error": res.err.Code, "error_description": res.err.Description})
		return
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, res.status, res.body)
}

// token authenticates the client and runs the grant.
func (s *AuthServer) token(r *http.Request, form url.Values) tokenResult {
	if e := singleValues(form); e != nil {
		return tokenError(http.StatusBadRequest, e)
	}
	client, e := s.authenticate(r, form)
	if e != nil {
		status := http.StatusBadRequest
		if e.Code == "invalid_client" {
			status = http.StatusUnauthorized
		}
		return tokenError(status, e)
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		return s.redeemCode(client, form)
	case "refresh_token":
		return s.refresh(client, form)
	case "":
		return tokenError(http.StatusBadRequest, oauthErr("invalid_request", "grant_type is required"))
	default:
		return tokenError(http.StatusBadRequest, oauthErr("unsupported_grant_type", "grant_type %q is not supported", form.Get("grant_type")))
	}
}

// authenticate checks that the client used its registered method, and only
// that method (RFC 6749 §2.3).
func (s *AuthServer) authenticate(r *http.Request, form url.Values) (*Client, *Error) {
	user, pass, basic := r.BasicAuth()
	if !basic && r.Header.Get("Authorization") != "" {
		return nil, oauthErr("invalid_client", "unsupported Authorization header scheme")
	}
	formID, formSecret := form.Get("client_id"), form.Get("client_secret")
	_, hasSecret := form["client_secret"]
	var id, secret, method string
	switch {
	case basic:
		var err1, err2 error
		id, err1 = url.QueryUnescape(user)
		secret, err2 = url.QueryUnescape(pass)
		if err1 != nil || err2 != nil {
			return nil, oauthErr("invalid_client", "Basic credentials are not form-urlencoded")
		}
		if hasSecret {
			return nil, oauthErr("invalid_request", "client credentials both in the Authorization header and in the body")
		}
		if formID != "" && formID != id {
			return nil, oauthErr("invalid_client", "client_id in the body differs from the Basic credentials")
		}
		method = methodBasic
	case hasSecret:
		id, secret, method = formID, formSecret, methodPost
	default:
		id, method = formID, methodNone
	}
	if id == "" {
		return nil, oauthErr("invalid_client", "no client identification")
	}
	s.mu.Lock()
	c, ok := s.clients[id]
	var cc Client
	if ok {
		cc = c.clone()
	}
	s.mu.Unlock()
	switch {
	case !ok:
		return nil, oauthErr("invalid_client", "unknown client %q", id)
	case cc.AuthMethod != method:
		return nil, oauthErr("invalid_client", "client %q authenticated with %s but is registered for %s", id, method, cc.AuthMethod)
	case method != methodNone && secret != cc.Secret:
		return nil, oauthErr("invalid_client", "wrong client secret for %q", id)
	}
	return &cc, nil
}

// redeemCode is the authorization_code grant. A code is used up by the
// first request that presents it, whatever its outcome; presenting it again
// revokes the tokens it gave (RFC 6749 §4.1.2).
func (s *AuthServer) redeemCode(c *Client, form url.Values) tokenResult {
	code, redirectURI, verifier, resource := form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier"), form.Get("resource")
	if code == "" {
		return tokenError(http.StatusBadRequest, oauthErr("invalid_request", "code is required"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ac, ok := s.codes[code]
	switch {
	case !ok:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "unknown authorization code"))
	case ac.used:
		s.revokeFamilyLocked(ac.family)
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "authorization code already used; the tokens it gave are revoked"))
	}
	ac.used = true
	switch {
	case redirectURI == "":
		return tokenError(http.StatusBadRequest, oauthErr("invalid_request", "redirect_uri is required"))
	case verifier == "":
		return tokenError(http.StatusBadRequest, oauthErr("invalid_request", "code_verifier is required (PKCE)"))
	case resource == "":
		return tokenError(http.StatusBadRequest, oauthErr("invalid_request", "resource is required (RFC 8707)"))
	case !s.now().Before(ac.expires):
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "authorization code expired"))
	case ac.clientID != c.ID:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "authorization code was issued to another client"))
	case ac.redirectURI != redirectURI:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "redirect_uri %q differs from the authorization request's", redirectURI))
	case !isVerifier(verifier):
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "code_verifier is not 43 to 128 unreserved characters"))
	case s256(verifier) != ac.challenge:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "code_verifier does not match the code_challenge"))
	case resource != ac.resource:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_target", "resource %q differs from the authorization request's %q", resource, ac.resource))
	}
	cl := s.clients[c.ID]
	if cl == nil {
		cl = c
	}
	return s.tokenResponseLocked(s.issueLocked(cl, ac.resource, ac.scopes, ac.scopes, ac.family, true))
}

// refresh is the refresh_token grant, with rotation unless
// KeepRefreshToken.
func (s *AuthServer) refresh(c *Client, form url.Values) tokenResult {
	rt, resource := form.Get("refresh_token"), form.Get("resource")
	if rt == "" {
		return tokenError(http.StatusBadRequest, oauthErr("invalid_request", "refresh_token is required"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[rt]
	// A rotated token presented again within the grace is honoured as its
	// first use was: the reuse interval of real servers. The grace runs
	// from the first rotation, however often the token comes back.
	inGrace := ok && s.inGraceLocked(t)
	switch {
	case !ok || t.kind != kindRefresh:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "unknown refresh token"))
	case t.clientID != c.ID:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "refresh token was issued to another client"))
	case t.revoked:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "refresh token revoked"))
	case t.rotated && !inGrace:
		if !s.opts.LenientRefreshReuse {
			s.revokeFamilyLocked(t.family)
			return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "refresh token already used; every token of this authorization is revoked"))
		}
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "refresh token already used"))
	case !t.expires.IsZero() && !s.now().Before(t.expires):
		return tokenError(http.StatusBadRequest, oauthErr("invalid_grant", "refresh token expired"))
	case resource != "" && resource != t.resource:
		return tokenError(http.StatusBadRequest, oauthErr("invalid_target", "resource %q differs from the grant's %q", resource, t.resource))
	}
	scopes := t.scopes
	if form.Has("scope") {
		scopes = strings.Fields(form.Get("scope"))
		for _, sc := range scopes {
			if !slices.Contains(t.scopes, sc) {
				return tokenError(http.StatusBadRequest, oauthErr("invalid_scope", "scope %q was not granted", sc))
			}
		}
	}
	cl := s.clients[c.ID]
	if cl == nil {
		cl = c
	}
	if inGrace {
		s.Counts.RefreshReusedInGrace.Add(1)
	}
	rotate := !s.opts.KeepRefreshToken
	if rotate && !t.rotated {
		t.rotated, t.rotation = true, s.now()
	}
	return s.tokenResponseLocked(s.issueLocked(cl, t.resource, scopes, t.scopes, t.family, rotate))
}

func (s *AuthServer) tokenResponseLocked(t Tokens) tokenResult {
	body := map[string]any{
		"access_token": t.AccessToken,
		"token_type":   "Bearer",
		"expires_in":   int64(s.opts.AccessTokenTTL / time.Second),
	}
	if t.RefreshToken != "" {
		body["refresh_token"] = t.RefreshToken
	}
	if len(t.Scopes) > 0 {
		body["scope"] = strings.Join(t.Scopes, " ")
	}
	return tokenResult{status: http.StatusOK, body: body}
}

// isVerifier reports whether v is a PKCE code verifier: 43 to 128
// characters from [A-Za-z0-9-._~] (RFC 7636 §4.1).
func isVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, r := range v {
		if !isBase64URL(r) && r != '.' && r != '~' {
			return false
		}
	}
	return true
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
