package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/netguard"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ErrResourceMismatch is returned when the protected resource metadata
// describes another resource than the MCP server: authorising would hand
// a token for this server to whoever wrote that document.
var ErrResourceMismatch = errors.New("oauth: the protected resource metadata names another resource")

// protectedResourceUntraced is protectedResource (telemetry.go): it finds the server's protected resource metadata (RFC
// 9728): at the URL the WWW-Authenticate challenge names, else at the
// path-aware well-known URL, else at the root one. A server with none gets
// the 2025-03-26 treatment: its origin is the authorization server.
func (p *Provider) protectedResourceUntraced(ctx context.Context, fromHeader, resource string) (*oauthex.ProtectedResourceMetadata, error) {
	ru, err := url.Parse(resource)
	if err != nil {
		return nil, fmt.Errorf("oauth: server URL: %w", err)
	}
	// The root document may describe the whole origin (RFC 9728 section
	// 3.1): the server is then part of that resource.
	type candidate struct {
		url    string
		origin bool // the document may name the origin
	}
	var cands []candidate
	if fromHeader != "" {
		cands = append(cands, candidate{fromHeader, false})
	}
	path := *ru
	path.RawQuery, path.Fragment = "", ""
	path.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	path.RawPath = ""
	root := path
	root.Path = "/.well-known/oauth-protected-resource"
	cands = append(cands, candidate{path.String(), false}, candidate{root.String(), true})
	origin := (&url.URL{Scheme: ru.Scheme, Host: ru.Host}).String()

	for _, c := range cands {
		var prm oauthex.ProtectedResourceMetadata
		found, err := p.getJSON(ctx, c.url, &prm)
		if err != nil {
			return nil, fmt.Errorf("oauth: protected resource metadata: %w", err)
		}
		if !found {
			continue
		}
		named := strings.TrimSuffix(prm.Resource, "/")
		if named != strings.TrimSuffix(resource, "/") && !(c.origin && named == origin) {
			return nil, fmt.Errorf("%w: %q, not %q", ErrResourceMismatch, netguard.Sanitize(prm.Resource), resource)
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("oauth: the protected resource metadata names no authorization server")
		}
		for _, as := range prm.AuthorizationServers {
			if err := p.checkEndpoint(as); err != nil {
				return nil, fmt.Errorf("oauth: authorization server %q: %w", netguard.RedactURL(as), err)
			}
		}
		prm.Resource = resource
		return &prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{origin}}, nil
}

// authServerUntraced is authServer (telemetry.go): it fetches the authorization server's metadata (RFC 8414, then
// OpenID discovery, path-aware), checking its issuer; a server without
// metadata gets the 2025-03-26 default endpoints.
func (p *Provider) authServerUntraced(ctx context.Context, issuer string) (*oauthex.AuthServerMeta, error) {
	if err := p.checkEndpoint(issuer); err != nil {
		return nil, fmt.Errorf("oauth: authorization server: %w", err)
	}
	var asm *oauthex.AuthServerMeta
	for _, u := range metadataURLs(issuer) {
		var m oauthex.AuthServerMeta
		found, err := p.getJSON(ctx, u, &m)
		if err != nil {
			return nil, fmt.Errorf("oauth: authorization server metadata: %w", err)
		}
		if !found {
			continue
		}
		if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			// RFC 8414 section 3.3: metadata for another issuer is not used.
			return nil, fmt.Errorf("oauth: the metadata at %s is for issuer %q, not %q", netguard.RedactURL(u), sanitize(m.Issuer), issuer)
		}
		asm = &m
		break
	}
	if asm == nil {
		base := strings.TrimSuffix(issuer, "/")
		asm = &oauthex.AuthServerMeta{
			Issuer:                        issuer,
			AuthorizationEndpoint:         base + "/authorize",
			TokenEndpoint:                 base + "/token",
			RegistrationEndpoint:          base + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
		}
	}
	if p.cfg.Grant != GrantClientCredentials && !contains(asm.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("oauth: the authorization server %s does not support PKCE S256", netguard.RedactURL(issuer))
	}
	endpoints := []string{asm.TokenEndpoint}
	if p.cfg.Grant != GrantClientCredentials {
		endpoints = append(endpoints, asm.AuthorizationEndpoint)
	}
	for _, e := range endpoints {
		if err := p.checkEndpoint(e); err != nil {
			return nil, fmt.Errorf("oauth: endpoint %q: %w", netguard.RedactURL(e), err)
		}
	}
	return asm, nil
}

