package agent

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/oauth"
	"github.com/agentmcp/agentmcp/store"
)

// OAuthProvider is what the agent needs of an OAuth client: the Manager's
// AuthProvider, plus the callback half of the flow. *oauth.Provider is one.
type OAuthProvider interface {
	mcpclient.AuthProvider
	// CheckState reports whether a callback's state can be redeemed,
	// without consuming it.
	CheckState(ctx context.Context, state string) error
	// ConsumeState makes a state unusable.
	ConsumeState(ctx context.Context, state string) error
	// Exchange finishes the authorisation with the callback's query:
	// consumes the state, exchanges the code, stores the tokens.
	Exchange(ctx context.Context, callback url.Values) error
}

// OAuthProviderFactory builds the OAuth provider of one server (the seed's
// createMcpOAuthProvider), for new and restored servers alike.
type OAuthProviderFactory func(ProviderParams) (OAuthProvider, error)

// ProviderParams is what an OAuthProviderFactory gets.
type ProviderParams struct {
	ServerID, ServerURL, CallbackURL string
	// Storage is the server's share of the agent's store.
	Storage oauth.Storage
	// HTTPClient and Guard are the Manager's, guarded against SSRF.
	HTTPClient *http.Client
	Guard      *netguard.Guard
	// ClientName is the client name the agent would register.
	ClientName string
}

// OAuthCallbackConfig configures the response to OAuth callbacks (the
// seed's configureOAuthCallback).
type OAuthCallbackConfig struct {
	// SuccessRedirect is where the browser goes after a successful
	// authorisation, resolved against the request's origin. Empty means the
	// origin itself.
	SuccessRedirect string
	// ErrorRedirect is where the browser goes after a failed one, with
	// ?error=<message>. Empty means an HTML page that shows the message,
	// escaped.
	ErrorRedirect string
	// CustomHandler, if set, writes the response itself; it takes priority.
	CustomHandler func(w http.ResponseWriter, r *http.Request, res CallbackResult)
}

// CallbackResult is the outcome of an OAuth callback.
type CallbackResult struct {
	ServerID    string `json:"serverId,omitempty"`
	AuthSuccess bool   `json:"authSuccess"`
	// AuthError says why it failed. It may contain text from the
	// authorization server, sanitised but not escaped.
	AuthError string `json:"authError,omitempty"`
	// Unchanged reports a callback that changed nothing because the server
	// was already past authorisation (connecting, connected, discovering
	// or ready): a reload of the callback page, or a stray or forged link.
	// AuthSuccess is then true: the server is authorized, but not by this
	// callback.
	Unchanged bool `json:"unchanged,omitempty"`
}

// oauthState is the agent's OAuth side: providers by server id, the
// callback configuration, and the callbacks' turns.
type oauthState struct {
	mu        sync.Mutex
	providers map[string]OAuthProvider
	callback  OAuthCallbackConfig
	// turns serialises the callbacks of each server (by id): a channel
	// with room for one, full while a callback runs.
	turns map[string]chan struct{}

	// testHookWait, when set by a test, is called with the server id when
	// a callback waits for another of the same server.
	testHookWait func(id string)
	// testHookURLWait, when set by a test, is called when an update waits
	// for authorisation URLs to be stored (awaitAuthURLs).
	testHookURLWait func()
}

// callbackTurn waits until no other callback of server id runs, or ctx is
// done, and returns the function that ends this one's turn.
func (a *Agent) callbackTurn(ctx context.Context, id string) (done func(), err error) {
	a.oauth.mu.Lock()
	if a.oauth.turns == nil {
		a.oauth.turns = map[string]chan struct{}{}
	}
	turn, ok := a.oauth.turns[id]
	if !ok {
		turn = make(chan struct{}, 1)
		a.oauth.turns[id] = turn
	}
	hook := a.oauth.testHookWait
	a.oauth.mu.Unlock()
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	default:
	}
	if hook != nil {
		hook(id)
	}
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ConfigureOAuthCallback sets how HandleOAuthCallback answers.
func (a *Agent) ConfigureOAuthCallback(cfg OAuthCallbackConfig) {
	a.oauth.mu.Lock()
	a.oauth.callback = cfg
	a.oauth.mu.Unlock()
}

