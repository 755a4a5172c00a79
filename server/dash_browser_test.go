package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// poll waits until the JavaScript expression is truthy.
func (p *page) poll(what, expr string) {
	p.t.Helper()
	p.do(what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[any](expr)(ctx, t)
		return err
	}))
}

// TestDashboardFailures: the add form and the Reconnect notice say what
// failed in short (what the row shows), with the server's name and the
// next step in the dashboard (the Reconnect button), the whole error behind
// a disclosure, never an API route; a failed server being retried counts
// down to its next try.
func TestDashboardFailures(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	hs.Stop()
	row := `#servers tr[data-server-id="docs"]`

	const summary = "cannot connect: connection refused"
	// Without "Keep it", a server that cannot be reached is not saved,
	// and the form keeps what was typed.
	p.do("adding a server that is down",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.SendKeys(css(`#add-form input[name="name"]`), "docs"),
		chromedp.SendKeys(css(`#add-form input[name="url"]`), hs.URL),
		chromedp.SendKeys(css(`#add-form input[name="id"]`), "docs"),
		chromedp.Click(css(`#add-form button[type="submit"]`)),
		chromedp.WaitVisible(css(`#add-result[data-outcome="error"] .failure-summary`)),
	)
	got := p.text(`#add-result`)
	if want := "docs: " + summary + ". Nothing was saved: check the URL"; !strings.HasPrefix(got, want) {
		t.Errorf("add result %q, want it to start %q", got, want)
	}
	if n := eval[int](p, `document.querySelectorAll('`+row+`').length`); n != 0 {
		t.Errorf("a row for the server not saved")
	}
	if v := eval[string](p, `document.querySelector('#add-form input[name="url"]').value`); v != hs.URL {
		t.Errorf("the form lost its URL: %q", v)
	}
	// With it, the server is saved and retried.
	p.do("adding a server that is down, kept",
		chromedp.Click(css(`#add-form input[name="keep"]`)),
		chromedp.Click(css(`#add-form button[type="submit"]`)),
		chromedp.WaitVisible(css(row+` .state[data-state="failed"]`)),
	)
	p.poll("the kept server's result", `document.querySelector('#add-result').textContent.includes("It is saved")`)
	got = p.text(`#add-result`)
	if want := "docs: " + summary + ". It is saved and retried in the background: press Reconnect in its row to try it now."; !strings.HasPrefix(got, want) {
		t.Errorf("add result %q, want it to start %q", got, want)
	}
	if strings.Contains(got, "POST") || strings.Contains(got, "/servers") || strings.Count(got, summary) != 1 {
		t.Errorf("add result %q: an API route, or the summary not once", got)
	}
	detail := eval[string](p, `document.querySelector("#add-result details.error-details pre").textContent`)
	if !strings.Contains(detail, "dial tcp") || !strings.Contains(detail, hs.URL) {
		t.Errorf("the detail %q, want the whole error", detail)
	}

	// The row counts down to the next try.
	p.do("the retry countdown", chromedp.WaitVisible(css(row+` .retry`)))
	re := regexp.MustCompile(`^retrying, next try in (\d+ s|\d+ min( \d+ s)?)$|^retrying now$`)
	first := p.text(row + ` .retry`)
	if !re.MatchString(first) {
		t.Errorf("retry note %q", first)
	}
	p.poll("the countdown moving", fmt.Sprintf(`document.querySelector('%s .retry')?.textContent !== %q`, row, first))
	if next := p.text(row + ` .retry`); !re.MatchString(next) {
		t.Errorf("retry note %q after a tick", next)
	}

	p.do("reconnecting while it is still down",
		chromedp.Click(css(row+` button.reconnect`)),
		chromedp.WaitVisible(css(`#notice .failure-summary`)),
	)
	notice := p.text(`#notice`)
	if want := "Reconnecting docs failed: " + summary + ". It keeps being retried in the background: its row shows when it is next tried."; !strings.HasPrefix(notice, want) {
		t.Errorf("notice %q, want it to start %q", notice, want)
	}
	if strings.Contains(notice, "POST") || strings.Count(notice, "Reconnecting") != 1 || strings.Count(notice, summary) != 1 {
		t.Errorf("notice %q: an API route, or repeated", notice)
	}

	// Once the server is back, Reconnect clears the notice.
	hs.Restart()
	p.do("reconnecting once it is back",
		chromedp.Click(css(row+` button.reconnect`)),
		chromedp.WaitVisible(css(row+` .state[data-state="ready"]`)),
		chromedp.WaitNotVisible(css(`#notice`)),
	)
	for _, pr := range p.problems() {
		if !strings.Contains(pr, "status of 502 (Bad Gateway)") { // Chromium's line for each connect_failed answer
			t.Errorf("the page reported a problem: %s", pr)
		}
	}
}

