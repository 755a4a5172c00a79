//lint:file-ignore SA1019 TestTransport sets the deprecated http.Transport.DialTLS to check that Transport clears it

package netguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// redirector serves a 307 to target on every request and counts them.
func redirector(t *testing.T, target string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestRedirectToPrivate is the redirect case: a loopback server answers
// 307 to a private address, given literally or as a name that resolves to
// it. The hop is refused before anything connects to 10.0.0.5.
func TestRedirectToPrivate(t *testing.T) {
	t.Parallel()
	for _, target := range []string{
		"http://10.0.0.5/x",
		"http://0x0a000005/x",
		"http://[::ffff:10.0.0.5]/x",
		"http://evil.test/x",
		"http://metadata.google.internal/computeMetadata/v1/",
	} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			g, env := newTestGuard(t, nil)
			env.resolver.set("evil.test", "10.0.0.5")
			srv, hits := redirector(t, target)

			resp, err := g.HTTPClient(nil).Get(srv.URL + "/mcp")
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET succeeded with status %s, want the redirect blocked", resp.Status)
			}
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Fatalf("GET error = %v, want a *BlockedError", err)
			}
			// A name is refused at dial time, after resolution.
			if strings.Contains(target, "evil.test") && !strings.Contains(be.Reason, "resolves to 10.0.0.5") {
				t.Errorf("Reason = %q, want the dial-time verdict", be.Reason)
			}
			if hits.Load() != 1 {
				t.Errorf("server saw %d requests, want 1", hits.Load())
			}
			// Only the loopback server was ever dialled.
			want := []string{srv.Listener.Addr().String()}
			if diff := cmp.Diff(want, env.dialer.dialed()); diff != "" {
				t.Errorf("dialled addresses mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedirectWithinLoopback(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := g.HTTPClient(nil).Get(srv.URL + "/old")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "ok" {
		t.Errorf("body = %q, want %q", body, "ok")
	}
}

func TestRedirectLimit(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		http.Redirect(w, r, "/"+strconv.Itoa(int(n)), http.StatusFound)
	}))
	defer srv.Close()

	resp, err := g.HTTPClient(nil).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("endless redirects succeeded")
	}
	if !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("error = %v, want it to stop after 10 redirects", err)
	}
	if got := hits.Load(); got != 10 {
		t.Errorf("server saw %d requests, want 10", got)
	}
}

// TestHTTPClientKeepsBase checks that the base client's settings, its
// CheckRedirect included, survive and that base is not modified.
func TestHTTPClientKeepsBase(t *testing.T) {
	t.Parallel()
	g, env := newTestGuard(t, nil)
	srv, _ := redirector(t, "http://10.0.0.5/x")
	var called bool
	base := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		called = true
		return http.ErrUseLastResponse
	}}

	// The guard's check runs first, so the base policy is not consulted
	// for a blocked hop.
	if _, err := g.HTTPClient(base).Get(srv.URL); !errors.Is(err, ErrBlockedURL) {
		t.Fatalf("GET = %v, want ErrBlockedURL", err)
	}
	if called {
		t.Error("base CheckRedirect was called for a blocked hop")
	}

	ok, _ := redirector(t, "/elsewhere")
	resp, err := g.HTTPClient(base).Get(ok.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !called || resp.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("base CheckRedirect called %v, status %d; want it to stop at the 307", called, resp.StatusCode)
	}
	if base.Transport != nil {
		t.Error("HTTPClient modified base.Transport")
	}
	if len(env.dialer.dialed()) == 0 {
		t.Error("the guarded client did not dial through the guard")
	}
}

func TestInitialRequestBlocked(t *testing.T) {
	t.Parallel()
	g, env := newTestGuard(t, nil)
	client := g.HTTPClient(nil)
	for _, u := range []string{"http://10.0.0.5/", "https://169.254.169.254/latest/meta-data/", "http://0x0a000005:8080/"} {
		if _, err := client.Get(u); !errors.Is(err, ErrBlockedURL) {
			t.Errorf("GET %s = %v, want ErrBlockedURL", u, err)
		}
	}
	if d := env.dialer.dialed(); len(d) != 0 {
		t.Errorf("dialled %v, want nothing", d)
	}
}

