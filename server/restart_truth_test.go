package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestRestartDeadServer: serve stops, the agent's MCP server stops while
// it is down, serve starts again on the same SQLite file. From the first
// frame on, neither the WebSocket, nor the server-sent events, nor the API
// ever report the server connected or ready; once the retry policy's
// attempts are spent it is failed, with an error naming the cause.
func TestRestartDeadServer(t *testing.T) {
	t.Parallel()
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	ctx := testCtx(t)
	e := newEnv(t, nil)
	retry := &api.RetryRequest{MaxAttempts: 2, BaseDelayMS: 10, MaxDelayMS: 10}
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "s", URL: hs.URL, ID: "s", Retry: retry}); err != nil {
		t.Fatal(err)
	}
	if st, err := e.client("test", "a").MCPServers(ctx); err != nil || st.Servers["s"].State != "ready" {
		t.Fatalf("before the restart: %+v, %v", st, err)
	}
	e.stop()
	hs.Stop() // while serve is down

	e2 := openEnv(t, e.path, nil)
	var mu sync.Mutex
	var seen []string // every state reported, "source: state"
	note := func(source string, st api.MCPServersState) {
		s, ok := st.Servers["s"]
		if !ok {
			return
		}
		mu.Lock()
		seen = append(seen, source+": "+s.State)
		mu.Unlock()
		if s.State == "connected" || s.State == "ready" {
			t.Errorf("%s reports the dead server %s", source, s.State)
		}
	}
	// The WebSocket, from its first frame.
	conn, err := client.Dial(ctx, client.AgentURL(e2.ts.URL, "test", "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	wsFailed := make(chan api.MCPServersState, 1)
	dispose := conn.OnMCPUpdate(func(st api.MCPServersState) {
		note("websocket", st)
		if s := st.Servers["s"]; s.State == "failed" {
			select {
			case wsFailed <- st:
			default:
			}
		}
	})
	defer dispose()
	// The server-sent events, from their first event.
	req, _ := http.NewRequestWithContext(ctx, "GET", e2.ts.URL+agentPath+"/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sseFailed := make(chan struct{})
	go func() {
		defer close(sseFailed)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == api.FrameType:
				var f api.Frame
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f); err != nil {
					t.Error(err)
					return
				}
				note("sse", f.MCP)
				if f.MCP.Servers["s"].State == "failed" {
					return
				}
			}
		}
	}()
	// The API, asked until WaitForConnections returns.
	waited := make(chan struct{})
	go func() { e2.srv.WaitForConnections(ctx); close(waited) }()
	for done := false; !done; {
		select {
		case <-waited:
			done = true
		default:
		}
		st, err := e2.client("test", "a").MCPServers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		note("api", st)
	}
	var st api.MCPServersState
	select {
	case st = <-wsFailed:
	case <-ctx.Done():
		t.Fatal("no WebSocket frame with the server failed")
	}
	select {
	case <-sseFailed:
	case <-ctx.Done():
		t.Fatal("no server-sent event with the server failed")
	}
	// A failed server's next attempt may be under way when the API is
	// asked (its retries go on in the background): ask until it says
	// failed again, every answer checked on the way.
	var final api.MCPServersState
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var err error
		if final, err = e2.client("test", "a").MCPServers(ctx); err != nil {
			t.Fatal(err)
		}
		note("api", final)
		if final.Servers["s"].State == "failed" {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the API never said failed again: %+v", final.Servers["s"])
		}
	}
	for source, s := range map[string]api.MCPServersState{"websocket": st, "api": final} {
		g := s.Servers["s"]
		if g.State != "failed" || g.Error == nil || !strings.Contains(*g.Error, "connection refused") {
			t.Errorf("%s: %s, error %v; want failed, naming the refused connection", source, g.State, g.Error)
		}
	}
	mu.Lock()
	t.Logf("%d states seen: %s", len(seen), strings.Join(compact(seen), ", "))
	mu.Unlock()
}

// compact drops repeats of the same entry in a row.
func compact(s []string) []string {
	var out []string
	for _, x := range s {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}
