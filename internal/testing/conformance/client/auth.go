package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/oauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The conformance suite's client settings: a redirect URI nothing listens
// on (its authorization endpoints redirect at once, and the client reads
// the code from the redirect), and the client ID metadata document URL it
// expects.
const (
	redirectURI       = "http://localhost:3000/callback"
	clientMetadataURL = "https://conformance-test.local/client-metadata.json"
	// maxAuthorizations bounds how often one run authorises: the
	// scope-retry-limit scenario checks that a client gives up.
	maxAuthorizations = 3
)

// authScenarios are the OAuth scenarios: all but the extensions use the
// authorization code flow through the default oauth.Provider.
func authScenarios() map[string]scenario {
	code := scenario{Server: withCodeFlow, Run: callTestTool}
	s := map[string]scenario{}
	for _, name := range []string{
		"metadata-default", "metadata-var1", "metadata-var2", "metadata-var3",
		"basic-cimd",
		"scope-from-www-authenticate", "scope-from-scopes-supported", "scope-omitted-when-undefined",
		"scope-step-up", "scope-retry-limit",
		"token-endpoint-auth-basic", "token-endpoint-auth-post", "token-endpoint-auth-none",
		"pre-registration",
		"2025-03-26-oauth-metadata-backcompat", "2025-03-26-oauth-endpoint-fallback",
		"resource-mismatch", "offline-access-scope", "offline-access-not-supported",
	} {
		s["auth/"+name] = code
	}
	s["auth/client-credentials-basic"] = scenario{Server: withClientCredentials, Run: callTestTool}
	s["auth/client-credentials-jwt"] = scenario{Server: withClientCredentials, Run: callTestTool}
	s["auth/cross-app-access-complete-flow"] = scenario{Server: withCrossAppAccess, Run: callTestTool}
	return s
}

// callTestTool calls the auth scenarios' tool, if the server has one.
func callTestTool(ctx context.Context, e *env, m *mcpclient.Manager) error {
	for _, t := range m.ListTools(mcpclient.Filter{}) {
		if t.Name == "test-tool" {
			return callExpectAuth(ctx, e, m, "test-tool", map[string]any{}, "")
		}
	}
	return nil
}

