package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// askServer is an MCP server whose tool "ask" asks the user for a name
// (form mode) and whose tool "visit" asks them to open a page (URL mode).
func askServer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks for a name."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message: "Who are you?",
				RequestedSchema: map[string]any{"type": "object",
					"properties": map[string]any{"name": map[string]any{"type": "string"}},
					"required":   []string{"name"}},
			})
			if err != nil {
				return nil, nil, err
			}
			text := res.Action
			if res.Action == "accept" {
				text = fmt.Sprint("hello ", res.Content["name"])
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	return mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return s }).URL
}

// frames reads the raw frames of an agent's WebSocket.
func frames(t *testing.T, ctx context.Context, url string) <-chan map[string]json.RawMessage {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
	ch := make(chan map[string]json.RawMessage, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				return
			}
			var f map[string]json.RawMessage
			json.Unmarshal(data, &f)
			ch <- f
		}
	}()
	t.Cleanup(func() { c.CloseNow(); <-done })
	return ch
}

// nextElicitations returns the next elicitations frame.
func nextElicitations(t *testing.T, ch <-chan map[string]json.RawMessage) []api.Elicitation {
	t.Helper()
	return nextElicitationsAfter(t, ch, nil)
}

// nextElicitationsAfter returns the next elicitations frame whose list of
// pending ids differs from last's. A frame is the whole pending list, and
// the agent may send the same list twice (it reports each change to the
// pending elicitations, and two changes can leave the list as it was).
func nextElicitationsAfter(t *testing.T, ch <-chan map[string]json.RawMessage, last []api.Elicitation) []api.Elicitation {
	t.Helper()
	ids := func(els []api.Elicitation) string {
		var b strings.Builder
		for _, el := range els {
			b.WriteString(el.ID + ",")
		}
		return b.String()
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case f := <-ch:
			if string(f["type"]) != `"`+api.ElicitationsFrameType+`"` {
				continue
			}
			var out []api.Elicitation
			json.Unmarshal(f["elicitations"], &out)
			if last != nil && ids(out) == ids(last) {
				continue
			}
			return out
		case <-deadline:
			t.Fatal("no elicitations frame")
		}
	}
}

// TestElicitation: a server's request for input reaches the stream and the
// API; answering it through the API completes the tool call.
func TestElicitation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	url := askServer(t)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "asker", URL: url, ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	ch := frames(t, ctx, client.AgentURL(e.ts.URL, "test", "a"))

	var left []api.Elicitation // what the last round left pending: nil before the first
	for _, tt := range []struct {
		answer string
		want   string
	}{
		{`{"action":"accept","content":{"name":"Ada"}}`, "hello Ada"},
		{`{"action":"decline"}`, "decline"},
	} {
		type result struct {
			res json.RawMessage
			err error
		}
		called := make(chan result, 1)
		go func() {
			res, err := c.CallTool(ctx, "asker", "ask", nil)
			called <- result{res, err}
		}()
		pending := nextElicitationsAfter(t, ch, left)
		if len(pending) != 1 || pending[0].ServerID != "asker" || pending[0].Mode != "form" || pending[0].Message != "Who are you?" || len(pending[0].RequestedSchema) == 0 {
			t.Fatalf("pending: %+v", pending)
		}
		id := pending[0].ID
		status, _, b := e.do("GET", agentPath+"/elicitations", "")
		var listed struct{ Elicitations []api.Elicitation }
		json.Unmarshal(b, &listed)
		if status != 200 || len(listed.Elicitations) != 1 || listed.Elicitations[0].ID != id {
			t.Fatalf("list: %d %s", status, b)
		}
		if status, _, b := e.do("POST", agentPath+"/elicitations/"+id, `{"action":"maybe"}`); status != 400 || apiError(t, b).Code != api.CodeInvalidRequest {
			t.Errorf("bad action: %d %s", status, b)
		}
		if status, _, b := e.do("POST", agentPath+"/elicitations/nope", `{"action":"cancel"}`); status != 404 || apiError(t, b).Code != api.CodeUnknownElicitation {
			t.Errorf("unknown id: %d %s", status, b)
		}
		if status, _, b := e.do("POST", agentPath+"/elicitations/"+id, tt.answer); status != http.StatusNoContent {
			t.Fatalf("answer: %d %s", status, b)
		}
		r := <-called
		if r.err != nil || toolResult(t, r.res).Content[0].(*mcp.TextContent).Text != tt.want {
			t.Fatalf("call: %+v %v", r.res, r.err)
		}
		if left = nextElicitationsAfter(t, ch, pending); len(left) != 0 {
			t.Errorf("still pending: %+v", left)
		}
		left = []api.Elicitation{}
		if status, _, _ := e.do("POST", agentPath+"/elicitations/"+id, tt.answer); status != 404 {
			t.Errorf("second answer: %d", status)
		}
	}
}

