package oauth

import (
	"context"
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

// Transient reports whether trying again later may succeed: a 5xx or a
// 429, or the OAuth errors that say so.
func (e *TokenError) Transient() bool {
	switch e.Code {
	case "temporarily_unavailable", "server_error":
		return true
	case "":
		return e.StatusCode >= 500 || e.StatusCode == http.StatusTooManyRequests
	}
	return false
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// tokenRequest posts form to a token endpoint with the client's
// authentication. Network errors come back as they are (transient);
// HTTP failures as *TokenError.
func (p *Provider) tokenRequest(ctx context.Context, endpoint string, cl client, form url.Values) (*tokenResponse, error) {
	if err := p.checkEndpoint(endpoint); err != nil {
		return nil, err
	}
	form = cloneValues(form)
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
		req.SetBasicAuth(url.QueryEscape(cl.ID), url.QueryEscape(cl.Secret))
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
			terr.Code, terr.Description = sanitize(e.Error), sanitize(e.Description)
		}
		return nil, terr
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return nil, &TokenError{StatusCode: resp.StatusCode, Code: "invalid_response", Description: "no access_token in the token response"}
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return nil, &TokenError{StatusCode: resp.StatusCode, Code: "invalid_response", Description: "unsupported token type " + sanitize(tr.TokenType)}
	}
	return &tr, nil
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
		t.Expiry = p.now().Add(time.Duration(tr.ExpiresIn) * time.Second)
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
