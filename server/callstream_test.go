package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// callEvents posts a tool call asking for its events and returns them as
// they come (name and data); the channel is closed at the stream's end.
func callEvents(t *testing.T, ctx context.Context, e *env, serverID, body string) (*http.Response, <-chan [2]string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", e.ts.URL+agentPath+"/servers/"+serverID+"/tools/call", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan [2]string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ch <- [2]string{name, strings.TrimPrefix(line, "data: ")}
			}
		}
	}()
	t.Cleanup(func() { res.Body.Close(); <-done })
	return res, ch
}

// next returns the next event, which must be named want.
func next(t *testing.T, ch <-chan [2]string, want string) api.CallEvent {
	t.Helper()
	ev, ok := <-ch
	if !ok {
		t.Fatalf("the stream ended; want event %q", want)
	}
	var ce api.CallEvent
	if err := json.Unmarshal([]byte(ev[1]), &ce); err != nil {
		t.Fatalf("event %s: %q: %v", ev[0], ev[1], err)
	}
	if ev[0] != want || ce.Type != want {
		t.Fatalf("event %s %s; want %q", ev[0], ev[1], want)
	}
	return ce
}

// TestCallEvents: a tool call made with Accept: text/event-stream streams
// its start, its progress, the questions its server asks (with the call's
// id, pending until answered through the API) and its result; the
// errors found before the call starts are the JSON answers they always
// are, those after it an error event with the status.
func TestCallEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "asker", URL: askServer(t), ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	s := mcptest.NewServer("s")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "s", URL: mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return s.Server }).URL, ID: "s"}); err != nil {
		t.Fatal(err)
	}

	t.Run("progress", func(t *testing.T) {
		res, ch := callEvents(t, ctx, e, "s", `{"name":"progress","arguments":{"steps":2}}`)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		start := next(t, ch, api.CallEventStart)
		if start.CallID == "" || start.ServerID != "s" || start.Tool != "progress" {
			t.Errorf("start: %+v", start)
		}
		for i := 1; i <= 2; i++ {
			if p := next(t, ch, api.CallEventProgress); p.Progress != float64(i) || p.Total != 2 || p.Message != "step "+string(rune('0'+i)) {
				t.Errorf("progress %d: %+v", i, p)
			}
		}
		if r := next(t, ch, api.CallEventResult); r.Result == nil || toolResult(t, r.Result).Content[0].(*mcp.TextContent).Text != "done in 2 steps" {
			t.Errorf("result: %+v", r)
		}
	})

	t.Run("elicitation", func(t *testing.T) {
		_, ch := callEvents(t, ctx, e, "asker", `{"name":"ask"}`)
		start := next(t, ch, api.CallEventStart)
		q := next(t, ch, api.CallEventElicitation).Elicitation
		if q == nil || q.CallID != start.CallID || q.ServerID != "asker" || q.Message != "Who are you?" {
			t.Fatalf("elicitation: %+v", q)
		}
		// The dashboard's list has it too, with the call's id.
		if pending, err := c.Elicitations(ctx); err != nil || len(pending) != 1 || pending[0].CallID != start.CallID {
			t.Fatalf("pending: %+v %v", pending, err)
		}
		if err := c.AnswerElicitation(ctx, q.ID, api.ElicitationAnswer{Action: "accept", Content: map[string]any{"name": "Ada"}}); err != nil {
			t.Fatal(err)
		}
		if ended := next(t, ch, api.CallEventElicitationEnded); ended.ID != q.ID {
			t.Errorf("ended: %+v", ended)
		}
		if r := next(t, ch, api.CallEventResult); r.Result == nil || toolResult(t, r.Result).Content[0].(*mcp.TextContent).Text != "hello Ada" {
			t.Errorf("result: %+v", r)
		}
	})

	t.Run("before the call", func(t *testing.T) {
		res, ch := callEvents(t, ctx, e, "s", `{"name":"nope"}`)
		for range ch {
		}
		if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("unknown tool: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
	})

	t.Run("timeout", func(t *testing.T) {
		_, ch := callEvents(t, ctx, e, "s", `{"name":"slow","timeoutMs":50}`)
		<-s.SlowStarted
		next(t, ch, api.CallEventStart)
		ev := next(t, ch, api.CallEventError)
		if ev.Status != http.StatusGatewayTimeout || ev.Error == nil || ev.Error.Code != api.CodeTimeout || ev.Error.ServerID != "s" {
			t.Errorf("error: %+v", ev)
		}
		<-s.SlowCancelled
	})
}

// TestCallToolWatched: the Go client's watched call hands over progress
// and the call's questions, which it may answer.
func TestCallToolWatched(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "asker", URL: askServer(t), ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	var callID string
	answered := make(chan error, 1)
	res, err := c.CallToolWatched(ctx, "asker", "ask", nil, &client.CallWatch{
		Started: func(id string) { callID = id },
		Elicitation: func(q api.Elicitation) {
			if q.CallID != callID {
				t.Errorf("elicitation of call %q, want %q", q.CallID, callID)
			}
			go func() {
				answered <- c.AnswerElicitation(ctx, q.ID, api.ElicitationAnswer{Action: "decline"})
			}()
		},
	})
	if err != nil || toolResult(t, res).Content[0].(*mcp.TextContent).Text != "decline" {
		t.Fatalf("call: %+v %v", res, err)
	}
	if err := <-answered; err != nil {
		t.Error(err)
	}
	if _, err := c.CallToolWatched(ctx, "asker", "nope", nil, nil); !strings.Contains(err.Error(), "no tool") {
		t.Errorf("unknown tool: %v", err)
	}
}