// kvStorage is one server's share of the store, as oauth.Storage.
type kvStorage struct {
	st     store.Store
	ns, id string
}

func (s kvStorage) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := s.st.KVGet(ctx, s.ns, s.id, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, oauth.ErrNotFound
	}
	return v, err
}

func (s kvStorage) Put(ctx context.Context, key string, value []byte, expiresAt time.Time) error {
	return s.st.KVPut(ctx, s.ns, s.id, key, value, expiresAt)
}

func (s kvStorage) Delete(ctx context.Context, key string) error {
	return s.st.KVDelete(ctx, s.ns, s.id, key)
}

func (s kvStorage) Take(ctx context.Context, key string) ([]byte, error) {
	v, err := s.st.KVTake(ctx, s.ns, s.id, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, oauth.ErrNotFound
	}
	return v, err
}

func (s kvStorage) Lock(ctx context.Context, name string, fn func(context.Context) error) error {
	return s.st.WithLock(ctx, s.ns, s.id, name, fn)
}

// provider returns the OAuth provider of a stored server, building it on
// first use; nil when the server has no callback URL (no OAuth).
func (a *Agent) provider(id string) (OAuthProvider, error) {
	a.oauth.mu.Lock()
	defer a.oauth.mu.Unlock()
	if p, ok := a.oauth.providers[id]; ok {
		return p, nil
	}
	a.mu.Lock()
	row, ok := a.rows[id]
	a.mu.Unlock()
	if !ok || row.CallbackURL == "" {
		return nil, nil
	}
	params := ProviderParams{
		ServerID:    id,
		ServerURL:   row.URL,
		CallbackURL: row.CallbackURL,
		Storage:     kvStorage{a.st, a.ns, id},
		HTTPClient:  a.m.HTTPClient(),
		Guard:       a.m.Guard(),
		ClientName:  a.clientName(),
	}
	var (
		p   OAuthProvider
		err error
	)
	if f := a.opts.CreateOAuthProvider; f != nil {
		p, err = f(params)
	} else {
		p, err = oauth.New(params.Storage, oauth.Config{
			ServerID:    id,
			ServerURL:   row.URL,
			RedirectURL: row.CallbackURL,
			ClientName:  params.ClientName,
			HTTPClient:  params.HTTPClient,
			Guard:       params.Guard,
			Logger:      a.logger,
			// The agent's, else the global ones.
			TracerProvider: a.opts.TracerProvider,
			MeterProvider:  a.opts.MeterProvider,
		})
	}
	if err != nil {
		return nil, fmt.Errorf("oauth provider for %q: %w", id, err)
	}
	if a.oauth.providers == nil {
		a.oauth.providers = map[string]OAuthProvider{}
	}
	a.oauth.providers[id] = p
	return p, nil
}

// clientName is the client_name the agent registers: its class, and its
// instance name unless the agent hides its identity.
func (a *Agent) clientName() string {
	if a.opts.HideIdentity {
		return "agentmcp"
	}
	return "agentmcp " + a.class + "/" + a.name
}

// forgetProvider drops a server's provider (removal, id migration).
func (a *Agent) forgetProvider(id string) {
	a.oauth.mu.Lock()
	delete(a.oauth.providers, id)
	a.oauth.mu.Unlock()
}

// serverAuth is the AuthProvider the agent gives the Manager for a server:
// it finds the server's provider by its current id, so that an id
// migration moves the OAuth flow with it.
type serverAuth struct {
	a  *Agent
	id atomic.Pointer[string]
}

func (s *serverAuth) current() (OAuthProvider, error) {
	p, err := s.a.provider(*s.id.Load())
	if err == nil && p == nil {
		err = errors.New("the server has no OAuth callback URL; give AddMCPServer a CallbackHost")
	}
	return p, err
}