// context is the scenario's MCP_CONFORMANCE_CONTEXT.
type conformanceContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPIssuer        string `json:"idp_issuer"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
}

func (e *env) context() (conformanceContext, error) {
	var c conformanceContext
	if e.Context == "" {
		return c, nil
	}
	err := json.Unmarshal([]byte(e.Context), &c)
	return c, err
}

// withCodeFlow gives the server the default OAuth provider, with the
// context's pre-registered client if there is one.
func withCodeFlow(e *env, m *mcpclient.Manager, so *mcpclient.ServerOptions) error {
	cc, err := e.context()
	if err != nil {
		return err
	}
	cfg := oauth.Config{
		ServerID:          serverID,
		ServerURL:         e.URL,
		RedirectURL:       redirectURI,
		ClientName:        "agentmcp conformance client",
		ClientMetadataURL: clientMetadataURL,
		HTTPClient:        m.HTTPClient(),
		Guard:             m.Guard(),
		Logger:            e.Logger,
	}
	if cc.ClientID != "" {
		cfg.Client = &oauth.ClientCredentials{ID: cc.ClientID, Secret: cc.ClientSecret}
	}
	p, err := oauth.New(&oauth.MemoryStorage{}, cfg)
	if err != nil {
		return err
	}
	e.oauth = p
	so.Auth = p
	return nil
}

// withClientCredentials authorises the client itself (client_secret_basic,
// or private_key_jwt with the context's key).
func withClientCredentials(e *env, m *mcpclient.Manager, so *mcpclient.ServerOptions) error {
	cc, err := e.context()
	if err != nil {
		return err
	}
	creds := &oauth.ClientCredentials{ID: cc.ClientID, Secret: cc.ClientSecret}
	if cc.PrivateKeyPEM != "" {
		if creds.PrivateKey, err = parseKey(cc.PrivateKeyPEM); err != nil {
			return err
		}
	}
	p, err := oauth.New(&oauth.MemoryStorage{}, oauth.Config{
		ServerID:   serverID,
		ServerURL:  e.URL,
		Grant:      oauth.GrantClientCredentials,
		Client:     creds,
		HTTPClient: m.HTTPClient(),
		Guard:      m.Guard(),
		Logger:     e.Logger,
	})
	if err != nil {
		return err
	}
	so.Auth = p
	return nil
}

func parseKey(pemText string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("private_key_pem: no PEM block")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private_key_pem: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private_key_pem: %T cannot sign", key)
	}
	return signer, nil
}

// connectReady connects and discovers the scenario's server, letting the
// user authorise (headlessly) whenever the server asks.
func connectReady(ctx context.Context, e *env, m *mcpclient.Manager) error {
	res, err := m.ConnectToServer(ctx, serverID)
	if err != nil {
		return err
	}
	for {
		switch res.State {
		case mcpclient.StateConnected:
			d, err := m.DiscoverIfConnected(ctx, serverID, nil)
			if err != nil {
				return err
			}
			if d.Success {
				return nil
			}
			info, _ := m.Server(serverID)
			if d.State != mcpclient.StateAuthenticating || info.AuthURL == "" {
				return fmt.Errorf("discover: %w", d.Err)
			}
			res = mcpclient.ConnectResult{State: d.State, AuthURL: info.AuthURL, Err: d.Err}
		case mcpclient.StateAuthenticating:
			if res.AuthURL == "" {
				return fmt.Errorf("connect: authorization needed: %w", res.Err)
			}
			if err := e.authorize(ctx, m, res.AuthURL); err != nil {
				return err
			}
			info, _ := m.Server(serverID)
			if info.State == mcpclient.StateReady {
				return nil
			}
			res = mcpclient.ConnectResult{State: info.State, AuthURL: info.AuthURL, Err: info.Error}
		default:
			return fmt.Errorf("connect: %s: %w", res.State, res.Err)
		}
	}
}

// authorize is the user: it visits the authorization URL, takes the
// callback the authorization server redirects to, finishes the flow, and
// waits for the server to reconnect.
func (e *env) authorize(ctx context.Context, m *mcpclient.Manager, authURL string) error {
	if e.oauth == nil {
		return errors.New("the server asks for authorization, but this scenario has no browser flow")
	}
	if e.authorizations == maxAuthorizations {
		return fmt.Errorf("giving up after %d authorizations", maxAuthorizations)
	}
	e.authorizations++
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return fmt.Errorf("authorization endpoint: HTTP %d without a redirect", resp.StatusCode)
	}
	if err := e.oauth.Exchange(ctx, loc.Query()); err != nil {
		m.FinishAuthorization(serverID, err)
		return err
	}
	m.FinishAuthorization(serverID, nil)
	m.WaitForConnections(ctx)
	return nil
}

// withCrossAppAccess authorises with an enterprise identity provider
// (SEP-990): the user's ID token is exchanged at the IdP for an identity
// assertion grant (RFC 8693), which the MCP server's authorization server
// takes as a JWT bearer grant (RFC 7523) from the client (client secret
// basic).
func withCrossAppAccess(e *env, m *mcpclient.Manager, so *mcpclient.ServerOptions) error {
	cc, err := e.context()
	if err != nil {
		return err
	}
	so.Auth = &crossApp{cc: cc, url: e.URL, http: m.HTTPClient()}
	return nil
}

type crossApp struct {
	cc   conformanceContext
	url  string
	http *http.Client

	mu    sync.Mutex
	token string
}

func (x *crossApp) Token(context.Context) (string, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.token, nil
}

func (x *crossApp) Authorize(ctx context.Context, ch *mcpclient.AuthChallenge) (string, error) {
	challenges, _ := oauthex.ParseWWWAuthenticate(ch.WWWAuthenticate)
	prmURL := ""
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			prmURL = u
		}
	}
	if prmURL == "" {
		u, err := url.Parse(x.url)
		if err != nil {
			return "", err
		}
		prmURL = u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + u.Path
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := x.getJSON(ctx, prmURL, &prm); err != nil || len(prm.AuthorizationServers) == 0 {
		return "", fmt.Errorf("protected resource metadata: %v", err)
	}
	issuer := prm.AuthorizationServers[0]
	var asm struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := x.getJSON(ctx, strings.TrimSuffix(issuer, "/")+"/.well-known/oauth-authorization-server", &asm); err != nil {
		return "", fmt.Errorf("authorization server metadata: %v", err)
	}
	// 1. The ID token for an identity assertion grant, at the IdP.
	jag, err := x.post(ctx, x.cc.IdPTokenEndpoint, url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
		"subject_token":        {x.cc.IdPIDToken},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:id_token"},
		"audience":             {asm.Issuer},
		"resource":             {prm.Resource},
		"client_id":            {x.cc.IdPClientID},
	}, "", "")
	if err != nil {
		return "", fmt.Errorf("token exchange at the IdP: %w", err)
	}
	// 2. The grant for an access token, at the authorization server.
	token, err := x.post(ctx, asm.TokenEndpoint, url.Values{
		"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"assertion":  {jag},
	}, x.cc.ClientID, x.cc.ClientSecret)
	if err != nil {
		return "", fmt.Errorf("JWT bearer grant: %w", err)
	}
	x.mu.Lock()
	x.token = token
	x.mu.Unlock()
	return "", nil
}

func (x *crossApp) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := x.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

// post makes a token request and returns its access_token.
func (x *crossApp) post(ctx context.Context, endpoint string, form url.Values, id, secret string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if id != "" {
		req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	}
	resp, err := x.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || out.AccessToken == "" {
		return "", fmt.Errorf("HTTP %d %s", resp.StatusCode, out.Error)
	}
	return out.AccessToken, nil
}
