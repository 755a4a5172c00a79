package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/oauth"
)

// callbackURL is the client's redirect URI in these tests. Nothing listens
// there: tests read the authorization server's redirect instead.
const callbackURL = "http://127.0.0.1:9/callback"

// Storage keys the provider uses (its storage format).
const (
	keyToken  = "token"
	keyClient = "client_info/"
)

// testCtx is a context bounded as a safety net.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newProvider returns a provider for the MCP endpoint base+"/mcp". That
// endpoint publishes no protected resource metadata, so base is the
// authorization server (the 2025-03-26 fallback).
func newProvider(t testing.TB, base string, st oauth.Storage, change func(*oauth.Config)) *oauth.Provider {
	t.Helper()
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	cfg := oauth.Config{
		ServerID:    "srv",
		ServerURL:   base + "/mcp",
		RedirectURL: callbackURL,
		HTTPClient:  &http.Client{Transport: transport},
	}
	if change != nil {
		change(&cfg)
	}
	p, err := oauth.New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// authURL has p start an authorisation after a refusal with status and a
// WWW-Authenticate challenge.
func authURL(t testing.TB, p *oauth.Provider, status int, challenge string) string {
	t.Helper()
	c := &mcpclient.AuthChallenge{StatusCode: status}
	if challenge != "" {
		c.WWWAuthenticate = []string{challenge}
	}
	u, err := p.Authorize(testCtx(t), c)
	if err != nil || u == "" {
		t.Fatalf("Authorize = %q, %v; want an authorization URL", u, err)
	}
	return u
}

// visit is the user's browser at the authorization server: it returns the
// callback's query.
func visit(t testing.TB, as *oauthtest.AuthServer, authURL string) url.Values {
	t.Helper()
	loc, err := as.VisitAuthURL(testCtx(t), authURL)
	if err != nil {
		t.Fatal(err)
	}
	return loc.Query()
}

// login runs a whole authorisation.
func login(t testing.TB, p *oauth.Provider, as *oauthtest.AuthServer) {
	t.Helper()
	if err := p.Exchange(testCtx(t), visit(t, as, authURL(t, p, http.StatusUnauthorized, ""))); err != nil {
		t.Fatalf("Exchange: %v", err)
	}
}

// storedToken returns the token in st, or nil.
func storedToken(t testing.TB, st oauth.Storage) *oauth.Token {
	t.Helper()
	data, err := st.Get(testCtx(t), keyToken)
	if err != nil {
		return nil
	}
	var tok oauth.Token
	if err := json.Unmarshal(data, &tok); err != nil {
		t.Fatal(err)
	}
	return &tok
}

// spyStorage is a MemoryStorage that reports, once armed, the locks asked
// for and the token writes, and can hold a token write. With lostLocks its
// Lock excludes nobody, as a Postgres advisory lock whose connection was
// lost while its holder runs, or another process writing without it.
type spyStorage struct {
	oauth.MemoryStorage
	lostLocks bool

	// mu guards the fields below.
	mu     sync.Mutex
	events chan string
	hold   chan struct{} // the next token write waits for it to close
}

// holdWrite makes the next token write (Put or Delete) report "held" and
// wait until release is called.
func (s *spyStorage) holdWrite() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.hold = ch
	s.mu.Unlock()
	return func() { close(ch) }
}

// waitHold holds a token write if asked to.
func (s *spyStorage) waitHold(ctx context.Context) {
	s.mu.Lock()
	hold := s.hold
	s.hold = nil
	s.mu.Unlock()
	if hold != nil {
		s.note("held")
		select {
		case <-hold:
		case <-ctx.Done():
		}
	}
}

// arm starts the reports.
func (s *spyStorage) arm() <-chan string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = make(chan string, 32)
	return s.events
}

func (s *spyStorage) note(event string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events != nil {
		select {
		case s.events <- event:
		default:
		}
	}
}

func (s *spyStorage) Put(ctx context.Context, key string, value []byte, expiresAt time.Time) error {
	if key != keyToken {
		return s.MemoryStorage.Put(ctx, key, value, expiresAt)
	}
	s.waitHold(ctx)
	defer s.note("put token") // once written
	return s.MemoryStorage.Put(ctx, key, value, expiresAt)
}

func (s *spyStorage) Delete(ctx context.Context, key string) error {
	if key != keyToken {
		return s.MemoryStorage.Delete(ctx, key)
	}
	s.waitHold(ctx)
	defer s.note("delete token")
	return s.MemoryStorage.Delete(ctx, key)
}

func (s *spyStorage) Lock(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	s.note("lock " + name)
	if s.lostLocks {
		return fn(ctx)
	}
	return s.MemoryStorage.Lock(ctx, name, fn)
}

// refreshTransport watches the refresh requests a provider makes. Once
// armed with hold, it holds the response to each until release is
// closed, after the authorization server answered: a slow network. Armed
// with an answer, it answers them itself.
type refreshTransport struct {
	next http.RoundTripper

	hold    atomic.Bool
	arrived chan struct{} // a held response is waiting
	release chan struct{}

	answer atomic.Pointer[cannedAnswer]
}

type cannedAnswer struct {
	status int
	body   string
}

func newRefreshTransport(t testing.TB) *refreshTransport {
	next := &http.Transport{}
	t.Cleanup(next.CloseIdleConnections)
	return &refreshTransport{next: next, arrived: make(chan struct{}, 1), release: make(chan struct{})}
}

func (rt *refreshTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	refresh := false
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		refresh = form.Get("grant_type") == "refresh_token"
	}
	if a := rt.answer.Load(); refresh && a != nil {
		return &http.Response{
			StatusCode: a.status,
			Status:     http.StatusText(a.status),
			Header:     http.Header{"Content-Type": {"application/json"}},
			Body:       io.NopCloser(strings.NewReader(a.body)),
			Request:    req,
		}, nil
	}
	resp, err := rt.next.RoundTrip(req)
	if refresh && rt.hold.Load() {
		rt.arrived <- struct{}{}
		select {
		case <-rt.release:
		case <-req.Context().Done():
		}
	}
	return resp, err
}

// unauthorized is a 401 without a challenge.
func unauthorized() *mcpclient.AuthChallenge {
	return &mcpclient.AuthChallenge{StatusCode: http.StatusUnauthorized}
}