func (s *serverAuth) Token(ctx context.Context) (string, error) {
	p, err := s.current()
	if err != nil {
		return "", nil // no OAuth: no token
	}
	return p.Token(ctx)
}

func (s *serverAuth) Authorize(ctx context.Context, c *mcpclient.AuthChallenge) (string, error) {
	p, err := s.current()
	if err != nil {
		return "", err
	}
	authURL, err := p.Authorize(ctx, c)
	if authURL != "" {
		s.a.noteAuthorization()
	}
	return authURL, err
}

// IsCallbackRequest reports whether r is an OAuth callback for one of the
// agent's servers: a GET whose state names a stored server whose callback
// URL has r's host and path. Paths are compared as sent (escaped), so that
// "/a%2Fcb" is not the callback "/a/cb".
func (a *Agent) IsCallbackRequest(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	id, _, err := oauth.ParseState(r.URL.Query().Get("state"))
	if err != nil {
		return false
	}
	a.mu.Lock()
	row, ok := a.rows[id]
	a.mu.Unlock()
	if !ok || row.CallbackURL == "" {
		return false
	}
	cb, err := url.Parse(row.CallbackURL)
	return err == nil && strings.EqualFold(cb.Host, r.Host) && cb.EscapedPath() == r.URL.EscapedPath()
}

