package oauth

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// StateLifetime is how long an authorisation may take: a callback whose
// state is older is refused.
const StateLifetime = 10 * time.Minute

// Config configures a Provider.
type Config struct {
	// ServerID is the id of the MCP server, the first part of every state.
	// Required; it must not contain ':'.
	ServerID string
	// ServerURL is the MCP endpoint: the protected resource, sent as the
	// RFC 8707 resource parameter. Required.
	ServerURL string
	// RedirectURL is the callback URL the authorization server sends the
	// user back to. Required.
	RedirectURL string

	// Grant is GrantAuthorizationCode (the zero value) or
	// GrantClientCredentials.
	Grant string

	// ClientName is the client_name registered dynamically. Empty means
	// "agentmcp".
	ClientName string
	// ClientMetadataURL, if set, is the HTTPS URL of this client's Client ID
	// Metadata Document, used as client_id where the authorization server
	// supports such documents.
	ClientMetadataURL string
	// Client holds pre-registered client credentials, used instead of
	// dynamic registration.
	Client *ClientCredentials

	// HTTPClient carries every request of the flow: metadata, registration,
	// token and refresh requests. It should be guarded against SSRF
	// (netguard); the Manager's client is. Nil means http.DefaultClient.
	HTTPClient *http.Client
	// Guard, if set, checks every URL of the flow before it is requested,
	// so that a refused address fails with netguard.ErrBlockedURL whatever
	// the HTTP client does. The agent passes its Manager's.
	Guard *netguard.Guard
	// Now tells time, for state lifetime and token expiry. Nil means
	// time.Now.
	Now func() time.Time
	// Logger receives the provider's logs; tokens and codes are never
	// logged. Nil discards them.
	Logger *slog.Logger
	// RefreshAttempts bounds the tries of one refresh that fails with a
	// network error or a 5xx. Zero means 3.
	RefreshAttempts int
	// TracerProvider and MeterProvider receive the provider's spans and
	// metrics (telemetry.go). Nil means the global ones.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// ClientCredentials are pre-registered client credentials.
type ClientCredentials struct {
	ID     string
	Secret string
	// PrivateKey, if set, authenticates the client with a signed JWT
	// (private_key_jwt, RFC 7523): ES256 for an ECDSA P-256 key, RS256 for
	// an RSA key.
	PrivateKey crypto.Signer
	// AuthMethod is the token endpoint authentication method:
	// "client_secret_basic", "client_secret_post", "private_key_jwt" or
	// "none". Empty means private_key_jwt with a PrivateKey, else the best
	// the authorization server supports.
	AuthMethod string
}

// Grant types a Provider can use.
const (
	// GrantAuthorizationCode has a user authorise in a browser: Authorize
	// returns the URL to visit, and Exchange finishes. The default.
	GrantAuthorizationCode = "authorization_code"
	// GrantClientCredentials authorises the client itself (machine to
	// machine): Authorize gets a token without a user and returns "".
	// It needs Config.Client.
	GrantClientCredentials = "client_credentials"
)

// Provider is the default OAuth client of one MCP server: discovery (RFC
// 9728 protected resource metadata, RFC 8414 / OpenID authorization server
// metadata, with the 2025-03-26 fallbacks), client registration (stored
// registration, client ID metadata document, pre-registered credentials,
// or RFC 7591 dynamic registration), PKCE S256, the RFC 8707 resource
// parameter, scope selection and step-up, RFC 9207 issuer checks, and
// refresh. What it learns lives in its Storage, so flows and tokens survive
// restarts.
//
// It implements mcpclient.AuthProvider. A Provider is safe for concurrent
// use; refreshes are single-flight within the process and, through
// Storage.Lock, across processes sharing the storage.
type Provider struct {
	cfg    Config
	st     Storage
	http   *http.Client
	now    func() time.Time
	logger *slog.Logger

	// refresh serialises refreshes in this process.
	refresh sync.Mutex

	// mu guards the cached token and the unsaved one.
	mu     sync.Mutex
	cached *Token
	loaded bool // whether cached reflects the storage (or unsaved.t)
	// unsaved is a refreshed token the storage did not take; cached is its
	// token meanwhile.
	unsaved *unsaved
}

// unsaved is a token the authorization server issued by a refresh that
// could not be saved (the storage did not answer): it is used from memory,
// and saved again later in place of base, the stored token it replaces.
// Dropping it would lose the rotated refresh token: the next refresh would
// present base's, which the authorization server has already rotated.
type unsaved struct {
	t, base *Token
	retry   time.Time // no new try before then
}

// unsavedRetry is the least time between two tries to save an unsaved
// token outside a refresh.
const unsavedRetry = time.Second

var _ mcpclient.AuthProvider = (*Provider)(nil)

// New returns a Provider. It does no I/O.
func New(st Storage, cfg Config) (*Provider, error) {
	switch {
	case st == nil:
		return nil, errors.New("oauth: nil storage")
	case cfg.ServerID == "" || strings.Contains(cfg.ServerID, ":"):
		return nil, fmt.Errorf("oauth: invalid server id %q", cfg.ServerID)
	case cfg.ServerURL == "":
		return nil, errors.New("oauth: no server URL")
	case cfg.Grant != "" && cfg.Grant != GrantAuthorizationCode && cfg.Grant != GrantClientCredentials:
		return nil, fmt.Errorf("oauth: unknown grant %q", cfg.Grant)
	case cfg.Grant == GrantClientCredentials && cfg.Client == nil:
		return nil, errors.New("oauth: the client_credentials grant needs client credentials")
	case cfg.Grant != GrantClientCredentials && cfg.RedirectURL == "":
		return nil, errors.New("oauth: no redirect URL")
	}
	if u, err := url.Parse(cfg.RedirectURL); cfg.RedirectURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return nil, fmt.Errorf("oauth: invalid redirect URL %q", cfg.RedirectURL)
	}
	if cfg.ClientMetadataURL != "" {
		if u, err := url.Parse(cfg.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
			return nil, errors.New("oauth: the client metadata URL must be an https URL with a path")
		}
	}
	p := &Provider{cfg: cfg, st: st, http: cfg.HTTPClient, now: cfg.Now, logger: cfg.Logger}
	if p.http == nil {
		p.http = http.DefaultClient
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	if p.cfg.ClientName == "" {
		p.cfg.ClientName = "agentmcp"
	}
	if p.cfg.RefreshAttempts <= 0 {
		p.cfg.RefreshAttempts = 3
	}
	return p, nil
}

// Storage keys. The namespace and server id scope them (Storage).
const (
	keyToken       = "token"
	keyStatePrefix = "state/"
	keyClient      = "client_info/" // + issuer
	keyScopes      = "scopes/"      // + issuer
)

// Token is what the provider stores after a successful exchange.
type Token struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`

	// IssuedAt is when the token was received, for the refresh margin.
	// Tokens stored before it was recorded have none.
	IssuedAt time.Time `json:"issued_at,omitzero"`

	// What a refresh needs, so that it works after a restart without
	// discovery.
	Issuer        string `json:"issuer"`
	TokenEndpoint string `json:"token_endpoint"`
	Resource      string `json:"resource"`
	Client        client `json:"client"`
}

// client is a registration with an authorization server.
type client struct {
	Issuer      string `json:"issuer,omitempty"` // the audience of client assertions
	ID          string `json:"client_id"`
	Secret      string `json:"client_secret,omitempty"`
	AuthMethod  string `json:"token_endpoint_auth_method,omitempty"`
	RedirectURI string `json:"redirect_uri,omitempty"`
	Kind        string `json:"kind,omitempty"` // "dcr", "cimd", "preregistered"
}

// flow is a pending authorisation, stored under its state nonce.
type flow struct {
	ServerID     string    `json:"server_id"`
	CreatedAt    time.Time `json:"created_at"`
	Verifier     string    `json:"verifier"`
	Issuer       string    `json:"issuer"`
	IssSupported bool      `json:"iss_supported,omitempty"`
	Endpoint     string    `json:"token_endpoint"`
	Resource     string    `json:"resource"`
	Scopes       []string  `json:"scopes,omitempty"`
	Client       client    `json:"client"`
}

// Token returns the access token to send, refreshing it first when it has
// expired (or expires within the refresh margin: a third of its lifetime,
// at most 30 seconds) and can be refreshed. A refresh
// that the authorization server refuses for good (invalid_grant, or any
// other OAuth error or 4xx that is not transient) drops the tokens, so
// that the request goes without one and the server's 401 starts a new
// authorisation; invalid_client and unauthorized_client drop the dynamic
// registration too, so that it registers anew. One that fails for a
// network error, a 5xx or a 429 is retried, and keeps the refresh token
// for later.
//
// A refreshed token that the storage does not take (it does not answer) is
// kept in memory and used, and saved later in place of the token it
// replaced (never over a token someone else wrote since).
func (p *Provider) Token(ctx context.Context) (string, error) {
	p.retryUnsaved(ctx)
	t, err := p.current(ctx)
	if err != nil || t == nil {
		return "", err
	}
	if !p.expiring(t) {
		return t.AccessToken, nil
	}
	if t.RefreshToken == "" {
		return "", nil
	}
	stale := t
	t, err = p.refreshToken(ctx, stale.AccessToken)
	if err != nil && ctx.Err() == nil && p.now().Before(stale.Expiry) {
		// The refresh failed for a passing reason (the storage or the
		// authorization server not answering) before the access token
		// expired: it is still good, so the request goes with it, and the
		// next use tries the refresh again.
		p.logger.Debug("oauth refresh failed; the access token is still valid and used", "server", p.cfg.ServerID, "error", err)
		return stale.AccessToken, nil
	}
	if err != nil || t == nil {
		return "", err
	}
	return t.AccessToken, nil
}

func (p *Provider) expiring(t *Token) bool {
	return !t.Expiry.IsZero() && !p.now().Add(refreshMargin(t)).Before(t.Expiry)
}

// maxRefreshMargin is the refresh margin of tokens that live long enough,
// and of tokens stored without their issue time.
const maxRefreshMargin = 30 * time.Second

// refreshMargin is how long before its expiry t is refreshed: a third of
// its lifetime, at most maxRefreshMargin. A fixed 30 seconds would refresh
// a token that lives 30 seconds or less at every use (each refresh a
// rotation that a crash before the save can lose); a third leaves two
// thirds of the lifetime between refreshes, and time for a slow refresh
// to finish before the token expires.
func refreshMargin(t *Token) time.Duration {
	if t.IssuedAt.IsZero() || !t.Expiry.After(t.IssuedAt) {
		return maxRefreshMargin
	}
	return min(maxRefreshMargin, t.Expiry.Sub(t.IssuedAt)/3)
}

// current returns the stored token, cached.
func (p *Provider) current(ctx context.Context) (*Token, error) {
	p.mu.Lock()
	if p.loaded {
		t := p.cached
		p.mu.Unlock()
		return t, nil
	}
	p.mu.Unlock()
	t, err := p.load(ctx)
	if err != nil {
		return nil, err
	}
	p.setCached(t)
	return t, nil
}

func (p *Provider) setCached(t *Token) {
	p.mu.Lock()
	p.cached, p.loaded = t, true
	p.mu.Unlock()
}

// load reads the stored token, or nil.
func (p *Provider) load(ctx context.Context) (*Token, error) {
	data, err := p.st.Get(ctx, keyToken)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: reading the token: %w", err)
	}
	var t Token
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("oauth: stored token: %w", err)
	}
	if t.Resource != "" && strings.TrimSuffix(t.Resource, "/") != strings.TrimSuffix(p.cfg.ServerURL, "/") {
		// A token for another resource (the server's URL changed since,
		// or the row was copied from another server's) is never sent:
		// without it, the server's 401 starts an authorisation for this
		// one.
		p.logger.Warn("oauth: the stored token is for another resource; not using it", "server", p.cfg.ServerID)
		return nil, nil
	}
	return &t, nil
}

// saveNew saves the token of a new authorisation. It holds the refresh
// lock, which excludes every user of the storage, this process's
// refreshes included: a refresh in flight finishes first, and a later one
// finds this token.
func (p *Provider) saveNew(ctx context.Context, t *Token) error {
	return p.st.Lock(ctx, "refresh", func(ctx context.Context) error {
		return p.save(ctx, t)
	})
}

func (p *Provider) save(ctx context.Context, t *Token) error {
	if err := p.put(ctx, t); err != nil {
		return err
	}
	p.mu.Lock()
	p.cached, p.loaded, p.unsaved = t, true, nil
	p.mu.Unlock()
	return nil
}

// put writes t to the storage.
func (p *Provider) put(ctx context.Context, t *Token) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := p.st.Put(ctx, keyToken, data, time.Time{}); err != nil {
		return fmt.Errorf("oauth: saving the token: %w", err)
	}
	return nil
}

// refreshToken refreshes the token whose access token was stale, once for
// every caller: in this process the refresh mutex, across processes the
// storage lock, and in both a re-read that finds a refresh someone else
// already made.
func (p *Provider) refreshToken(ctx context.Context, stale string) (*Token, error) {
	// Once sent, a refresh is seen through and its outcome stored, whoever
	// stops waiting for it (a call cancelled, an agent closed): the
	// authorization server may already have rotated the refresh token, and
	// a rotated token not stored is a grant lost (its next use is refused as
	// a reuse, and the user must sign in again).
	type outcome struct {
		t   *Token
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		t, err := p.refreshLocked(rctx, ctx, stale)
		done <- outcome{t, err}
	}()
	select {
	case o := <-done:
		return o.t, o.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refreshTimeout bounds one refresh, its retries and the storing of its
// outcome included.
const refreshTimeout = time.Minute

// refreshLocked refreshes under the locks, on ctx (detached from the
// caller's); caller is the caller's context: a refresh not yet sent when the
// caller has gone is not sent.
func (p *Provider) refreshLocked(ctx, caller context.Context, stale string) (*Token, error) {
	p.refresh.Lock()
	defer p.refresh.Unlock()
	if t, _ := p.current(ctx); t == nil || t.AccessToken != stale {
		return t, nil // refreshed (or dropped) while we waited
	}
	var out *Token
	err := p.st.Lock(ctx, "refresh", func(ctx context.Context) error {
		// A token refreshed earlier but not saved is saved first: its
		// refresh token is the one to present.
		if err := p.saveUnsaved(ctx); err != nil {
			return err
		}
		t, err := p.load(ctx) // another process may have refreshed
		if err != nil {
			return err
		}
		if t == nil || t.AccessToken != stale {
			p.setCached(t)
			out = t
			return nil
		}
		if err := caller.Err(); err != nil {
			return err // nobody waits for it any more: not sent
		}
		out, err = p.doRefresh(ctx, t)
		return err
	})
	return out, err
}

// doRefresh makes the refresh request, with retries for transient
// failures. Before it writes or deletes the token, it makes sure the
// stored one is still t: one that changed meanwhile (an authorisation
// completed while the lock was lost, or another writer) is left alone and
// returned.
func (p *Provider) doRefresh(ctx context.Context, t *Token) (*Token, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.RefreshToken}}
	if t.Resource != "" {
		form.Set("resource", t.Resource)
	}
	var lastErr error
	for attempt := 1; attempt <= p.cfg.RefreshAttempts; attempt++ {
		resp, err := p.tokenRequest(ctx, t.TokenEndpoint, t.Client, form)
		if err == nil {
			next := p.tokenFrom(resp, t.Issuer, t.TokenEndpoint, t.Resource, t.Client, t.Scopes)
			if next.RefreshToken == "" {
				next.RefreshToken = t.RefreshToken // not rotated
			}
			cur, same, err := p.stillStored(ctx, t)
			if err == nil && !same {
				return cur, nil
			}
			if err == nil {
				err = p.save(ctx, next)
			}
			if err != nil {
				// The authorization server has rotated the refresh
				// token: losing next would lose the grant. Use it, and
				// save it once the storage answers.
				p.keepUnsaved(next, t, err)
				return next, nil
			}
			p.logger.Debug("oauth token refreshed", "server", p.cfg.ServerID)
			return next, nil
		}
		var terr *TokenError
		if errors.As(err, &terr) && terr.refused() {
			// The grant is gone (or the client is): drop the tokens, so
			// the next request goes without one and the 401 starts a new
			// authorisation. Keeping them would fail every request
			// before it is sent, and no 401 would ever come.
			if cur, same, err := p.stillStored(ctx, t); err != nil || !same {
				return cur, err
			}
			p.logger.Info("oauth refresh refused; authorization needed again", "server", p.cfg.ServerID, "status", terr.StatusCode, "error", terr.Code)
			if terr.lostClient() {
				p.forgetClient(ctx, t.Issuer, t.Client.ID)
			}
			if err := p.st.Delete(ctx, keyToken); err != nil {
				return nil, fmt.Errorf("oauth: dropping the refused token: %w", err)
			}
			p.setCached(nil)
			return nil, nil
		}
		if terr != nil && !terr.Transient() {
			return nil, fmt.Errorf("oauth: refreshing the token: %w", err)
		}
		lastErr = err
		if attempt < p.cfg.RefreshAttempts {
			select {
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	// The refresh token is kept: the failure was not its fault.
	return nil, fmt.Errorf("oauth: refreshing the token failed %d times (the refresh token is kept): %w", p.cfg.RefreshAttempts, lastErr)
}

// keepUnsaved keeps next, refreshed from base, in memory after the storage
// failed to take it with err.
func (p *Provider) keepUnsaved(next, base *Token, err error) {
	p.logger.Warn("oauth: the refreshed token could not be saved; it is used from memory and saved when the storage answers", "server", p.cfg.ServerID, "error", err)
	p.mu.Lock()
	p.unsaved = &unsaved{t: next, base: base, retry: p.now().Add(unsavedRetry)}
	p.cached, p.loaded = next, true
	p.mu.Unlock()
}

// retryUnsaved tries to save the unsaved token, if there is one and its
// time to try has come, unless a refresh is under way (which saves it
// first). A failure is logged: the token stays in memory.
func (p *Provider) retryUnsaved(ctx context.Context) {
	p.mu.Lock()
	u := p.unsaved
	due := u != nil && !p.now().Before(u.retry)
	if due {
		u.retry = p.now().Add(unsavedRetry)
	}
	p.mu.Unlock()
	if !due || !p.refresh.TryLock() {
		return
	}
	defer p.refresh.Unlock()
	if err := p.st.Lock(ctx, "refresh", p.saveUnsaved); err != nil {
		p.logger.Debug("oauth: saving the refreshed token failed again", "server", p.cfg.ServerID, "error", err)
	}
}

// saveUnsaved saves the unsaved token, if there is one, in place of the
// token it was refreshed from. If the stored token is another one (a new
// authorisation, or a refresh by a replica that took the server over),
// that one stands and the unsaved one is dropped. The caller holds the
// refresh mutex and the storage lock.
func (p *Provider) saveUnsaved(ctx context.Context) error {
	p.mu.Lock()
	u := p.unsaved
	p.mu.Unlock()
	if u == nil {
		return nil
	}
	cur, err := p.load(ctx)
	if err != nil {
		return err
	}
	switch {
	case sameToken(cur, u.t):
		// Saved already: the write whose answer was lost was made.
	case sameToken(cur, u.base):
		if err := p.put(ctx, u.t); err != nil {
			return err
		}
		p.logger.Info("oauth: the refreshed token is saved", "server", p.cfg.ServerID)
	default:
		p.logger.Info("oauth token replaced while the refreshed one could not be saved; the replacement is kept", "server", p.cfg.ServerID)
		p.mu.Lock()
		p.unsaved, p.cached, p.loaded = nil, cur, true
		p.mu.Unlock()
		return nil
	}
	p.mu.Lock()
	p.unsaved = nil
	p.mu.Unlock()
	return nil
}

// sameToken reports whether a and b are the same grant state: the same
// access and refresh tokens.
func sameToken(a, b *Token) bool {
	return a != nil && b != nil && a.AccessToken == b.AccessToken && a.RefreshToken == b.RefreshToken
}

// stillStored re-reads the stored token before a refresh of t writes or
// deletes it, and reports whether it is still t. If not, it caches and
// returns the stored one (nil if none), which the refresh must leave
// alone.
func (p *Provider) stillStored(ctx context.Context, t *Token) (*Token, bool, error) {
	cur, err := p.load(ctx)
	if err != nil {
		return nil, false, err
	}
	if sameToken(cur, t) {
		return cur, true, nil
	}
	p.logger.Info("oauth token replaced while it was refreshed; the replacement is kept", "server", p.cfg.ServerID)
	p.setCached(cur)
	return cur, false, nil
}

// forgetClient deletes the stored registration with issuer if it is
// clientID's, so that the next authorisation registers anew. A failure
// is logged: the token is dropped all the same.
func (p *Provider) forgetClient(ctx context.Context, issuer, clientID string) {
	key := keyClient + issuer
	data, err := p.st.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return // pre-registered, or a metadata document: nothing stored
	}
	if err == nil {
		var cl client
		if json.Unmarshal(data, &cl) == nil && cl.ID != clientID {
			return // registered anew already
		}
		err = p.st.Delete(ctx, key)
	}
	if err != nil {
		p.logger.Warn("oauth: dropping the refused client registration failed", "server", p.cfg.ServerID, "error", err)
		return
	}
	p.logger.Info("oauth client registration refused; it will register again", "server", p.cfg.ServerID)
}

// Authorize starts an authorisation after the server refused a request:
// discovery, client registration, and a new state bound to a PKCE
// verifier. It returns the URL the user must visit. When the refusal is a
// 401 for a stored token that can still be refreshed, it refreshes instead
// and returns "".
func (p *Provider) Authorize(ctx context.Context, c *mcpclient.AuthChallenge) (string, error) {
	challenges, _ := oauthex.ParseWWWAuthenticate(c.WWWAuthenticate)
	bearerErr := challengeParam(challenges, "error")
	if c.StatusCode == http.StatusForbidden && bearerErr != "insufficient_scope" {
		return "", fmt.Errorf("oauth: the server refused the request (403 %s), and more authorization would not help", bearerErr)
	}
	reason := "insufficient scope"
	if c.StatusCode == http.StatusUnauthorized {
		reason = "no token"
		t, err := p.current(ctx)
		if err != nil {
			// The store does not answer: the grant may be fine. A new
			// authorisation would send the user through sign-in again for
			// an outage; fail this attempt instead (it is retried).
			return "", fmt.Errorf("oauth: reading the stored token: %w", err)
		}
		if t != nil && t.RefreshToken != "" {
			// The server does not take the token any more; a refresh may
			// be enough.
			next, err := p.refreshToken(ctx, t.AccessToken)
			switch {
			case err != nil:
				// Not refused (a refusal drops the tokens and returns
				// none): the authorization server, the store or the network
				// failed. The grant stands; fail this attempt.
				return "", fmt.Errorf("oauth: refreshing the token: %w", err)
			case next != nil && next.AccessToken != t.AccessToken:
				return "", nil
			}
			reason = "the refresh gave no new token"
		} else if t != nil {
			reason = "no refresh token"
		}
	}

	resource := p.cfg.ServerURL
	prm, err := p.protectedResource(ctx, challengeParam(challenges, "resource_metadata"), resource)
	if err != nil {
		return "", err
	}
	asm, err := p.authServer(ctx, prm.AuthorizationServers[0])
	if err != nil {
		return "", err
	}
	cl, err := p.registration(ctx, asm)
	if err != nil {
		return "", err
	}

	scopes := strings.Fields(challengeParam(challenges, "scope"))
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if p.cfg.Grant == GrantClientCredentials {
		return "", p.clientCredentials(ctx, asm, prm.Resource, cl, scopes)
	}
	if granted, err := p.st.Get(ctx, keyScopes+asm.Issuer); err == nil {
		// Step-up: ask for what was granted before as well (SEP-2350).
		scopes = union(strings.Fields(string(granted)), scopes)
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}

	nonce := rand.Text() // 26 base32 characters: 130 random bits
	verifier := rand.Text() + rand.Text()
	f := flow{
		ServerID:     p.cfg.ServerID,
		CreatedAt:    p.now(),
		Verifier:     verifier,
		Issuer:       asm.Issuer,
		IssSupported: asm.AuthorizationResponseIssParameterSupported,
		Endpoint:     asm.TokenEndpoint,
		Resource:     prm.Resource,
		Scopes:       scopes,
		Client:       cl,
	}
	data, _ := json.Marshal(f)
	// Kept an hour, so that an expired state is told apart from a forged
	// one; honoured for StateLifetime (on Config.Now's clock: the storage
	// expiry only collects garbage, on the storage's clock).
	if err := p.st.Put(ctx, keyStatePrefix+nonce, data, time.Now().Add(time.Hour)); err != nil {
		return "", fmt.Errorf("oauth: saving the state: %w", err)
	}

	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {cl.ID},
		"redirect_uri":          {p.cfg.RedirectURL},
		"state":                 {p.cfg.ServerID + ":" + nonce},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"resource":              {prm.Resource},
	}
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	p.logger.Info("oauth authorization needed", "server", p.cfg.ServerID, "status", c.StatusCode, "reason", reason)
	authURL := asm.AuthorizationEndpoint
	if strings.Contains(authURL, "?") {
		authURL += "&" + q.Encode()
	} else {
		authURL += "?" + q.Encode()
	}
	return authURL, nil
}

// clientCredentials gets a token for the client itself.
func (p *Provider) clientCredentials(ctx context.Context, asm *oauthex.AuthServerMeta, resource string, cl client, scopes []string) error {
	form := url.Values{"grant_type": {GrantClientCredentials}, "resource": {resource}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	tr, err := p.tokenRequest(ctx, asm.TokenEndpoint, cl, form)
	if err != nil {
		return fmt.Errorf("oauth: client credentials: %w", err)
	}
	return p.saveNew(ctx, p.tokenFrom(tr, asm.Issuer, asm.TokenEndpoint, resource, cl, scopes))
}

// challengeParam returns a parameter of the first Bearer challenge that
// has it.
func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// union returns a followed by the elements of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
