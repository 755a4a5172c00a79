package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// TokenError is an error from a token endpoint: an OAuth error response
// (RFC 6749 section 5.2) or an HTTP failure.
type TokenError struct {
	StatusCode  int
	Code        string // the OAuth error code, e.g. invalid_grant
	Description string // error_description, sanitised
}

func (e *TokenError) Error() string {
	switch {
	case e.Code != "" && e.Description != "":
		return fmt.Sprintf("token endpoint: %s: %s", e.Code, e.Description)
	case e.Code != "":
		return "token endpoint: " + e.Code
	}
	return fmt.Sprintf("token endpoint: HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// Transient reports whether trying again later may succeed: a 429, the
// OAuth errors that say so (temporarily_unavailable, server_error), or a
// 5xx that is not one of the RFC 6749 errors refusing the request (a 5xx
// with another "error" may well come from a gateway).
func (e *TokenError) Transient() bool {
	if e.StatusCode == http.StatusTooManyRequests {
		return true
	}
	switch e.Code {
	case "temporarily_unavailable", "server_error":
		return true
	case "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
		"unsupported_grant_type", "invalid_scope", "invalid_target":
		return false
	}
	return e.StatusCode >= 500
}

// refused reports whether the token endpoint refused the request for good:
// an error response (a 4xx, or an OAuth error) that is not transient.
// Trying the same grant again cannot succeed.
func (e *TokenError) refused() bool {
	return e.StatusCode >= 400 && !e.Transient()
}

// lostClient reports whether the refusal is about the client rather than
// the grant: its registration is no good any more.
func (e *TokenError) lostClient() bool {
	return e.Code == "invalid_client" || e.Code == "unauthorized_client"
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// tokenRequestUntraced is tokenRequest (telemetry.go): it posts form to a token endpoint with the client's
// authentication. Network errors come back as they are (transient);
// HTTP failures as *TokenError, whose text never holds the request's
// secrets (code, verifier, refresh token, client credentials) or the
// tokens of the response, even when the server echoes them.
func (p *Provider) tokenRequestUntraced(ctx context.Context, endpoint string, cl client, form url.Values) (*tokenResponse, error) {
	if err := p.checkEndpoint(endpoint); err != nil {
		return nil, err
	}
	form = cloneValues(form)
	var secrets []string // what errors must not show
	method := cl.AuthMethod
	if method == "" {
		method = "client_secret_basic"
		if cl.Secret == "" {
			method = "none"
		}
	}
	if method != "client_secret_basic" {
		form.Set("client_id", cl.ID)
	}
	switch method {
	case "client_secret_post":
		form.Set("client_secret", cl.Secret)
	case "private_key_jwt":
		key := p.cfg.Client
		if key == nil || key.PrivateKey == nil {
			return nil, errors.New("oauth: private_key_jwt needs Config.Client.PrivateKey")
		}
		assertion, err := clientAssertion(key.PrivateKey, cl.ID, cl.Issuer, p.now())
		if err != nil {
			return nil, fmt.Errorf("oauth: signing the client assertion: %w", err)
		}
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", assertion)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if method == "client_secret_basic" {
		user, pass := url.QueryEscape(cl.ID), url.QueryEscape(cl.Secret)
		req.SetBasicAuth(user, pass)
		// The header's credentials, should the server echo them.
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	secrets = append(secrets, cl.Secret)
	for _, k := range []string{"code", "code_verifier", "refresh_token", "client_secret", "client_assertion"} {
		secrets = append(secrets, form.Get(k))
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		terr := &TokenError{StatusCode: resp.StatusCode}
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			terr.Code, terr.Description = redact(e.Error, secrets...), redact(e.Description, secrets...)
		}
		return nil, terr
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return nil, &TokenError{StatusCode: resp.StatusCode, Code: "invalid_response", Description: "no access_token in the token response"}
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		secrets = append(secrets, tr.AccessToken, tr.RefreshToken)
		return nil, &TokenError{StatusCode: resp.StatusCode, Code: "invalid_response", Description: "unsupported token type " + redact(tr.TokenType, secrets...)}
	}
	return &tr, nil
}

// redact prepares text from an authorization server for an error message,
// as sanitize does, and replaces the secrets in it (and their
// form-encoded forms) with "[redacted]": a server that echoes a request
// or its own response must not put codes, verifiers, tokens or client
// secrets in errors, which end up in logs and UIs. It replaces before
// sanitising, which may cut a secret short, and after, which may join one
// by removing control characters.
func redact(s string, secrets ...string) string {
	replace := func(s string) string {
		for _, secret := range secrets {
			if secret == "" {
				continue
			}
			s = strings.ReplaceAll(s, secret, "[redacted]")
			if esc := url.QueryEscape(secret); esc != secret {
				s = strings.ReplaceAll(s, esc, "[redacted]")
			}
		}
		return s
	}
	return replace(sanitize(replace(s)))
}

// tokenFrom builds the stored token from a token response.
func (p *Provider) tokenFrom(tr *tokenResponse, issuer, endpoint, resource string, cl client, requested []string) *Token {
	t := &Token{
		AccessToken:   tr.AccessToken,
		RefreshToken:  tr.RefreshToken,
		Scopes:        requested,
		Issuer:        issuer,
		TokenEndpoint: endpoint,
		Resource:      resource,
		Client:        cl,
	}
	if tr.Scope != "" {
		t.Scopes = strings.Fields(tr.Scope)
	}
	if tr.ExpiresIn > 0 {
		t.IssuedAt = p.now()
		t.Expiry = t.IssuedAt.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	return t
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v)+2)
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// IsInvalidGrant reports whether err is a token endpoint's invalid_grant.
func IsInvalidGrant(err error) bool {
	var terr *TokenError
	return errors.As(err, &terr) && terr.Code == "invalid_grant"
}