// TestOAuthMetadataBlocked is the OAuth case at the guard level: protected
// resource metadata that names 169.254.169.254 as its authorization server.
// Fetching the authorization server's metadata with the guarded client is
// refused before any request is sent there.
func TestOAuthMetadataBlocked(t *testing.T) {
	t.Parallel()
	g, env := newTestGuard(t, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"resource":"http://mcp.test/","authorization_servers":["http://169.254.169.254/"]}`)
	}))
	defer srv.Close()
	client := g.HTTPClient(nil)

	resp, err := client.Get(srv.URL + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	var prm struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&prm)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	as := prm.AuthorizationServers[0]
	if err := g.CheckURL(as); !errors.Is(err, ErrBlockedURL) {
		t.Errorf("CheckURL(%s) = %v, want ErrBlockedURL", as, err)
	}
	if _, err := client.Get(as + ".well-known/oauth-authorization-server"); !errors.Is(err, ErrBlockedURL) {
		t.Errorf("GET AS metadata = %v, want ErrBlockedURL", err)
	}
	want := []string{srv.Listener.Addr().String()}
	if diff := cmp.Diff(want, env.dialer.dialed()); diff != "" {
		t.Errorf("dialled addresses mismatch (-want +got):\n%s", diff)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type trackedBody struct {
	io.Reader
	closed bool
}

func (b *trackedBody) Close() error { b.closed = true; return nil }

func TestRoundTripper(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	var seen []string
	rt := g.RoundTripper(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.URL.String())
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
	}))

	body := &trackedBody{Reader: strings.NewReader("{}")}
	req, _ := http.NewRequest(http.MethodPost, "http://192.168.1.1/mcp", body)
	if _, err := rt.RoundTrip(req); !errors.Is(err, ErrBlockedURL) {
		t.Errorf("RoundTrip(192.168.1.1) = %v, want ErrBlockedURL", err)
	}
	if !body.closed {
		t.Error("a blocked request's body was not closed")
	}

	req, _ = http.NewRequest(http.MethodGet, "https://mcp.example.com/mcp", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if diff := cmp.Diff([]string{"https://mcp.example.com/mcp"}, seen); diff != "" {
		t.Errorf("requests passed on mismatch (-want +got):\n%s", diff)
	}

	// A client around a foreign transport gets the lexical check.
	client := g.HTTPClient(&http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		t.Error("foreign transport called for a blocked URL")
		return nil, errors.New("unreachable")
	})})
	if _, err := client.Get("http://[fd00::1]/"); !errors.Is(err, ErrBlockedURL) {
		t.Errorf("GET via foreign transport = %v, want ErrBlockedURL", err)
	}
}

// TestRoundTripperRemembers checks the memory of URLs that passed: a URL
// passes again without a new check, a refused one is refused every time,
// and the memory stays bounded.
func TestRoundTripperRemembers(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	rt := g.RoundTripper(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
	})).(*roundTripper)
	do := func(url string) error {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for range 3 {
		if err := do("https://mcp.example.com/mcp"); err != nil {
			t.Fatal(err)
		}
		if err := do("http://192.168.1.1/mcp"); !errors.Is(err, ErrBlockedURL) {
			t.Errorf("RoundTrip(192.168.1.1) = %v, want ErrBlockedURL", err)
		}
	}
	if _, ok := rt.passed.Load("http://192.168.1.1/mcp"); ok {
		t.Error("a refused URL was remembered")
	}
	for i := range maxPassedURLs + 10 {
		if err := do(fmt.Sprintf("https://mcp.example.com/mcp/%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := rt.npassed.Load(); n > maxPassedURLs {
		t.Errorf("%d URLs remembered, want at most %d", n, maxPassedURLs)
	}
}

func TestTransport(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	base := &http.Transport{
		Proxy:   http.ProxyFromEnvironment,
		DialTLS: func(string, string) (net.Conn, error) { return nil, errors.New("custom") },
	}
	tr := g.Transport(base)
	if tr.Proxy != nil || tr.DialTLS != nil || tr.DialTLSContext != nil || tr.DialContext == nil {
		t.Errorf("Transport kept a way around the guard: Proxy %v, DialTLS %v, DialContext set %v",
			tr.Proxy != nil, tr.DialTLS != nil, tr.DialContext != nil)
	}
	if base.Proxy == nil || base.DialTLS == nil || base.DialContext != nil {
		t.Error("Transport modified its base")
	}
	tr.CloseIdleConnections()
}