// HandleCallbackRequest finishes the OAuth flow a callback belongs to
// (the seed's handleCallbackRequest). A valid callback exchanges the code,
// stores the tokens and connects the server in the background. A callback
// for a server already past authorisation (the user reloaded the page, or
// a stray link) changes nothing and says so (Unchanged). A stray, forged,
// reused or expired state changes nothing either. Every other failure of a
// callback whose state is redeemable (no code, an error from the
// authorization server, the token request refused or unreachable, the
// tokens not stored, an issuer mismatch, a server in no state to finish)
// spends the state and fails the server with the message in its error
// field, as the seed says: a server is never left authenticating by its
// own callback.
//
// The callbacks of one server are handled one at a time, each judged on
// the state the previous one left: of two identical callbacks (a double
// click, a reload), or the callbacks of two flows started one after the
// other, one completes the authorisation (one token request) and the
// others find the server authorized and change nothing (Unchanged). A
// callback that loses the race for its single-use state changes nothing,
// and so does an error callback (the user denied, say) for a flow that a
// newer one has superseded: the server waits for the newer flow's
// callback.
func (a *Agent) HandleCallbackRequest(ctx context.Context, r *http.Request) CallbackResult {
	defer a.hold()()
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		return CallbackResult{AuthError: "Unauthorized: no state provided"}
	}
	id, _, err := oauth.ParseState(state)
	if err != nil {
		return CallbackResult{AuthError: "No serverId found in state parameter. Expected format: {serverId}:{stateValue}"}
	}
	res := CallbackResult{ServerID: id}
	// invalid is why this callback cannot complete a flow, if it cannot.
	invalid := ""
	if q.Get("code") == "" && q.Get("error") == "" {
		invalid = "Unauthorized: no code provided"
	}
	a.mu.Lock()
	_, stored := a.rows[id]
	a.mu.Unlock()
	if !stored {
		res.AuthError = fmt.Sprintf("No server found with id %q. Was the request matched with IsCallbackRequest()?", id)
		return res
	}
	done, err := a.callbackTurn(ctx, id)
	if err != nil {
		res.AuthError = "the callback was abandoned while another callback of this server ran; try again"
		return res
	}
	defer done()
	info, live := a.m.Server(id)
	if !live {
		res.AuthError = fmt.Sprintf("No connection found for serverId %q.", id)
		return res
	}
	p, err := a.provider(id)
	if err != nil || p == nil {
		res.AuthError = "Trying to finalize authentication for a server connection without an OAuth provider"
		return res
	}

	accepted := false // the flow already got past authorisation
	switch info.State {
	case mcpclient.StateReady, mcpclient.StateConnected, mcpclient.StateConnecting, mcpclient.StateDiscovering:
		accepted = true
	}
	checkErr := p.CheckState(ctx, state)
	if accepted {
		// A duplicate (the user reloaded the page, say) or a stray link:
		// the server is authorized already and this callback changes
		// nothing; its state, if still redeemable, is spent.
		if checkErr == nil {
			p.ConsumeState(ctx, state)
		}
		a.saveAuthURL(ctx, id)
		res.AuthSuccess, res.Unchanged = true, true
		return res
	}
	if checkErr != nil {
		// Not redeemable: stray, forged, reused or expired. It changes
		// nothing, so it cannot break a flow in progress.
		res.AuthError = stateError(checkErr)
		if msg := callbackError(q); msg != "" && !errors.Is(checkErr, oauth.ErrStateExpired) && !errors.Is(checkErr, oauth.ErrStateUnknown) {
			res.AuthError = msg
		}
		if res.AuthError != checkErr.Error() {
			a.logger.Warn("oauth callback state not checked", "server", id, "error", checkErr)
		}
		return res
	}
	// The state is redeemable. An error from the authorization server for
	// a flow a newer one superseded (its popup denied or closed) changes
	// nothing: the server waits for the newer flow's callback.
	if q.Get("code") == "" && q.Get("error") != "" && superseded(info.AuthURL, state) {
		p.ConsumeState(ctx, state)
		res.AuthError = callbackError(q)
		return res
	}
	// This is the callback of the flow in progress. From here on, a
	// failure ends the flow.
	if invalid == "" && info.State != mcpclient.StateAuthenticating && info.State != mcpclient.StateFailed {
		invalid = fmt.Sprintf("Failed to authenticate from %q state", info.State)
	}
	if invalid != "" {
		p.ConsumeState(ctx, state)
		a.failAuthorization(ctx, id, invalid)
		res.AuthError = invalid
		return res
	}
	if err := p.Exchange(ctx, q); err != nil {
		if lostState(err) {
			// Redeemed or expired since it was checked (by another process,
			// or its storage): this callback changes nothing.
			res.AuthError = stateError(err)
			return res
		}
		msg := err.Error()
		if e := callbackError(q); e != "" {
			msg = e
		}
		p.ConsumeState(ctx, state) // Exchange spends it, unless storage failed first
		a.failAuthorization(ctx, id, msg)
		res.AuthError = netguard.Sanitize(msg)
		return res
	}
	// The Manager first, then the row, which takes the Manager's URL (none).
	a.m.FinishAuthorization(id, nil)
	a.saveAuthURL(ctx, id)
	res.AuthSuccess = true
	return res
}

// superseded reports whether state is not the state of authURL, the
// server's pending authorisation: a newer flow has replaced its flow.
func superseded(authURL, state string) bool {
	u, err := url.Parse(authURL)
	if err != nil || authURL == "" {
		return false
	}
	current := u.Query().Get("state")
	return current != "" && current != state
}

// lostState reports whether Exchange failed because its state could no
// longer be redeemed.
func lostState(err error) bool {
	return errors.Is(err, oauth.ErrStateUnknown) || errors.Is(err, oauth.ErrStateExpired)
}

// stateError is what a callback's user is told when its state cannot be
// redeemed: the oauth package's message for its own refusals, and no
// storage details otherwise.
func stateError(err error) string {
	for _, known := range []error{oauth.ErrStateFormat, oauth.ErrStateUnknown, oauth.ErrStateExpired, oauth.ErrStateServer} {
		if errors.Is(err, known) {
			return err.Error()
		}
	}
	return "the authorization state could not be checked; try again"
}

// callbackError is the authorization server's error in a callback, if any.
func callbackError(q url.Values) string {
	if d := q.Get("error_description"); d != "" {
		return netguard.Sanitize(d)
	}
	return netguard.Sanitize(q.Get("error"))
}

