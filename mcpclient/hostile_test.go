package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// intercept serves MCP with a real go-sdk server (legacy, stateful), except
// for requests hook answers itself: hook sees the JSON-RPC method, the tool
// name (for tools/call) and the request id, and returns true when it wrote
// the response.
func intercept(t *testing.T, hook func(w http.ResponseWriter, method, name string, id json.RawMessage) bool) *mcptest.HTTPServer {
	return interceptMode(t, mcptest.Stateful, hook)
}

// interceptMode is intercept with a server of the given mode.
func interceptMode(t *testing.T, mode mcptest.Mode, hook func(w http.ResponseWriter, method, name string, id json.RawMessage) bool) *mcptest.HTTPServer {
	return interceptServer(t, mcptest.NewServer("s"), mode, hook)
}

// interceptServer is interceptMode in front of srv.
func interceptServer(t *testing.T, srv *mcptest.Server, mode mcptest.Mode, hook func(w http.ResponseWriter, method, name string, id json.RawMessage) bool) *mcptest.HTTPServer {
	real := mcptest.Handler(t, mode, func() *mcp.Server { return srv.Server })
	return mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		if r.Method == http.MethodPost && hook(w, msg.Method, msg.Params.Name, msg.ID) {
			return
		}
		real.ServeHTTP(w, r)
	}))
}

// closeWithin closes m and fails the test if that takes longer than d.
func closeWithin(t *testing.T, m *mcpclient.Manager, d time.Duration) {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if el := time.Since(start); el > d {
		t.Errorf("Close took %v, more than %v", el, d)
	}
}