// metadataURLs are where an issuer's metadata may be, in the order the MCP
// authorization spec gives: RFC 8414 and OpenID discovery, with the
// issuer's path inserted after the well-known prefix, and OpenID with it
// appended.
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.Trim(u.Path, "/")
	at := func(p string) string {
		v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: p}
		return v.String()
	}
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	}
	return []string{
		at("/.well-known/oauth-authorization-server/" + path),
		at("/.well-known/openid-configuration/" + path),
		at("/" + path + "/.well-known/openid-configuration"),
	}
}

// registration returns this client's registration with the authorization
// server: a stored one (while the redirect URI is unchanged), a client ID
// metadata document, pre-registered credentials, or a new dynamic
// registration, which is stored.
func (p *Provider) registration(ctx context.Context, asm *oauthex.AuthServerMeta) (client, error) {
	key := keyClient + asm.Issuer
	if data, err := p.st.Get(ctx, key); err == nil {
		var cl client
		if json.Unmarshal(data, &cl) == nil && cl.RedirectURI == p.cfg.RedirectURL && cl.ID != "" {
			return cl, nil
		}
	}
	if u := p.cfg.ClientMetadataURL; u != "" && asm.ClientIDMetadataDocumentSupported {
		return client{Issuer: asm.Issuer, ID: u, AuthMethod: "none", RedirectURI: p.cfg.RedirectURL, Kind: "cimd"}, nil
	}
	if c := p.cfg.Client; c != nil {
		method := c.AuthMethod
		switch {
		case method != "":
		case c.PrivateKey != nil:
			method = "private_key_jwt"
		default:
			method = bestAuthMethod(asm.TokenEndpointAuthMethodsSupported, c.Secret != "")
		}
		return client{Issuer: asm.Issuer, ID: c.ID, Secret: c.Secret, AuthMethod: method, RedirectURI: p.cfg.RedirectURL, Kind: "preregistered"}, nil
	}
	if asm.RegistrationEndpoint == "" {
		return client{}, errors.New("oauth: the authorization server offers no registration, and no client credentials are configured")
	}
	if err := p.checkEndpoint(asm.RegistrationEndpoint); err != nil {
		return client{}, fmt.Errorf("oauth: registration endpoint: %w", err)
	}
	method := "none" // a public client: no secret to keep
	if len(asm.TokenEndpointAuthMethodsSupported) > 0 && !contains(asm.TokenEndpointAuthMethodsSupported, "none") {
		method = bestAuthMethod(asm.TokenEndpointAuthMethodsSupported, true)
	}
	grants := []string{"authorization_code", "refresh_token"}
	meta := &oauthex.ClientRegistrationMetadata{
		ClientName:              p.cfg.ClientName,
		RedirectURIs:            []string{p.cfg.RedirectURL},
		GrantTypes:              grants,
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: method,
		ApplicationType:         applicationType(p.cfg.RedirectURL),
	}
	resp, err := p.register(ctx, asm.RegistrationEndpoint, meta)
	if err != nil {
		return client{}, fmt.Errorf("oauth: registering the client: %w", err)
	}
	cl := client{Issuer: asm.Issuer, ID: resp.ClientID, Secret: resp.ClientSecret, AuthMethod: resp.AuthMethod, RedirectURI: p.cfg.RedirectURL, Kind: "dcr"}
	if cl.AuthMethod == "" {
		// RFC 7591 says an omitted method means client_secret_basic, but
		// servers that omit it mean what we asked for.
		cl.AuthMethod = method
		if cl.Secret == "" {
			cl.AuthMethod = "none"
		}
	}
	data, _ := json.Marshal(cl)
	if err := p.st.Put(ctx, key, data, resp.Expiry); err != nil {
		return client{}, fmt.Errorf("oauth: saving the registration: %w", err)
	}
	return cl, nil
}

// registered is what a dynamic registration gave.
type registered struct {
	ClientID     string
	ClientSecret string
	AuthMethod   string
	// Expiry is when the registration stops being usable: its secret's
	// expiry, or zero for never.
	Expiry time.Time
}