// failAuthorization fails the server with an authorization server's
// message, HTML-escaped as the seed promises, so a UI can show it as is.
func (a *Agent) failAuthorization(ctx context.Context, id, msg string) {
	a.m.FinishAuthorization(id, errors.New(html.EscapeString(netguard.Sanitize(msg))))
	a.saveAuthURL(ctx, id) // after the Manager's, as in a success
}

// saveAuthURL makes the stored row's pending authorisation URL the
// Manager's (none when it has none) and waits until it is written, or ctx
// is done.
func (a *Agent) saveAuthURL(ctx context.Context, id string) {
	a.queueAuthURL(id)
	a.writes.flush(ctx)
}

// queueAuthURL queues the write of saveAuthURL. Every write of a row's
// authorisation URL goes through this one queue key, and each reads the
// Manager's URL when it runs, so the last write made is the Manager's
// latest URL: a write that read a pending URL just before a callback
// finished the flow is followed by the callback's own, which clears it.
// (Written from the event that started a flow, the URL could otherwise
// land after the callback cleared the row, and the next process to open
// the agent would show the server authenticating, its token unused.)
func (a *Agent) queueAuthURL(id string) {
	a.writes.put("auth:"+id, func(ctx context.Context) {
		info, ok := a.m.Server(id)
		if !ok {
			return // removed: its row with it
		}
		a.writes.mu.Lock()
		hook := a.testHookAuthURL
		a.writes.mu.Unlock()
		if hook != nil {
			hook(id)
		}
		a.updateRow(ctx, id, func(row *store.Server) bool {
			changed := row.AuthURL != info.AuthURL
			row.AuthURL = info.AuthURL
			return changed
		})
	})
}

// authURLWait bounds how long an update waits for pending authorisation
// URLs to be stored (awaitAuthURLs): a store that does not answer delays
// updates by at most this, and they then go out without it.
const authURLWait = 5 * time.Second

// awaitAuthURLs makes the stored rows hold the pending authorisation URLs
// the Manager has (queueing their writes, if the event's write is not
// queued yet) and waits until they are written, at most authURLWait:
// called before an update is computed, so that a watcher, or another
// replica, that reads the store when an update shows a server
// authenticating finds its URL there. Nothing is waited for when every
// stored URL is the Manager's (the common case: a comparison per
// authenticating server).
func (a *Agent) awaitAuthURLs() {
	pending := false
	for _, info := range a.m.Servers() {
		if info.State != mcpclient.StateAuthenticating || info.AuthURL == "" {
			continue
		}
		a.mu.Lock()
		row, ok := a.rows[info.ID]
		dormant := a.dormant[info.ID]
		a.mu.Unlock()
		if ok && !dormant && row.AuthURL != info.AuthURL {
			a.queueAuthURL(info.ID)
			pending = true
		}
	}
	if !pending {
		return
	}
	a.oauth.mu.Lock()
	hook := a.oauth.testHookURLWait
	a.oauth.mu.Unlock()
	if hook != nil {
		hook()
	}
	ctx, cancel := context.WithTimeout(context.Background(), authURLWait)
	defer cancel()
	a.writes.flush(ctx)
}

// HandleOAuthCallback is an http.Handler for callback requests: it runs
// HandleCallbackRequest and answers as ConfigureOAuthCallback says.
func (a *Agent) HandleOAuthCallback(w http.ResponseWriter, r *http.Request) {
	res := a.HandleCallbackRequest(r.Context(), r)
	a.oauth.mu.Lock()
	cfg := a.oauth.callback
	a.oauth.mu.Unlock()
	cfg.Respond(w, r, res)
}

// ErrNoServers is returned by Host.CheckCallback for an agent that has no
// stored servers: there is no authorisation to complete.
var ErrNoServers = errors.New("agent: no stored servers")