// TestElicitationTimeout: an unanswered request is cancelled after
// Options.ElicitationTimeout.
func TestElicitationTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{ElicitationTimeout: time.Millisecond})
	url := askServer(t)
	c := e.client("test", "a")
	ctx := testCtx(t)
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "asker", URL: url, ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, "asker", "ask", nil)
	if err != nil || toolResult(t, res).Content[0].(*mcp.TextContent).Text != "cancel" {
		t.Fatalf("call: %+v %v", res, err)
	}
}

// TestDashboardElicitation: a tool called from the dashboard asks for
// input; the request shows up as a form, and sending it completes the call.
func TestDashboardElicitation(t *testing.T) {
	ctx, problems := browser(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	url := askServer(t)
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "asker", URL: url, ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	ask := `details.tool[data-tool="ask"]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(ask)),
		chromedp.Click(css(ask+" > summary")),
		chromedp.Click(css(ask+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(`#elicitations-section .elicitation[data-mode="form"] input[name="name"]`)),
		chromedp.SendKeys(css(`.elicitation input[name="name"]`), "Grace"),
		chromedp.Click(css(`.elicitation button[type="submit"]`)),
		chromedp.WaitVisible(css(ask+` .result[data-outcome="ok"]`)),
		chromedp.WaitNotVisible(css(`#elicitations-section`)),
	)
	if err != nil {
		t.Fatalf("%v (problems: %v)", err, problems())
	}
	msg, _ := chromedp.Run(ctx, chromedp.Text(css(ask+` .result`)))
	if !strings.HasPrefix(msg, "hello Grace") {
		t.Errorf("result %q", msg)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %v", p)
	}
}

// TestSSEElicitations: on the SSE stream every event is named after its
// frame's type, the elicitations frames included.
func TestSSEElicitations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	url := askServer(t)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "asker", URL: url, ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+agentPath+"/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	// next returns the next event whose data is a frame of type typ,
	// checking on the way that every event's name is its frame's type (an
	// error, not fatal: the elicitation must still be answered, or the
	// test server would wait for it forever).
	next := func(typ string) []byte {
		t.Helper()
		var event string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data := []byte(strings.TrimPrefix(line, "data: "))
				var f struct{ Type string }
				if err := json.Unmarshal(data, &f); err != nil {
					t.Fatalf("event %q: data is not JSON: %s", event, data)
				}
				if event != f.Type {
					t.Errorf("a %s frame came as event %q: %.200s", f.Type, event, data)
				}
				if f.Type == typ {
					return data
				}
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return nil
	}
	next(api.FrameType) // the state, on connect

	called := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "asker", "ask", nil)
		called <- err
	}()
	var f api.ElicitationsFrame
	json.Unmarshal(next(api.ElicitationsFrameType), &f)
	if len(f.Elicitations) != 1 || f.Elicitations[0].ServerID != "asker" {
		t.Fatalf("elicitations frame: %+v", f)
	}
	if err := c.AnswerElicitation(ctx, f.Elicitations[0].ID, api.ElicitationAnswer{Action: "cancel"}); err != nil {
		t.Fatal(err)
	}
	if err := <-called; err != nil {
		t.Fatalf("call: %v", err)
	}
	json.Unmarshal(next(api.ElicitationsFrameType), &f)
	if len(f.Elicitations) != 0 {
		t.Errorf("still pending: %+v", f)
	}
}
