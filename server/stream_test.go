package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
)

// states collects the states a Conn receives.
func states(t *testing.T, c *client.Conn) <-chan api.MCPServersState {
	ch := make(chan api.MCPServersState, 1024)
	dispose := c.OnMCPUpdate(func(st api.MCPServersState) { ch <- st })
	t.Cleanup(dispose)
	return ch
}

// waitFor reads states until one satisfies ok.
func waitFor(t *testing.T, ch <-chan api.MCPServersState, what string, ok func(api.MCPServersState) bool) api.MCPServersState {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case st := <-ch:
			if ok(st) {
				return st
			}
		case <-deadline:
			t.Fatalf("no state with %s", what)
		}
	}
}

func toolNames(st api.MCPServersState, id string) []string {
	var names []string
	for _, tool := range st.Tools {
		if tool.ServerID == id {
			names = append(names, tool.Name)
		}
	}
	slices.Sort(names)
	return names
}

// TestStream: a WebSocket client gets the state on connect, and a new frame
// after an add, a server's list_changed and a removal.
func TestStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.create("test", "a")
	srv, url := mcpServer(t, "s")
	ctx := testCtx(t)

	// The raw frame has the seed's shape.
	raw, _, err := websocket.Dial(ctx, client.AgentURL(e.ts.URL, "test", "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, data, err := raw.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var frame map[string]map[string]json.RawMessage
	var typ struct{ Type string }
	json.Unmarshal(data, &typ)
	if err := json.Unmarshal([]byte(strings.Replace(string(data), `"type":"cf_agent_mcp_servers",`, "", 1)), &frame); err != nil || typ.Type != api.FrameType {
		t.Fatalf("first frame: %s", data)
	}
	for _, k := range []string{"servers", "tools", "prompts", "resources", "resourceTemplates"} {
		if _, ok := frame["mcp"][k]; !ok {
			t.Errorf("first frame has no mcp.%s: %s", k, data)
		}
	}
	raw.Close(websocket.StatusNormalClosure, "")

	conn, err := client.Dial(ctx, client.AgentURL(e.ts.URL, "test", "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch := states(t, conn)
	first := <-ch // OnMCPUpdate starts with the latest state
	if len(first.Servers) != 0 {
		t.Fatalf("first state: %+v", first)
	}

	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ch, "s ready with its tools", func(st api.MCPServersState) bool {
		return st.Servers["s"].State == "ready" && slices.Contains(toolNames(st, "s"), "echo")
	})

	srv.AddTool("late") // the server sends tools/list_changed
	waitFor(t, ch, "the late tool", func(st api.MCPServersState) bool {
		return slices.Contains(toolNames(st, "s"), "late")
	})

	if err := c.RemoveMCPServer(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, ch, "s removed", func(st api.MCPServersState) bool {
		_, ok := st.Servers["s"]
		return !ok
	})
	if len(st.Tools) != 0 {
		t.Errorf("tools after removal: %v", toolNames(st, "s"))
	}
	if diff := conn.MCPServers(); len(diff.Servers) != 0 {
		t.Errorf("MCPServers: %+v", diff)
	}
}

// TestSSE: the same frames as server-sent events.
func TestSSE(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.create("test", "a")
	_, url := mcpServer(t, "s")
	ctx := testCtx(t)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+agentPath+"/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	next := func() (string, api.Frame) {
		t.Helper()
		var event string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				var f api.Frame
				if event == api.FrameType {
					if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f); err != nil {
						t.Fatal(err)
					}
				}
				return event, f
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return "", api.Frame{}
	}
	if ev, f := next(); ev != api.FrameType || f.Type != api.FrameType || len(f.MCP.Servers) != 0 {
		t.Fatalf("first event %q %+v", ev, f)
	}
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, f := next()
		if ev != api.FrameType {
			t.Fatalf("event %q", ev)
		}
		if f.MCP.Servers["s"].State == "ready" && len(toolNames(f.MCP, "s")) > 0 {
			break
		}
	}
	// Shutting down ends the stream with a close event.
	e.srv.CloseStreams()
	for {
		if ev, _ := next(); ev == "close" {
			break
		}
	}
}

// TestShouldSendProtocolMessages: connections the hook refuses get no
// frames, and others do.
func TestShouldSendProtocolMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{ShouldSendProtocolMessages: func(r *http.Request) bool {
		return r.Header.Get("X-Quiet") == ""
	}})
	e.create("test", "a")
	_, url := mcpServer(t, "s")
	ctx := testCtx(t)
	quiet, _, err := websocket.Dial(ctx, client.AgentURL(e.ts.URL, "test", "a"), &websocket.DialOptions{HTTPHeader: http.Header{"X-Quiet": {"1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.CloseNow()
	conn, err := client.Dial(ctx, client.AgentURL(e.ts.URL, "test", "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch := states(t, conn)
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "s", URL: url}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ch, "a ready server", func(st api.MCPServersState) bool { return len(st.Tools) > 0 })
	// The quiet connection got nothing: its first read sees the close.
	e.srv.CloseStreams()
	_, data, err := quiet.Read(ctx)
	if err == nil {
		t.Fatalf("the quiet connection got a frame: %s", data)
	}
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("quiet connection ended with %v, want going away", err)
	}
	<-conn.Done()
	if conn.CloseStatus() != websocket.StatusGoingAway {
		t.Errorf("conn ended with %v", conn.Err())
	}
}

// TestSlowWebSocketClosed: at the WebSocket level, a dropped client gets
// close status 1013 and reason "fell behind".
func TestSlowWebSocketClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{StreamBuffer: 1})
	watches := make(chan *agent.Watcher, 1)
	unblock := make(chan struct{})
	var writes atomic.Int32
	e.srv.hooks.Store(&testHooks{
		onWatch: func(w *agent.Watcher) { watches <- w },
		beforeWrite: func() {
			if writes.Add(1) > 1 { // the snapshot goes out; the next is stuck
				<-unblock
			}
		},
	})
	e.create("test", "a")
	ctx := testCtx(t)
	conn, err := client.Dial(ctx, client.AgentURL(e.ts.URL, "test", "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w := <-watches
	a, release, err := e.srv.Use(ctx, "test", "a")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	a.RemoveMCPServer(ctx, "no-such-server") // a change: its update gets stuck
	// The stream is stuck writing its second update; changes pile up in the
	// watch's buffer of one until the agent drops it.
	for dropped := false; !dropped; {
		a.RemoveMCPServer(ctx, "no-such-server") // a change, as any other
		select {
		case <-w.Done():
			dropped = true
		case <-ctx.Done():
			t.Fatal("the stuck watch was never dropped")
		default:
			runtime.Gosched()
		}
	}
	close(unblock)
	<-conn.Done()
	if conn.CloseStatus() != websocket.StatusTryAgainLater || !strings.Contains(conn.Err().Error(), "fell behind") {
		t.Errorf("ended with %v", conn.Err())
	}
}