// ErrCallbackRefused is returned by Host.CheckCallback for a callback that
// cannot complete an authorisation of the agent.
var ErrCallbackRefused = errors.New("agent: oauth callback refused")

// CheckCallback judges an OAuth callback for agent class/name from the
// store alone, before anything of the agent is opened: its state must name
// a stored server of the agent that has a callback URL, and be a pending
// authorisation of that server's provider, unexpired (the state is bound
// to the agent: it is looked up in the agent's share of the store). It
// starts nothing (no connection, no stdio server) and spends nothing: the
// agent's HandleCallbackRequest redeems the state. It returns nil when the
// callback may be handed to the agent; ErrNoServers when the agent has no
// stored servers; otherwise an error wrapping ErrCallbackRefused, with res
// the failure to answer with (OAuthCallbackConfig.Respond). A host whose
// agents build their providers with Options.CreateOAuthProvider, which
// keep their states where only they can read them, checks the server only.
//
// A callback carries no credential but its state, so a request for a
// sleeping agent is checked here first: a forged one must not wake the
// agent and start its servers.
func (h *Host) CheckCallback(ctx context.Context, class, name string, r *http.Request) (res CallbackResult, err error) {
	ns := class + "/" + name
	rows, err := h.st.ListServers(ctx, ns)
	if err != nil {
		h.logger.Warn("oauth callback: reading the servers", "agent", ns, "error", err)
		return CallbackResult{AuthError: stateError(err)}, fmt.Errorf("%w: %w", ErrCallbackRefused, err)
	}
	if len(rows) == 0 {
		return CallbackResult{}, ErrNoServers
	}
	refused := func(msg string) (CallbackResult, error) {
		res.AuthError = msg
		return res, fmt.Errorf("%w: %s", ErrCallbackRefused, msg)
	}
	state := r.URL.Query().Get("state")
	if state == "" {
		return refused("Unauthorized: no state provided")
	}
	id, _, err := oauth.ParseState(state)
	if err != nil {
		return refused("No serverId found in state parameter. Expected format: {serverId}:{stateValue}")
	}
	res.ServerID = id
	i := slices.IndexFunc(rows, func(row store.Server) bool { return row.ID == id })
	if i < 0 || rows[i].CallbackURL == "" {
		return refused(fmt.Sprintf("No server found with id %q that has an OAuth callback.", id))
	}
	if h.agentO.CreateOAuthProvider != nil {
		return res, nil
	}
	// On the default provider's clock (oauth.Config.Now unset).
	if err := oauth.CheckStoredState(ctx, kvStorage{h.st, ns, id}, id, state, time.Now()); err != nil {
		msg := stateError(err)
		if msg != err.Error() {
			h.logger.Warn("oauth callback state not checked", "agent", ns, "server", id, "error", err)
		}
		return refused(msg)
	}
	return res, nil
}

// Respond answers an OAuth callback with its result, as HandleOAuthCallback
// does: the CustomHandler, else a redirect or an HTML page.
func (cfg OAuthCallbackConfig) Respond(w http.ResponseWriter, r *http.Request, res CallbackResult) {
	if cfg.CustomHandler != nil {
		cfg.CustomHandler(w, r, res)
		return
	}
	origin := &url.URL{Scheme: "http", Host: r.Host, Path: "/"}
	if r.TLS != nil {
		origin.Scheme = "https"
	}
	if res.AuthSuccess {
		target := origin.String()
		if cfg.SuccessRedirect != "" {
			if u, err := origin.Parse(cfg.SuccessRedirect); err == nil {
				target = u.String()
			}
		}
		http.Redirect(w, r, target, http.StatusFound)
		return
	}
	if cfg.ErrorRedirect != "" {
		if u, err := origin.Parse(cfg.ErrorRedirect); err == nil {
			q := u.Query()
			q.Set("error", res.AuthError)
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.String(), http.StatusFound)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, "<!doctype html><title>Authorization failed</title><h1>Authorization failed</h1><p>%s</p>\n",
		html.EscapeString(res.AuthError))
}
