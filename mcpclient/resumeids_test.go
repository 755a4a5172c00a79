package mcpclient_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResumeRequestIDs: a Manager that resumes a legacy session another
// one saved (a woken agent) numbers its requests apart from the old
// Manager's, so that none is refused as a duplicate of a request the old
// one left running on the server; and the resumed session is the one used,
// with no new handshake.
func TestResumeRequestIDs(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	srv := mcptest.NewServer("s")
	// hold runs until the test ends, whatever the client says: a request
	// of the old Manager still in flight on the server.
	mcp.AddTool(srv.Server, &mcp.Tool{Name: "hold"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		<-release
		return &mcp.CallToolResult{}, nil, nil
	})
	var (
		mu         sync.Mutex
		duplicates []string // the answers that refused a duplicate request id
		inits      int
	)
	real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &bodyRecorder{ResponseWriter: w}
		real.ServeHTTP(rec, r)
		mu.Lock()
		defer mu.Unlock()
		if bytes.Contains(body, []byte(`"initialize"`)) {
			inits++
		}
		if strings.Contains(rec.body.String(), "duplicate in-flight request ID") {
			duplicates = append(duplicates, string(body))
		}
	}))
	t.Cleanup(func() { close(release) }) // before the server's cleanup, which waits for its handlers
	ctx := testCtx(t)

	m1 := mcpclient.New(nil)
	connectReady(t, m1, "s1", mcpclient.ServerOptions{URL: hs.URL})
	held := make(chan error, 1)
	go func() {
		_, err := m1.CallTool(ctx, "s1", "hold", nil, nil)
		held <- err
	}()
	<-started
	saved := saveResume(t, m1, "s1")
	if err := m1.Close(ctx); err != nil { // a hibernation: the session stays alive
		t.Fatal(err)
	}
	<-held

	m2 := newManager(t, nil)
	connectReady(t, m2, "s1", mcpclient.ServerOptions{URL: hs.URL, Resume: saved})
	for i := range 20 { // past the id of the request left running, whatever it is
		if _, err := m2.CallTool(ctx, "s1", "echo", map[string]any{"text": "x"}, nil); err != nil {
			t.Fatalf("call %d on the resumed session: %v", i, err)
		}
		if _, err := m2.CallTool(ctx, "s1", "progress", map[string]any{"steps": 1}, &mcpclient.CallOptions{Progress: func(*mcp.ProgressNotificationParams) {}}); err != nil {
			t.Fatalf("call %d with progress on the resumed session: %v", i, err)
		}
	}
	info, _ := m2.Server("s1")
	mu.Lock()
	defer mu.Unlock()
	if len(duplicates) > 0 || info.SessionID != saved.SessionID || inits != 1 {
		t.Errorf("requests refused as duplicates: %q; session %q (saved %q); %d handshakes, want the first only", duplicates, info.SessionID, saved.SessionID, inits)
	}
}

// bodyRecorder keeps what a handler wrote, and flushes.
type bodyRecorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *bodyRecorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *bodyRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