func TestHostileServers(t *testing.T) {
	t.Run("oversized JSON response", func(t *testing.T) {
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			if name != "big" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, id, strings.Repeat("x", 8<<10))
			return true
		})
		m := newManager(t, &mcpclient.Options{MaxMessageSize: 4 << 10})
		connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
		_, err := m.CallTool(testCtx(t), "s1", "big", nil, nil)
		if !errors.Is(err, mcpclient.ErrProtocol) {
			t.Errorf("oversized response: %v; want ErrProtocol", err)
		}
		if _, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "ok"}, nil); err != nil {
			t.Errorf("the connection did not survive: %v", err)
		}
		closeWithin(t, m, 5*time.Second)
	})
	t.Run("oversized SSE event", func(t *testing.T) {
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			if name != "big" {
				return false
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", id, strings.Repeat("x", 8<<10))
			return true
		})
		m := newManager(t, &mcpclient.Options{MaxMessageSize: 4 << 10})
		connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
		if _, err := m.CallTool(testCtx(t), "s1", "big", nil, nil); !errors.Is(err, mcpclient.ErrProtocol) {
			t.Errorf("oversized event: %v; want ErrProtocol", err)
		}
		closeWithin(t, m, 5*time.Second)
	})
	t.Run("response stream cut inside an event", func(t *testing.T) {
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			if name != "cut" {
				return false
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":`)
			return true
		})
		m := newManager(t, nil)
		connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
		_, err := m.CallTool(testCtx(t), "s1", "cut", nil, nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("a cut stream: %v; want the cause (io.ErrUnexpectedEOF) kept", err)
		}
		closeWithin(t, m, 5*time.Second)
	})
	t.Run("JSON answer that is not the response", func(t *testing.T) {
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			switch name {
			case "other-id":
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"not-%s","result":{"content":[]}}`, id)
				return true
			case "notification":
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
				return true
			}
			return false
		})
		m := newManager(t, nil)
		connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
		for _, tool := range []string{"other-id", "notification"} {
			if _, err := m.CallTool(testCtx(t), "s1", tool, nil, nil); !errors.Is(err, mcpclient.ErrProtocol) {
				t.Errorf("%s: %v; want ErrProtocol", tool, err)
			}
		}
		if _, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "x"}, nil); err != nil {
			t.Errorf("a call after them: %v", err)
		}
		closeWithin(t, m, 5*time.Second)
	})
	t.Run("malformed JSON", func(t *testing.T) {
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			switch name {
			case "garbled":
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[`)
				return true
			case "garbled-sse":
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: {not json \u202e\n\n")
				return true
			}
			return false
		})
		m := newManager(t, nil)
		connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
		// The error quotes the start of what came, sanitised.
		for name, quote := range map[string]string{"garbled": `"{\"jsonrpc\":\"2.0\",\"id\":`, "garbled-sse": `"{not json"`} {
			_, err := m.CallTool(testCtx(t), "s1", name, nil, nil)
			if !errors.Is(err, mcpclient.ErrProtocol) || !strings.Contains(err.Error(), quote) || strings.Contains(err.Error(), "\u202e") {
				t.Errorf("%s: %v; want ErrProtocol, quoting %s", name, err, quote)
			}
		}
		closeWithin(t, m, 5*time.Second)
	})
	t.Run("endless SSE stream", func(t *testing.T) {
		stop := make(chan struct{})
		defer close(stop)
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			if name != "endless" {
				return false
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for {
				// Keep-alives, and notifications that never end.
				fmt.Fprintf(w, ": keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-stop:
					return true
				case <-time.After(time.Millisecond):
				}
			}
		})
		m := newManager(t, nil)
		connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
		ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
		defer cancel()
		if _, err := m.CallTool(ctx, "s1", "endless", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("endless stream: %v; want the caller's deadline", err)
		}
		closeWithin(t, m, 5*time.Second)
	})
	t.Run("slow drip during the handshake", func(t *testing.T) {
		stop := make(chan struct{})
		defer close(stop)
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			if method != "initialize" && method != "server/discover" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0",`)
			for {
				w.(http.Flusher).Flush()
				select {
				case <-stop:
					return true
				case <-time.After(20 * time.Millisecond):
					io.WriteString(w, " ")
				}
			}
		})
		m := newManager(t, &mcpclient.Options{ConnectTimeout: 300 * time.Millisecond})
		ctx := testCtx(t)
		m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: hs.URL})
		res, _ := m.ConnectToServer(ctx, "s1")
		if res.State != mcpclient.StateFailed || !errors.Is(res.Err, context.DeadlineExceeded) {
			t.Errorf("slow drip: %+v; want failed by the handshake timeout", res)
		}
		closeWithin(t, m, 5*time.Second)
	})
	t.Run("slow drip on a call", func(t *testing.T) {
		stop, dripping := make(chan struct{}), make(chan struct{})
		defer close(stop)
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			if name != "drip" {
				return false
			}
			close(dripping)
			w.Header().Set("Content-Type", "text/event-stream")
			for {
				io.WriteString(w, ":")
				w.(http.Flusher).Flush()
				select {
				case <-stop:
					return true
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
		m := newManager(t, nil)
		connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
		errc := make(chan error, 1)
		go func() {
			_, err := m.CallTool(context.Background(), "s1", "drip", nil, nil)
			errc <- err
		}()
		<-dripping
		closeWithin(t, m, 5*time.Second)
		if err := <-errc; err == nil {
			t.Errorf("the call survived Close")
		}
	})
	t.Run("endless pagination", func(t *testing.T) {
		var pages atomic.Int64
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			if method != "prompts/list" {
				return false
			}
			n := pages.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"prompts":[{"name":"p%d"}],"nextCursor":"c%d"}}`, id, n, n)
			return true
		})
		m := newManager(t, &mcpclient.Options{MaxPages: 5})
		ctx := testCtx(t)
		m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: hs.URL})
		m.ConnectToServer(ctx, "s1")
		d, _ := m.DiscoverIfConnected(ctx, "s1", nil)
		if d.Success || !errors.Is(d.Err, mcpclient.ErrProtocol) || d.State != mcpclient.StateConnected {
			t.Errorf("endless pages: %+v; want a protocol error, connected", d)
		}
		if n := pages.Load(); n != 5 {
			t.Errorf("%d pages fetched, want 5", n)
		}
		closeWithin(t, m, 5*time.Second)
	})
	t.Run("repeated cursor", func(t *testing.T) {
		hs := intercept(t, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
			if method != "prompts/list" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"prompts":[],"nextCursor":"same"}}`, id)
			return true
		})
		m := newManager(t, nil)
		ctx := testCtx(t)
		m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: hs.URL})
		m.ConnectToServer(ctx, "s1")
		if d, _ := m.DiscoverIfConnected(ctx, "s1", nil); !errors.Is(d.Err, mcpclient.ErrProtocol) {
			t.Errorf("repeated cursor: %+v", d)
		}
		closeWithin(t, m, 5*time.Second)
	})
}

