package gateway_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/gateway"
)

// echo calls alpha's echo tool in the session of rc and returns the HTTP
// status.
func echo(rc *rawClient) int {
	return rc.post("tool_alpha_echo", rc.call("1", "tool_alpha_echo", `{"text":"x"}`, ""), nil).status
}

// TestSessionCaps: past Options.MaxSessions (and a shared SessionCap), a
// new session ends the session idle the longest, whose client then finds
// it gone (404); when every session has a request in flight, the new
// client's handshake is refused (503) and the sessions stay.
func TestSessionCaps(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts gateway.Options
	}{
		{"per gateway", gateway.Options{MaxSessions: 2}},
		{"shared", gateway.Options{MaxSessions: -1, Sessions: gateway.NewSessionCap(2)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			tt.opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
			e := newEnv(t, &tt.opts)
			ctx := testCtx(t)
			first := &rawClient{t: t, url: e.URL, era: eraSessions, session: e.connect(eraSessions, nil).ID()}
			second := &rawClient{t: t, url: e.URL, era: eraSessions, session: e.connect(eraSessions, nil).ID()}
			if echo(second) != http.StatusOK || echo(first) != http.StatusOK {
				t.Fatal("the two sessions do not work")
			}
			// first was used last: a third session ends second.
			third := &rawClient{t: t, url: e.URL, era: eraSessions, session: e.connect(eraSessions, nil).ID()}
			if got := echo(second); got != http.StatusNotFound {
				t.Errorf("the session idle the longest: %d; want 404 (ended)", got)
			}
			if echo(first) != http.StatusOK || echo(third) != http.StatusOK {
				t.Error("the sessions used since were ended")
			}
			if strings.Contains(logs.String(), first.session) || strings.Contains(logs.String(), second.session) {
				t.Errorf("a session id is in the logs:\n%s", logs.String())
			}

			// Both sessions busy: a call in flight in each.
			var wg sync.WaitGroup
			for _, rc := range []*rawClient{first, third} {
				wg.Go(func() {
					rc.post("tool_alpha_slow", rc.call("2", "tool_alpha_slow", `{}`, ""), nil)
				})
				select {
				case <-e.alpha.SlowStarted:
				case <-ctx.Done():
					t.Fatal("the slow call did not start")
				}
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "late", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.URL}, &mcp.ClientSessionOptions{ProtocolVersion: eraSessions})
			if err == nil {
				cs.Close()
				t.Error("a session past the cap, all the others busy, was opened")
			} else if !strings.Contains(err.Error(), "Service Unavailable") && !strings.Contains(err.Error(), "503") {
				t.Errorf("a session past the cap, all the others busy: %v; want 503", err)
			}
			e.alpha.ReleaseSlow()
			wg.Wait()
			if echo(first) != http.StatusOK || echo(third) != http.StatusOK {
				t.Error("a busy session was ended")
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use (a log's).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
