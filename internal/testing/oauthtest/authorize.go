package oauthtest

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// AuthorizationRequest is a request to the authorization endpoint, as
// recorded (and as OnAuthorize sees it, with Error still empty).
type AuthorizationRequest struct {
	// Query is every parameter as received.
	Query url.Values
	// The parameters, each as received.
	ClientID, RedirectURI, ResponseType, Scope, Resource, State string
	CodeChallenge, CodeChallengeMethod                          string
	// Scopes is Scope split on spaces.
	Scopes []string
	// Redirected reports whether the answer was a redirect to the client
	// (with a code or an error) rather than an error page, which is what
	// the server shows when client_id or redirect_uri is wrong.
	Redirected bool
	// Error and ErrorDescription are the OAuth error returned; Error is
	// "" for an approved request.
	Error, ErrorDescription string
}

// AuthorizationRequests returns every authorization request received, in
// order.
func (s *AuthServer) AuthorizationRequests() []AuthorizationRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := make([]AuthorizationRequest, len(s.authRequests))
	for i, r := range s.authRequests {
		rs[i] = r.clone()
	}
	return rs
}

func (r AuthorizationRequest) clone() AuthorizationRequest {
	r.Query = cloneValues(r.Query)
	r.Scopes = slices.Clone(r.Scopes)
	return r
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = slices.Clone(vs)
	}
	return c
}

// authCode is an authorization code and what it was issued for.
type authCode struct {
	clientID    string
	redirectURI string
	challenge   string
	resource    string
	scopes      []string
	expires     time.Time
	family      int
	used        bool
}

// serveAuthorize is the authorization endpoint. It approves at once what
// it accepts, as a user who always consents.
func (s *AuthServer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	s.Counts.Authorizations.Add(1)
	q := r.URL.Query()
	ar := AuthorizationRequest{
		Query:               cloneValues(q),
		ClientID:            q.Get("client_id"),
		RedirectURI:         q.Get("redirect_uri"),
		ResponseType:        q.Get("response_type"),
		Scope:               q.Get("scope"),
		Resource:            q.Get("resource"),
		State:               q.Get("state"),
		CodeChallenge:       q.Get("code_challenge"),
		CodeChallengeMethod: q.Get("code_challenge_method"),
		Scopes:              strings.Fields(q.Get("scope")),
	}
	defer func() {
		s.mu.Lock()
		s.authRequests = append(s.authRequests, ar)
		s.mu.Unlock()
	}()

	// Errors in client_id or redirect_uri must not redirect (RFC 6749
	// §4.1.2.1): the user sees an error page.
	page := func(e *Error) {
		s.logf("authorize: %v", e)
		ar.Error, ar.ErrorDescription = e.Code, e.Description
		http.Error(w, "oauthtest: "+e.Error(), http.StatusBadRequest)
	}
	if e := singleValues(q); e != nil {
		page(e)
		return
	}
	if ar.ClientID == "" {
		page(oauthErr("invalid_request", "client_id is required"))
		return
	}
	client, e := s.clientForAuthorization(r, ar.ClientID)
	if e != nil {
		page(e)
		return
	}
	if ar.RedirectURI == "" {
		page(oauthErr("invalid_request", "redirect_uri is required"))
		return
	}
	if !slices.Contains(client.RedirectURIs, ar.RedirectURI) {
		page(oauthErr("invalid_request", "redirect_uri %q is not registered for the client", ar.RedirectURI))
		return
	}

	// Other errors go back to the client.
	redirect := func(params url.Values) {
		if s.opts.Iss.sent() {
			iss := s.issuer
			if s.opts.WrongIss != "" {
				iss = s.opts.WrongIss
			}
			params.Set("iss", iss)
		}
		if ar.State != "" {
			params.Set("state", ar.State)
		}
		u, _ := url.Parse(ar.RedirectURI) // checked at registration
		v := u.Query()
		for k, vs := range params {
			v[k] = vs
		}
		u.RawQuery = v.Encode()
		ar.Redirected = true
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	fail := func(e *Error) {
		s.logf("authorize: %v", e)
		ar.Error, ar.ErrorDescription = e.Code, e.Description
		params := url.Values{"error": {e.Code}}
		if e.Description != "" {
			params.Set("error_description", e.Description)
		}
		redirect(params)
	}
	if e := s.checkAuthorization(&ar); e != nil {
		fail(e)
		return
	}

	s.mu.Lock()
	deny := s.deny
	s.mu.Unlock()
	if deny != nil {
		fail(&Error{Code: "access_denied", Description: *deny})
		return
	}
	if s.opts.OnAuthorize != nil {
		if err := s.opts.OnAuthorize(ar.clone()); err != nil {
			var oe *Error
			if !errors.As(err, &oe) {
				oe = &Error{Code: "access_denied", Description: err.Error()}
			}
			fail(oe)
			return
		}
	}

	code := random("code-")
	s.mu.Lock()
	s.families++
	s.codes[code] = &authCode{
		clientID:    client.ID,
		redirectURI: ar.RedirectURI,
		challenge:   ar.CodeChallenge,
		resource:    ar.Resource,
		scopes:      slices.Clone(ar.Scopes),
		expires:     s.now().Add(s.opts.CodeTTL),
		family:      s.families,
	}
	s.mu.Unlock()
	redirect(url.Values{"code": {code}})
}

// checkAuthorization checks the parameters after client_id and
// redirect_uri.
func (s *AuthServer) checkAuthorization(ar *AuthorizationRequest) *Error {
	if ar.ResponseType != "code" {
		return oauthErr("unsupported_response_type", "response_type %q, want code", ar.ResponseType)
	}
	switch {
	case ar.CodeChallenge == "":
		return oauthErr("invalid_request", "code_challenge is required (PKCE)")
	case ar.CodeChallengeMethod == "":
		return oauthErr("invalid_request", "code_challenge_method is required; plain is not accepted")
	case ar.CodeChallengeMethod != "S256":
		return oauthErr("invalid_request", "code_challenge_method %q is not supported; use S256", ar.CodeChallengeMethod)
	case !isS256Challenge(ar.CodeChallenge):
		return oauthErr("invalid_request", "code_challenge is not a base64url SHA-256 digest")
	}
	if ar.State == "" {
		return oauthErr("invalid_request", "state is required")
	}
	if ar.Resource == "" {
		return oauthErr("invalid_target", "resource is required (RFC 8707)")
	}
	if u, err := url.Parse(ar.Resource); err != nil || !u.IsAbs() || u.Host == "" || strings.Contains(ar.Resource, "#") {
		return oauthErr("invalid_target", "resource %q is not an absolute URI without a fragment", ar.Resource)
	}
	if s.opts.Resources != nil && !slices.Contains(s.opts.Resources, ar.Resource) {
		return oauthErr("invalid_target", "unknown resource %q", ar.Resource)
	}
	if supported := s.supportedScopes(); len(s.opts.Scopes) > 0 {
		for _, sc := range ar.Scopes {
			if !slices.Contains(supported, sc) {
				return oauthErr("invalid_scope", "unknown scope %q", sc)
			}
		}
	}
	return nil
}

// isS256Challenge reports whether c looks like BASE64URL(SHA256(verifier)):
// 43 characters of the base64url alphabet, without padding.
func isS256Challenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	for _, r := range c {
		if !isBase64URL(r) {
			return false
		}
	}
	return true
}

func isBase64URL(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}