// TestDashboardServerPanel: a server's Details show what it said of
// itself (implementation, protocol version, session, capabilities,
// instructions), kept open across updates; Remove asks first, and Keep
// keeps the server.
func TestDashboardServerPanel(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	srv, url := mcpServer(t, "docs")
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "docs", URL: url, ID: "docs", Transport: &api.TransportRequest{Type: "streamable-http"}}); err != nil {
		t.Fatal(err)
	}
	row := `#servers tr[data-server-id="docs"]`
	panel := `#servers tr.server-panel[data-server-id="docs"]`
	p.do("opening the server's panel",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(row+` .state[data-state="ready"]`)),
		chromedp.Click(css(row+` button.details`)),
		chromedp.WaitVisible(css(panel)),
	)
	state, err := e.client("test", "a").MCPServers(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	s := state.Servers["docs"]
	if s.SessionID == "" || s.ProtocolVersion == "" {
		t.Fatalf("the API's state has no session or version: %+v", s)
	}
	text := p.text(panel)
	for _, want := range []string{"docs 1.0.0", s.ProtocolVersion, s.SessionID, "Test server docs.", "tools"} {
		if !strings.Contains(text, want) {
			t.Errorf("panel %q lacks %q", text, want)
		}
	}
	if got := p.text(panel + ` dd.session`); got != s.SessionID {
		t.Errorf("session %q, want %q", got, s.SessionID)
	}
	// What its tool definitions cost, as the API says.
	if s.ToolBytes == 0 {
		t.Errorf("the API's state has no toolBytes: %+v", s)
	} else if got, want := p.text(panel+` dd.tool-cost`), fmt.Sprintf("about %d tokens", s.ToolTokens); !strings.Contains(got, want) {
		t.Errorf("tool cost %q, want it to say %q", got, want)
	}

	// An update (a new tool) keeps the panel open.
	srv.AddTool("late")
	p.do("an update", chromedp.WaitVisible(css(`details.tool[data-tool="late"]`)), chromedp.WaitVisible(css(panel)))

	p.do("Remove, then Keep",
		chromedp.Click(css(row+` button.remove`)),
		chromedp.WaitVisible(css(row+` button.remove-confirm`)),
		chromedp.Click(css(row+` button.keep`)),
		chromedp.WaitVisible(css(row+` button.details`)),
	)
	if ids := e.stored("test/a"); len(ids) != 1 {
		t.Errorf("stored after Keep: %v", ids)
	}
	if got := p.text(row + ` .actions`); strings.Contains(got, "?") {
		t.Errorf("actions after Keep: %q", got)
	}
	p.do("Remove, confirmed",
		chromedp.Click(css(row+` button.remove`)),
		chromedp.WaitVisible(css(row+` button.remove-confirm`)),
	)
	if got := strings.TrimSpace(p.text(row + ` .confirm-text`)); got != "Remove docs?" {
		t.Errorf("confirmation %q", got)
	}
	p.do("confirming", chromedp.Click(css(row+` button.remove-confirm`)), chromedp.WaitVisible(css(`#no-servers`)))
	if ids := e.stored("test/a"); len(ids) != 0 {
		t.Errorf("stored after the removal: %v", ids)
	}
	p.noProblems()
}