// registerUntraced is register (telemetry.go): it makes an RFC 7591 dynamic client registration. Its errors
// never hold the response body, which may carry the client secret (or a
// registration access token): only the status and, from an error
// response, the OAuth error and its description, sanitised. It reads only
// the fields it uses, so that a server's liberties with the others (a
// fractional client_id_issued_at) do not fail the registration.
func (p *Provider) registerUntraced(ctx context.Context, endpoint string, meta *oauthex.ClientRegistrationMetadata) (*registered, error) {
	payload, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("invalid registration endpoint %s", netguard.RedactURL(endpoint))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, err // a *url.Error, without the body
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("HTTP %d: reading the response: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, registrationError(resp.StatusCode, body)
	}
	var r struct {
		ClientID     string          `json:"client_id"`
		ClientSecret string          `json:"client_secret"`
		ExpiresAt    json.RawMessage `json:"client_secret_expires_at"`
		AuthMethod   string          `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		// The decoder's message may quote the body.
		return nil, fmt.Errorf("HTTP %d: the response is not valid client information", resp.StatusCode)
	}
	if r.ClientID == "" {
		return nil, fmt.Errorf("HTTP %d: the response has no client_id", resp.StatusCode)
	}
	out := &registered{ClientID: r.ClientID, ClientSecret: r.ClientSecret, AuthMethod: r.AuthMethod}
	if len(r.ExpiresAt) > 0 && string(r.ExpiresAt) != "null" {
		var at float64
		if err := json.Unmarshal(r.ExpiresAt, &at); err != nil {
			return nil, fmt.Errorf("HTTP %d: client_secret_expires_at is not a number", resp.StatusCode)
		}
		if at >= 1 {
			out.Expiry = time.Unix(int64(at), 0)
		}
	}
	return out, nil
}

// registrationError describes a refused registration by its status and,
// when the body is an OAuth error response (RFC 7591 section 3.2.2), its
// error and error_description: never by the rest of the body.
func registrationError(status int, body []byte) error {
	msg := fmt.Sprintf("HTTP %d", status)
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
		// Should a server send these with an error, they are kept out of
		// the message too.
		Secret      string `json:"client_secret"`
		AccessToken string `json:"registration_access_token"`
	}
	err := json.Unmarshal(body, &e)
	var typeErr *json.UnmarshalTypeError
	if (err == nil || errors.As(err, &typeErr)) && e.Error != "" {
		msg += ": " + redact(e.Error, e.Secret, e.AccessToken)
		if e.Description != "" {
			msg += ": " + redact(e.Description, e.Secret, e.AccessToken)
		}
	}
	return errors.New(msg)
}

// bestAuthMethod picks a token endpoint authentication method among the
// supported ones.
func bestAuthMethod(supported []string, haveSecret bool) string {
	if !haveSecret {
		return "none"
	}
	for _, m := range []string{"client_secret_basic", "client_secret_post"} {
		if len(supported) == 0 || contains(supported, m) {
			return m
		}
	}
	return "client_secret_basic"
}

// applicationType is "native" for loopback redirects, else "web".
func applicationType(redirect string) string {
	u, err := url.Parse(redirect)
	if err == nil {
		switch h := u.Hostname(); {
		case h == "localhost", strings.HasPrefix(h, "127."), h == "::1":
			return "native"
		}
	}
	return "web"
}

// checkEndpoint accepts https URLs, and http ones on loopback (development).
func (p *Provider) checkEndpoint(raw string) error {
	if p.cfg.Guard != nil {
		if err := p.cfg.Guard.CheckURL(raw); err != nil {
			return err
		}
	}
	return checkEndpoint(raw)
}

func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		switch h := u.Hostname(); {
		case h == "localhost", strings.HasPrefix(h, "127."), h == "::1":
			return nil
		}
		return errors.New("must be https")
	}
	return fmt.Errorf("scheme %q is not allowed", u.Scheme)
}

// getJSON fetches a JSON document; a 4xx is "not found" (false, nil).
func (p *Provider) getJSON(ctx context.Context, raw string, v any) (bool, error) {
	if err := p.checkEndpoint(raw); err != nil {
		return false, fmt.Errorf("%s: %w", netguard.RedactURL(raw), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.http.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s: HTTP %d", netguard.RedactURL(raw), resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return false, fmt.Errorf("%s: %w", netguard.RedactURL(raw), err)
	}
	return true, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sanitize(s string) string { return netguard.Sanitize(s) }
