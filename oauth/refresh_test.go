package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/oauth"
)

// TestExchangeDuringRefresh: the access token expires while the user
// completes a step-up authorisation; the refresh in flight then finishes
// (refreshed, or refused with invalid_grant) and must not overwrite or
// delete the new token. With a lock that excludes, the exchange waits for
// the refresh, even one slow to write what it got; with a lost lock, the
// refresh sees the new token and leaves it alone.
func TestExchangeDuringRefresh(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fault     oauthtest.Fault // of the refresh
		lostLocks bool
		slowWrite bool // the refresh is slow to write its outcome, not to get it
	}{
		{"refreshed", oauthtest.FaultNone, false, false},
		{"invalid_grant", oauthtest.FaultInvalidGrant, false, false},
		{"refreshed, lock lost", oauthtest.FaultNone, true, false},
		{"invalid_grant, lock lost", oauthtest.FaultInvalidGrant, true, false},
		{"refreshed, slow write", oauthtest.FaultNone, false, true},
		{"invalid_grant, slow write", oauthtest.FaultInvalidGrant, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			clock := oauthtest.NewClock(time.Time{})
			as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, Scopes: []string{"mcp:read", "mcp:write"}, AccessTokenTTL: time.Minute})
			st := &spyStorage{lostLocks: tt.lostLocks}
			rt := newRefreshTransport(t)
			p := newProvider(t, as.URL, st, func(c *oauth.Config) {
				c.Now, c.HTTPClient, c.RefreshAttempts = clock.Now, &http.Client{Transport: rt}, 1
			})

			// The user authorises mcp:read; a step-up to mcp:write starts,
			// and the user approves it.
			first := authURL(t, p, http.StatusUnauthorized, `Bearer scope="mcp:read"`)
			if err := p.Exchange(ctx, visit(t, as, first)); err != nil {
				t.Fatal(err)
			}
			stepUp := visit(t, as, authURL(t, p, http.StatusForbidden, `Bearer error="insufficient_scope", scope="mcp:write"`))

			// The access token expires: a refresh starts, and its answer is
			// slow to come back (or its write to be done).
			clock.Advance(41 * time.Second) // within the refresh margin of a one-minute token (20 s)
			if tt.fault != oauthtest.FaultNone {
				as.FailTokenRequests(1, tt.fault)
			}
			var events <-chan string
			release := func() { close(rt.release) }
			if tt.slowWrite {
				events = st.arm()
				release = st.holdWrite()
			} else {
				rt.hold.Store(true)
			}
			refreshed := make(chan string, 1)
			go func() {
				at, err := p.Token(ctx)
				if err != nil {
					t.Errorf("Token (refreshing): %v", err)
				}
				refreshed <- at
			}()
			if tt.slowWrite {
				for e := range events {
					if e == "held" {
						break
					}
				}
			} else {
				<-rt.arrived
				events = st.arm()
			}

			// The step-up's callback arrives meanwhile. The refresh goes on
			// once the exchange has saved its token or waits for the lock.
			exchanged := make(chan error, 1)
			go func() { exchanged <- p.Exchange(ctx, stepUp) }()
			saving := func(e string) bool { return e == "put token" || e == "lock refresh" && !tt.lostLocks }
			var exchangeErr error
		wait:
			for {
				select {
				case e := <-events:
					if saving(e) {
						break wait
					}
				case exchangeErr = <-exchanged:
					// Done already (the lock lost): the storage noted
					// everything it did before.
					exchanged <- exchangeErr
					for {
						select {
						case e := <-events:
							if saving(e) {
								break wait
							}
						default:
							t.Fatalf("Exchange returned without saving: %v", exchangeErr)
						}
					}
				}
			}
			release()
			if err := <-exchanged; err != nil {
				t.Fatalf("Exchange: %v", err)
			}
			refreshedAT := <-refreshed

			// The step-up's token is kept: stored, and what Token returns.
			at, err := p.Token(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if scopes, ok := as.Valid(at); !ok || !slices.Contains(scopes, "mcp:write") {
				t.Errorf("token after the refresh = %q (valid %v, scopes %v); want the step-up's token, with mcp:write", at, ok, scopes)
			}
			if tok := storedToken(t, st); tok == nil || tok.AccessToken != at {
				t.Errorf("stored token = %+v; want the step-up's token", tok)
			}
			if tt.lostLocks && refreshedAT != at {
				t.Errorf("the refresh returned %q; want the newer token %q", refreshedAT, at)
			}
			if n := as.Counts.RefreshGrants.Load(); n != 1 {
				t.Errorf("%d refresh requests; want 1", n)
			}
		})
	}
}