// TestIdleStream: a standalone stream silent for longer than
// StreamIdleTimeout is reopened.
func TestIdleStream(t *testing.T) {
	var gets atomic.Int64
	reopened := make(chan struct{})
	srv := mcptest.NewServer("s")
	real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && gets.Add(1) == 2 {
			close(reopened)
		}
		real.ServeHTTP(w, r)
	}))
	m := newManager(t, &mcpclient.Options{StreamIdleTimeout: 50 * time.Millisecond})
	connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
	select {
	case <-reopened:
	case <-time.After(20 * time.Second):
		t.Fatal("the idle stream was not reopened")
	}
	if _, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Errorf("call after reopening: %v", err)
	}
}

// TestBlockedURLs: SSRF checks at registration and at dial time.
func TestBlockedURLs(t *testing.T) {
	ctx := testCtx(t)
	m := newManager(t, nil)
	for _, u := range []string{"http://10.0.0.5/mcp", "http://169.254.169.254/", "http://0x0a000001/", "http://metadata.google.internal./x", "http://[::ffff:10.0.0.1]/"} {
		_, err := m.RegisterServer(ctx, "x", mcpclient.ServerOptions{URL: u})
		if !errors.Is(err, netguard.ErrBlockedURL) || !strings.HasPrefix(err.Error(), "Blocked URL:") {
			t.Errorf("RegisterServer(%s) = %v; want Blocked URL", u, err)
		}
	}
	if len(m.Servers()) != 0 {
		t.Errorf("a blocked server was registered")
	}
	if _, err := m.RegisterServer(ctx, "x", mcpclient.ServerOptions{URL: "ftp://example.com/"}); err == nil {
		t.Errorf("an ftp URL was accepted")
	}

	// A name that resolves to a private address is refused at dial time,
	// before any connection is attempted.
	var dials atomic.Int64
	guard, err := netguard.New(nil, &netguard.Options{
		Resolver: resolverFunc(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
			if host == "evil.test" {
				return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
			}
			return net.DefaultResolver.LookupNetIP(ctx, network, host)
		}),
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			dials.Add(1)
			if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().IsLoopback() {
				t.Errorf("dial to %s attempted", address)
				return nil, errors.New("test: refusing to dial beyond loopback")
			}
			return (&net.Dialer{}).DialContext(ctx, network, address)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m2 := newManager(t, &mcpclient.Options{Guard: guard})
	m2.RegisterServer(ctx, "evil", mcpclient.ServerOptions{URL: "http://evil.test/mcp"})
	res, _ := m2.ConnectToServer(ctx, "evil")
	if res.State != mcpclient.StateFailed || !errors.Is(res.Err, netguard.ErrBlockedURL) {
		t.Errorf("connect to a privately resolving name: %+v", res)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials attempted", n)
	}

	// A redirect from a loopback server to a private address is refused.
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.5/mcp", http.StatusTemporaryRedirect)
	}))
	m2.RegisterServer(ctx, "redirect", mcpclient.ServerOptions{URL: hs.URL})
	res, _ = m2.ConnectToServer(ctx, "redirect")
	if res.State != mcpclient.StateFailed || !errors.Is(res.Err, netguard.ErrBlockedURL) {
		t.Errorf("connect through a redirect to a private address: %+v", res)
	}
}

type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

// TestStandaloneReopenRefused: a server that refuses the reopening of its
// standalone stream once (409, as go-sdk's server does while it still
// holds the old stream) is asked again: the stream, and its notifications,
// are not given up for the rest of the session.
func TestStandaloneReopenRefused(t *testing.T) {
	var gets atomic.Int64
	reopened := make(chan struct{})
	srv := mcptest.NewServer("s")
	real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			switch gets.Add(1) {
			case 2:
				http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
				return
			case 3:
				close(reopened)
			}
		}
		real.ServeHTTP(w, r)
	}))
	m := newManager(t, &mcpclient.Options{StreamIdleTimeout: 50 * time.Millisecond})
	connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
	select {
	case <-reopened:
	case <-time.After(20 * time.Second):
		t.Fatal("the stream was given up after one refusal")
	}
	if info, _ := m.Server("s1"); info.State != mcpclient.StateReady {
		t.Errorf("state %s (%v)", info.State, info.Error)
	}
}