// TestDashboardAgentSearch: with 300 agents, typing in the search box
// narrows the picker to those that hold the text, and Enter opens the
// first.
func TestDashboardAgentSearch(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	for i := range 300 {
		if status, _, b := e.do("PUT", fmt.Sprintf("/agents/team/agent-%03d", i), ""); status != http.StatusCreated {
			t.Fatalf("creating agent %d: %d %s", i, status, b)
		}
	}
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
	)
	p.poll("the agents listed", `document.querySelectorAll('#agent-picker option').length > 300`)
	p.do("searching", chromedp.SendKeys(css(`#agent-search`), "AGENT-12"))
	p.poll("the list narrowed", `document.querySelector('#agent-search').dataset.matches === "10"`)
	shown, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#agent-picker option:not([hidden])')].map((o) => o.value).filter(Boolean)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) != 10 || shown[0] != "team/agent-120" || shown[9] != "team/agent-129" {
		t.Errorf("options %v, want team/agent-120 to team/agent-129", shown)
	}
	p.do("opening the first", chromedp.SendKeys(css(`#agent-search`), "\r"))
	// The page navigates to the agent's dashboard.
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for {
		name, err := chromedp.Run(p.ctx, chromedp.Text(css(`#agent-name`)))
		if err == nil && name == "team/agent-120" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never opened: %q %v (problems: %v)", name, err, p.problems())
		}
		p.do("waiting for the page", chromedp.WaitReady(css(`body`)))
	}
	p.noProblems()
}

// TestDashboardCallProgress: the result box of a tool call made from the
// dashboard shows the server's progress as it comes (a bar, where the call
// is, the server's message), then the result. It needs the call route's
// event stream (Accept: text/event-stream).
func TestDashboardCallProgress(t *testing.T) {
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	srv := mcptest.NewServer("docs")
	release := make(chan struct{})
	mcp.AddTool(srv.Server, &mcp.Tool{Name: "long", Description: "Reports a step, then waits."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if token := req.Params.GetProgressToken(); token != nil {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 3, Message: "indexing"})
				if err != nil {
					return nil, nil, err
				}
			}
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	_, url := mcpServerOf(t, srv.Server)
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "docs", URL: url, ID: "docs"}); err != nil {
		t.Fatal(err)
	}
	// Does the call route stream events?
	_, h, _ := e.do("POST", agentPath+"/servers/docs/tools/call", `{"name":"echo","arguments":{"text":"x"}}`, "Accept: text/event-stream")
	if !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Skip("the tool call route does not stream its events (Accept: text/event-stream)")
	}

	p := newPage(t)
	tool := `details.tool[data-tool="long"]`
	p.do("calling the long tool",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(tool)),
		chromedp.Click(css(tool+" > summary")),
		chromedp.Click(css(tool+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(tool+` .result[data-outcome="pending"] progress.call-progress`)),
	)
	value, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]float64](`(() => { const b = document.querySelector('`+tool+` progress.call-progress'); return [b.value, b.max]; })()`))
	if err != nil || len(value) != 2 || value[0] != 1 || value[1] != 3 {
		t.Errorf("progress bar value, max = %v (%v); want 1, 3", value, err)
	}
	if got := p.text(tool + ` .progress-text`); got != "1 of 3: indexing" {
		t.Errorf("progress text %q", got)
	}
	close(release)
	p.do("the result", chromedp.WaitVisible(css(tool+` .result[data-outcome="ok"]`)))
	if got := p.text(tool + ` .result`); !strings.HasPrefix(got, "done") {
		t.Errorf("result %q", got)
	}
	p.noProblems()
}

// TestDashboardAwakeLine: a line under the header says what keeps the
// agent awake (the page's own stream, a call in flight), as hibernate's
// 409 names it.
func TestDashboardAwakeLine(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	srv, url := mcpServer(t, "s")
	t.Cleanup(srv.ReleaseSlow)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url, ID: "one"}); err != nil {
		t.Fatal(err)
	}
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(`#awake[data-awake="busy"]`)),
	)
	// The page's WebSocket is a request in flight and an open stream. The
	// page's own polls (tasks, approvals, logs) are requests in flight too
	// while they run, so the line is read until it shows the quiet state
	// (it is asked for again every few seconds).
	const want = "Kept awake by: 1 request in flight, 1 open stream (this page's stream among them)."
	p.poll("the awake line with only the page's stream", fmt.Sprintf(`(document.querySelector("#awake")?.textContent || "") === %q`, want))

	called := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "one", "slow", map[string]any{})
		called <- err
	}()
	<-srv.SlowStarted
	p.poll("the call in flight shown", `(document.querySelector("#awake")?.textContent || "").includes("call (or add, reconnection) in flight")`)
	srv.ReleaseSlow()
	if err := <-called; err != nil {
		t.Fatal(err)
	}
}
