package mcptest

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// ProxyCounts is what a CountingProxy has seen pass.
type ProxyCounts struct {
	// Handshakes counts initialize requests.
	Handshakes atomic.Int64
	// Rejected counts POSTs the target answered with 400 (how many servers
	// answer a session id they do not know).
	Rejected atomic.Int64
}

// CountingProxy serves, on 127.0.0.1, a reverse proxy to the server at
// target (a URL; its path is kept from the request), passing event streams
// at once and counting what passes. It is stopped when the test ends.
func CountingProxy(t testing.TB, target string) (*HTTPServer, *ProxyCounts) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("mcptest: proxy target %q: %v", target, err)
	}
	counts := new(ProxyCounts)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1 // event streams pass at once
	// A client that goes away (a stream closed) is no error to log.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.StatusCode == http.StatusBadRequest && resp.Request.Method == http.MethodPost {
			counts.Rejected.Add(1)
		}
		return nil
	}
	srv := ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), `"method":"initialize"`) {
			counts.Handshakes.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	return srv, counts
}