// TestRefreshRefused: a refresh that the token endpoint refuses for good
// (a 4xx other than 429, or an OAuth error) drops the token, so that the
// next request goes without one and its 401 starts a new authorisation;
// invalid_client and unauthorized_client also drop the dynamic
// registration, so that it registers anew. Transient failures (5xx, 429,
// network errors) keep the refresh token.
func TestRefreshRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// the answer to the refresh; zero status: the authorization server
		// forgot the client (RemoveClient) and answers invalid_client.
		status       int
		body         string
		wantDropped  bool
		wantRegister bool // a new registration
	}{
		{"invalid_grant", 400, `{"error":"invalid_grant"}`, true, false},
		{"invalid_client, client forgotten", 0, "", true, true},
		{"invalid_client", 401, `{"error":"invalid_client","error_description":"client authentication failed"}`, true, true},
		{"unauthorized_client", 400, `{"error":"unauthorized_client"}`, true, true},
		{"invalid_scope", 400, `{"error":"invalid_scope"}`, true, false},
		{"400 without a body", 400, "", true, false},
		{"401 without a body", 401, "", true, false},
		{"403 HTML", 403, "<html>Forbidden</html>", true, false},
		{"invalid_grant with a 5xx", 500, `{"error":"invalid_grant"}`, true, false},

		{"429", 429, "", false, false},
		{"429 with an OAuth error", 429, `{"error":"slow_down"}`, false, false},
		{"503 temporarily_unavailable", 503, `{"error":"temporarily_unavailable"}`, false, false},
		{"500 without a body", 500, "", false, false},
		{"502 from a gateway", 502, `{"error":"bad_gateway"}`, false, false},
		{"400 temporarily_unavailable", 400, `{"error":"temporarily_unavailable"}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			clock := oauthtest.NewClock(time.Time{})
			as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, AccessTokenTTL: time.Minute,
				AuthMethods: []string{"client_secret_basic"}})
			st := &oauth.MemoryStorage{}
			rt := newRefreshTransport(t)
			p := newProvider(t, as.URL, st, func(c *oauth.Config) {
				c.Now, c.HTTPClient, c.RefreshAttempts = clock.Now, &http.Client{Transport: rt}, 1
			})
			login(t, p, as)
			before := storedToken(t, st)
			if before == nil || before.RefreshToken == "" {
				t.Fatalf("after the login: token %+v", before)
			}
			oldClient := before.Client.ID

			clock.Advance(41 * time.Second) // within the refresh margin of a one-minute token (20 s)
			if tt.status == 0 {
				as.RemoveClient(oldClient)
			} else {
				rt.answer.Store(&cannedAnswer{tt.status, tt.body})
			}
			at, err := p.Token(ctx)
			rt.answer.Store(nil)

			if !tt.wantDropped {
				// The access token has not expired: the request goes with it.
				if err != nil || at != before.AccessToken {
					t.Fatalf("Token = %q, %v; want the access token, still valid", at, err)
				}
				if tok := storedToken(t, st); tok == nil || tok.RefreshToken != before.RefreshToken {
					t.Fatalf("after a transient failure: stored token %+v; want the refresh token kept", tok)
				}
				// Once the endpoint is back, the kept refresh token works.
				if at, err := p.Token(ctx); err != nil || at == "" || at == before.AccessToken {
					t.Errorf("Token after the failure = %q, %v; want a refreshed token", at, err)
				}
				return
			}

			// Dropped: the request goes without a token, the server's 401
			// starts a new authorisation, which completes.
			if err != nil || at != "" {
				t.Fatalf("Token = %q, %v; want no token and no error", at, err)
			}
			if tok := storedToken(t, st); tok != nil {
				t.Errorf("stored token after the refusal: %+v", tok)
			}
			_, registered := st.Get(ctx, keyClient+as.Issuer())
			if registered == nil == tt.wantRegister {
				t.Errorf("registration stored after the refusal: %v; want %v", registered == nil, !tt.wantRegister)
			}
			u := authURL(t, p, http.StatusUnauthorized, "")
			if err := p.Exchange(ctx, visit(t, as, u)); err != nil {
				t.Fatalf("Exchange after the refusal: %v", err)
			}
			q := mustParse(t, u).Query()
			if newClient := q.Get("client_id") != oldClient; newClient != tt.wantRegister {
				t.Errorf("authorised again with client %s (first %s); want a new registration: %v", q.Get("client_id"), oldClient, tt.wantRegister)
			}
			want := int64(1)
			if tt.wantRegister {
				want = 2
			}
			if n := as.Counts.Registrations.Load(); n != want {
				t.Errorf("%d registrations; want %d", n, want)
			}
			if at, err := p.Token(ctx); err != nil || at == "" {
				t.Errorf("Token after the new authorisation = %q, %v", at, err)
			}
		})
	}
}

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestTokenForAnotherResource: a stored token whose resource is not this
// server's URL (the URL changed since, or the row came from another
// server) is never sent.
func TestTokenForAnotherResource(t *testing.T) {
	st := &oauth.MemoryStorage{}
	p := newProvider(t, "http://127.0.0.1:9", st, nil)
	ctx := testCtx(t)
	put := func(resource string) {
		t.Helper()
		data, _ := json.Marshal(map[string]any{"access_token": "AT", "resource": resource})
		if err := st.Put(ctx, keyToken, data, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	put("http://127.0.0.1:9/other")
	if tok, err := p.Token(ctx); err != nil || tok != "" {
		t.Errorf("Token() = %q, %v with another resource's token; want none", tok, err)
	}
	put("http://127.0.0.1:9/mcp")
	p2 := newProvider(t, "http://127.0.0.1:9", st, nil) // nothing cached
	if tok, err := p2.Token(ctx); err != nil || tok != "AT" {
		t.Errorf("Token() = %q, %v with this resource's token; want AT", tok, err)
	}
}

// TestUnauthorizedDuringOutage: a 401 while the refresh cannot be made (the
// token endpoint fails, or the store does not answer) fails the attempt
// without a new authorisation: the grant is kept, and the next 401 once
// they are back refreshes it. Only a refused refresh asks the user again.
func TestUnauthorizedDuringOutage(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, AccessTokenTTL: time.Hour})
	st := &failingStorage{MemoryStorage: &oauth.MemoryStorage{}}
	rt := newRefreshTransport(t)
	p := newProvider(t, as.URL, st, func(c *oauth.Config) {
		c.Now, c.HTTPClient, c.RefreshAttempts = clock.Now, &http.Client{Transport: rt}, 1
	})
	login(t, p, as)
	before := storedToken(t, st.MemoryStorage)
	challenge := &mcpclient.AuthChallenge{StatusCode: http.StatusUnauthorized}

	// The token endpoint is down.
	rt.answer.Store(&cannedAnswer{503, `{"error":"temporarily_unavailable"}`})
	if u, err := p.Authorize(ctx, challenge); err == nil || u != "" {
		t.Errorf("Authorize while the token endpoint is down = %q, %v; want an error and no authorization URL", u, err)
	}
	rt.answer.Store(nil)
	// The store is down (the provider reads the token again under its lock).
	st.fail.Store(true)
	if u, err := p.Authorize(ctx, challenge); err == nil || u != "" {
		t.Errorf("Authorize while the store is down = %q, %v; want an error and no authorization URL", u, err)
	}
	st.fail.Store(false)
	if tok := storedToken(t, st.MemoryStorage); tok == nil || tok.RefreshToken != before.RefreshToken {
		t.Fatalf("stored token after the outages: %+v; want the grant kept", tok)
	}
	// Both back: the 401 is answered by a refresh.
	if u, err := p.Authorize(ctx, challenge); err != nil || u != "" {
		t.Errorf("Authorize once back = %q, %v; want a refresh (no URL, no error)", u, err)
	}
	if at, err := p.Token(ctx); err != nil || at == before.AccessToken {
		t.Errorf("Token after the refresh = %q, %v", at, err)
	}
}

// TestTokenValidWhileRefreshFails: a refresh that fails for a passing
// reason (the token endpoint or the store down) inside the refresh margin
// leaves the request with the access token it has, still valid; once that
// token has expired, the failure is the caller's.
func TestTokenValidWhileRefreshFails(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, AccessTokenTTL: time.Hour})
	st := &failingStorage{MemoryStorage: &oauth.MemoryStorage{}}
	rt := newRefreshTransport(t)
	p := newProvider(t, as.URL, st, func(c *oauth.Config) {
		c.Now, c.HTTPClient, c.RefreshAttempts = clock.Now, &http.Client{Transport: rt}, 1
	})
	login(t, p, as)
	before := storedToken(t, st.MemoryStorage)
	clock.Advance(time.Hour - 10*time.Second) // inside the margin, not expired

	rt.answer.Store(&cannedAnswer{503, `{"error":"temporarily_unavailable"}`})
	if at, err := p.Token(ctx); err != nil || at != before.AccessToken {
		t.Errorf("Token while the token endpoint is down = %q, %v; want the valid access token", at, err)
	}
	rt.answer.Store(nil)
	st.fail.Store(true)
	if at, err := p.Token(ctx); err != nil || at != before.AccessToken {
		t.Errorf("Token while the store is down = %q, %v; want the valid access token", at, err)
	}
	clock.Advance(20 * time.Second) // expired
	if at, err := p.Token(ctx); err == nil {
		t.Errorf("Token past expiry with the store down = %q; want an error", at)
	}
	st.fail.Store(false)
	if at, err := p.Token(ctx); err != nil || at == "" || at == before.AccessToken {
		t.Errorf("Token once the store answers = %q, %v; want a refreshed token", at, err)
	}
	if got := as.Counts.RefreshGrants.Load(); got != 1 {
		t.Errorf("refresh grants at the authorization server = %d; want 1 (the 503 was the transport's)", got)
	}
}

// failingStorage is a MemoryStorage whose reads, writes and locks fail
// while fail is set, as a database that does not answer.
type failingStorage struct {
	*oauth.MemoryStorage
	fail atomic.Bool
}

var errStoreDown = errors.New("the store does not answer")

func (s *failingStorage) Get(ctx context.Context, key string) ([]byte, error) {
	if s.fail.Load() {
		return nil, errStoreDown
	}
	return s.MemoryStorage.Get(ctx, key)
}

func (s *failingStorage) Put(ctx context.Context, key string, value []byte, expiresAt time.Time) error {
	if s.fail.Load() {
		return errStoreDown
	}
	return s.MemoryStorage.Put(ctx, key, value, expiresAt)
}

func (s *failingStorage) Lock(ctx context.Context, name string, fn func(context.Context) error) error {
	if s.fail.Load() {
		return errStoreDown
	}
	return s.MemoryStorage.Lock(ctx, name, fn)
}

// TestRefreshOutlivesItsCaller: a refresh whose caller stops waiting after
// the authorization server answered (a call cancelled, an agent closed) is
// still stored: the rotated refresh token is not lost, and is not used
// twice.
func TestRefreshOutlivesItsCaller(t *testing.T) {
	t.Parallel()
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, AccessTokenTTL: time.Minute, RefreshTokens: oauthtest.RefreshAlways})
	st := &oauth.MemoryStorage{}
	rt := newRefreshTransport(t)
	p := newProvider(t, as.URL, st, func(c *oauth.Config) {
		c.Now, c.HTTPClient, c.RefreshAttempts = clock.Now, &http.Client{Transport: rt}, 1
	})
	login(t, p, as)
	before := storedToken(t, st)
	clock.Advance(time.Minute)

	rt.hold.Store(true) // the answer is in; the caller goes before it is read
	ctx, cancel := context.WithCancel(testCtx(t))
	got := make(chan error, 1)
	go func() {
		_, err := p.Token(ctx)
		got <- err
	}()
	<-rt.arrived
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("Token of a cancelled caller: %v", err)
	}
	rt.hold.Store(false)
	close(rt.release)

	at, err := p.Token(testCtx(t)) // waits for the refresh in flight
	if err != nil || at == "" || at == before.AccessToken {
		t.Fatalf("Token after the cancelled refresh = %q, %v", at, err)
	}
	if tok := storedToken(t, st); tok == nil || tok.RefreshToken == before.RefreshToken {
		t.Errorf("stored token %+v; want the rotated refresh token", tok)
	}
	if n := as.Counts.RefreshGrants.Load(); n != 1 {
		t.Errorf("%d refresh grants; want 1 (the rotated token used, not the old one again)", n)
	}
}

// TestRefreshMargin: a token is refreshed when less than a third of its
// lifetime, at most 30 seconds, remains; a token stored without its issue
// time keeps the 30 second rule. A fixed 30 seconds refreshed a token
// that lives 30 seconds or less at every use.
func TestRefreshMargin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		ttl          time.Duration
		legacy       bool          // stored without issued_at
		kept, needed time.Duration // times after the login: no refresh yet; a refresh
	}{
		{"10 s: a third", 10 * time.Second, false, 6600 * time.Millisecond, 6700 * time.Millisecond},
		{"4 s: a third", 4 * time.Second, false, 2600 * time.Millisecond, 2700 * time.Millisecond},
		{"90 s: 30 s", 90 * time.Second, false, 59 * time.Second, 61 * time.Second},
		{"1 h: 30 s", time.Hour, false, time.Hour - 31*time.Second, time.Hour - 29*time.Second},
		{"10 s stored without its issue time: 30 s", 10 * time.Second, true, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			clock := oauthtest.NewClock(time.Time{})
			as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, AccessTokenTTL: tt.ttl})
			st := &oauth.MemoryStorage{}
			config := func(c *oauth.Config) { c.Now = clock.Now }
			p := newProvider(t, as.URL, st, config)
			login(t, p, as)
			first := storedToken(t, st)
			if want := clock.Now(); !first.IssuedAt.Equal(want) {
				t.Fatalf("stored token issued at %v; want %v", first.IssuedAt, want)
			}
			if tt.legacy {
				var raw map[string]any
				data, _ := st.Get(ctx, keyToken)
				json.Unmarshal(data, &raw)
				delete(raw, "issued_at")
				data, _ = json.Marshal(raw)
				st.Put(ctx, keyToken, data, time.Time{})
				p = newProvider(t, as.URL, st, config) // nothing cached
			}
			start := clock.Now()
			if tt.kept >= 0 {
				clock.Advance(tt.kept)
				if at, err := p.Token(ctx); err != nil || at != first.AccessToken {
					t.Errorf("Token %v after the login = %q, %v; want the first token", tt.kept, at, err)
				}
				if n := as.Counts.RefreshGrants.Load(); n != 0 {
					t.Errorf("%d refreshes %v after the login; want 0", n, tt.kept)
				}
			}
			clock.Advance(tt.needed - clock.Now().Sub(start))
			at, err := p.Token(ctx)
			if err != nil || at == "" || at == first.AccessToken {
				t.Errorf("Token %v after the login = %q, %v; want a refreshed token", tt.needed, at, err)
			}
			if n := as.Counts.RefreshGrants.Load(); n != 1 {
				t.Errorf("%d refreshes %v after the login; want 1", n, tt.needed)
			}
			if tok := storedToken(t, st); tok == nil || tok.AccessToken != at || !tok.IssuedAt.Equal(clock.Now()) {
				t.Errorf("stored token after the refresh: %+v; want %q issued now", tok, at)
			}
		})
	}
}

// TestRefreshedTokenUnsaved: the storage stops answering after the
// authorization server rotated the refresh token and before the new token
// is saved. The new token is used from memory and saved once the storage
// answers, in place of the one it replaced, so the next refresh presents
// the rotated refresh token (no reuse, which a strict server punishes by
// revoking the grant); a token someone else stored meanwhile (a replica
// that took the server over and refreshed the old token within the
// server's reuse grace) stands.
func TestRefreshedTokenUnsaved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// then: what happens once the refreshed token is in memory only.
		then string
	}{
		{"saved once the storage answers", "saved"},
		{"refreshed again before the storage answers", "refresh"},
		{"replaced by a successor meanwhile", "replaced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			clock := oauthtest.NewClock(time.Time{})
			opts := &oauthtest.Options{Now: clock.Now, AccessTokenTTL: time.Minute}
			if tt.then == "replaced" {
				opts.RefreshReuseGrace = time.Minute
			}
			as := oauthtest.NewServer(t, opts)
			st := &failingStorage{MemoryStorage: &oauth.MemoryStorage{}}
			rt := newRefreshTransport(t)
			p := newProvider(t, as.URL, st, func(c *oauth.Config) {
				c.Now, c.HTTPClient, c.RefreshAttempts = clock.Now, &http.Client{Transport: rt}, 1
			})
			login(t, p, as)
			before := storedToken(t, st.MemoryStorage)

			// The refresh: the storage goes down once the authorization
			// server has answered.
			clock.Advance(41 * time.Second)
			rt.hold.Store(true)
			got := make(chan string, 1)
			go func() {
				at, err := p.Token(ctx)
				if err != nil {
					t.Errorf("Token (the storage going down before the save): %v", err)
				}
				got <- at
			}()
			<-rt.arrived
			st.fail.Store(true)
			rt.hold.Store(false)
			close(rt.release)
			at := <-got
			if _, ok := as.Valid(at); !ok || at == before.AccessToken {
				t.Fatalf("Token = %q; want the refreshed token", at)
			}
			if tok := storedToken(t, st.MemoryStorage); tok.AccessToken != before.AccessToken {
				t.Fatalf("stored %+v while the storage was down", tok)
			}
			if again, err := p.Token(ctx); err != nil || again != at {
				t.Errorf("Token while the storage is down = %q, %v; want the refreshed token %q from memory", again, err, at)
			}

			want := at // what Token must return at the end
			switch tt.then {
			case "saved":
				st.fail.Store(false)
				clock.Advance(time.Second)
				if again, err := p.Token(ctx); err != nil || again != at {
					t.Errorf("Token once the storage answers = %q, %v; want %q", again, err, at)
				}
				if tok := storedToken(t, st.MemoryStorage); tok == nil || tok.AccessToken != at {
					t.Fatalf("stored %+v once the storage answers; want the refreshed token", tok)
				}
				clock.Advance(time.Minute)
				want = ""
			case "refresh":
				clock.Advance(time.Minute)
				if again, err := p.Token(ctx); err == nil {
					t.Errorf("Token past expiry with the storage down = %q; want an error", again)
				}
				st.fail.Store(false)
				want = ""
			case "replaced":
				st.fail.Store(false)
				// The successor reads the old token, whose refresh token
				// the authorization server rotated: within the grace, its
				// refresh works.
				successor := newProvider(t, as.URL, st, func(c *oauth.Config) { c.Now = clock.Now })
				want, _ = successor.Token(ctx)
				if _, ok := as.Valid(want); !ok || want == at || want == before.AccessToken {
					t.Fatalf("the successor's Token = %q; want a new token", want)
				}
				if n := as.Counts.RefreshReusedInGrace.Load(); n != 1 {
					t.Errorf("%d refreshes honoured in the grace; want 1", n)
				}
				clock.Advance(time.Second)
			}
			final, err := p.Token(ctx)
			if err != nil || final == "" || (want != "" && final != want) || (want == "" && final == at) {
				t.Errorf("Token at the end = %q, %v; want %q (or a new token if empty)", final, err, want)
			}
			if tok := storedToken(t, st.MemoryStorage); tok == nil || tok.AccessToken != final {
				t.Errorf("stored token at the end: %+v; want %q", tok, final)
			}
			for _, tr := range as.TokenRequests() {
				if tr.Error != "" {
					t.Errorf("token request refused: %s: %s", tr.Error, tr.ErrorDescription)
				}
			}
		})
	}
}
