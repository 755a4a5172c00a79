package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestDiscoverAfterJoinedRenewal: a discovery asked for while a renewal is
// in flight, whose own discovery then fails (its tools/list was sent
// while the server answered 503), is made again rather than reporting
// the renewal's older failure: the server was mended before the caller
// asked.
func TestDiscoverAfterJoinedRenewal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a safety net
	defer cancel()
	srv := mcptest.NewServer("s")
	real := mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	var hold atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/list" && hold.CompareAndSwap(true, false) {
			close(entered)
			<-release
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		real.ServeHTTP(w, r)
	}))
	m := New(&Options{})
	t.Cleanup(func() { m.Close(context.Background()) })
	if _, err := m.RegisterServer(ctx, "s", ServerOptions{URL: hs.URL,
		Retry: &RetryOptions{MaxAttempts: 1, DisableBackground: true}}); err != nil {
		t.Fatal(err)
	}
	hold.Store(true)
	if err := m.EstablishConnection("s"); err != nil { // a renewal: connect, then discover
		t.Fatal(err)
	}
	<-entered // the renewal's tools/list waits for its 503

	c, err := m.lookup("s")
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	before := m.inflight
	m.mu.Unlock()
	done := make(chan DiscoverResult, 1)
	go func() {
		res, err := m.DiscoverIfConnected(ctx, "s", nil)
		if err != nil {
			res.Err = err
		}
		done <- res
	}()
	// Wait until the discovery is under way (it counts itself in), so
	// that it finds the renewal in flight.
	for {
		m.mu.Lock()
		n := m.inflight
		m.mu.Unlock()
		c.mu.Lock()
		renewing := c.renewing != nil
		c.mu.Unlock()
		if !renewing {
			t.Fatal("the renewal ended before its tools/list was answered")
		}
		if n > before {
			break
		}
		select {
		case res := <-done:
			t.Fatalf("the discovery returned while the renewal's tools/list was held: %+v", res)
		case <-time.After(time.Millisecond): // polling for the goroutine to start
		}
	}
	close(release)
	res := <-done
	if !res.Success || res.State != StateReady {
		t.Fatalf("discovery asked during a renewal whose own listing failed: %+v, want ready", res)
	}
	if cat, ok := m.Catalog("s"); !ok || !cat.Known || len(cat.Tools) == 0 {
		t.Errorf("catalog after the discovery: %+v", cat)
	}
}
