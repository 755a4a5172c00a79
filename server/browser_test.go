package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// chromium is Debian's Chromium, which scripts/install-test-deps installs.
const chromium = "/usr/bin/chromium"

// browser starts headless Chromium for the test, or skips it (fails with
// AGENTMCP_REQUIRE_PEERS=1) when there is none. problems returns the
// page's uncaught exceptions and console errors so far (a CSP violation is
// one).
func browser(t *testing.T) (ctx context.Context, problems func() []string) {
	t.Helper()
	if _, err := exec.LookPath(chromium); err != nil {
		if os.Getenv("AGENTMCP_REQUIRE_PEERS") == "1" {
			t.Fatalf("%s not found (scripts/install-test-deps installs it): %v", chromium, err)
		}
		t.Skipf("%s not found; run scripts/install-test-deps", chromium)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	var (
		mu    sync.Mutex
		found []string
		done  = make(chan struct{})
	)
	msgs := chromedp.Console(ctx) // starts the browser
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				mu.Lock()
				if m.URL != "" {
					found = append(found, m.String()+" ("+m.URL+")")
				} else {
					found = append(found, m.String())
				}
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		cancelBrowser() // closes the browser and waits for it
		cancelAlloc()
		<-done
	})
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), found...)
	}
}

// artifact writes a test artifact under artifacts/ at the repository root
// (git-ignored).
func artifact(t *testing.T, name string, data []byte) {
	dir := filepath.Join("..", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("artifact: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Errorf("artifact: %v", err)
	}
}

// TestDashboard drives the dashboard in headless Chromium: add a test
// server through the form, see it become ready and its tools listed
// without a reload (and a tool added later), call tools from their
// generated forms, and remove the server. Names are shown as text, never
// HTML; the page raises no error (a CSP violation would be one).
func TestDashboard(t *testing.T) {
	ctx, problems := browser(t)
	start := time.Now()
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	srv, url := mcpServer(t, "s")

	const name = `<b id="injected">s</b>`
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	tool := func(n string) string { return fmt.Sprintf(`details.tool[data-tool=%q]`, n) }
	row := `#servers tr[data-server-id="test-server"]`
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(css(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v (problems: %v)", sel, err, problems())
		}
		return s
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v (problems: %v)", what, err, problems())
		}
	}

	do("adding a server through the form",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.SendKeys(css(`#add-form input[name="name"]`), name),
		chromedp.SendKeys(css(`#add-form input[name="url"]`), url),
		chromedp.SetValue(css(`#add-form select[name="transport"]`), "streamable-http"),
		chromedp.SendKeys(css(`#add-form input[name="id"]`), "test server"),
		chromedp.SendKeys(css(`#add-form textarea[name="headers"]`), "X-Api-Key: hidden-value"),
		chromedp.Click(css(`#add-form button[type="submit"]`)),
		chromedp.WaitVisible(css(row+` .state[data-state="ready"]`)),
		chromedp.WaitVisible(css(tool("echo"))),
		chromedp.WaitVisible(css(`#add-result[data-outcome="ok"]`)),
	)
	if got := text("#agent-name"); got != "test/a" {
		t.Errorf("agent %q", got)
	}
	if got := text(row + " td"); got != name {
		t.Errorf("name cell %q, want the name as text", got)
	}
	if got := text(row + " td:nth-child(4)"); got != "streamable-http" {
		t.Errorf("transport cell %q", got)
	}
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#injected").length`))
	if err != nil || injected != 0 {
		t.Errorf("server-supplied HTML became elements: %d %v", injected, err)
	}

	// A tool the server adds later shows up without a reload.
	srv.AddTool("late")
	do("waiting for the late tool", chromedp.WaitVisible(css(tool("late"))))

	do("calling tools",
		chromedp.Click(css(tool("echo")+" > summary")),
		chromedp.Click(css(tool("echo")+" details.raw > summary")),
		chromedp.SendKeys(css(tool("echo")+` form input[name="text"]`), "hello from the browser"),
		chromedp.Click(css(tool("echo")+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(tool("echo")+` .result[data-outcome="ok"]`)),
		chromedp.Click(css(tool("add")+" > summary")),
		chromedp.SendKeys(css(tool("add")+` form input[name="a"]`), "2"),
		chromedp.SendKeys(css(tool("add")+` form input[name="b"]`), "40"),
		chromedp.Click(css(tool("add")+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(tool("add")+` .result[data-outcome="ok"]`)),
	)
	if got := text(tool("echo") + " .result"); !strings.HasPrefix(got, "echo: hello from the browser") {
		t.Errorf("echo result %q", got)
	}
	if got := text(tool("add") + " .result"); !strings.HasPrefix(got, "42") {
		t.Errorf("add result %q", got)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	artifact(t, "dashboard.png", shot)

	do("removing the server",
		chromedp.Click(css(row+` button.remove`)),
		chromedp.Click(css(row+` button.remove-confirm`)), // Remove asks first
		chromedp.WaitVisible(css(`#no-servers`)),
		chromedp.WaitNotPresent(css(tool("echo"))),
	)
	if ids := e.stored("test/a"); len(ids) != 0 {
		t.Errorf("stored after removal: %v", ids)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %v", p)
	}
	t.Logf("browser test took %v", time.Since(start).Round(time.Millisecond))
}

// TestREADMEScreenshot takes the README's screenshot, docs/dashboard.png,
// when AGENTMCP_UPDATE_SCREENSHOT=1: two servers, one with its Details
// open, one tool called; the whole page.
func TestREADMEScreenshot(t *testing.T) {
	if os.Getenv("AGENTMCP_UPDATE_SCREENSHOT") != "1" {
		t.Skip("set AGENTMCP_UPDATE_SCREENSHOT=1 to update docs/dashboard.png")
	}
	ctx, problems := browser(t)
	e := newEnv(t, nil)
	c := e.client("agentmcp", "default")
	for _, name := range []string{"docs", "tracker"} {
		_, url := mcpServer(t, name)
		if _, err := c.AddMCPServer(testCtx(t), api.AddRequest{Name: name, URL: url, ID: name}); err != nil {
			t.Fatal(err)
		}
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	echo := `.tool-group[data-server-id="docs"] details.tool[data-tool="echo"]`
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1200, 1000),
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(echo)),
		chromedp.Click(css(echo+" > summary")),
		chromedp.SendKeys(css(echo+` form input[name="text"]`), "hello, agents"),
		chromedp.Click(css(echo+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(echo+` .result[data-outcome="ok"]`)),
		chromedp.Click(css(`#servers tr[data-server-id="docs"] button.details`)),
		chromedp.WaitVisible(css(`#servers tr.server-panel[data-server-id="docs"]`)),
	)
	if err != nil {
		t.Fatalf("%v (problems: %v)", err, problems())
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "dashboard.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardBadSchemas: servers may send any JSON as a tool's input
// schema (or an elicitation's). Properties that are not objects become
// free JSON fields, a required that is not an array is ignored, and values
// of the wrong type are shown as JSON; the page never throws, and every
// tool, of every server, is listed and callable.
func TestDashboardBadSchemas(t *testing.T) {
	ctx, problems := browser(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	_, goodURL := mcpServer(t, "good")

	bad := mcp.NewServer(&mcp.Implementation{Name: "bad", Version: "1"}, nil)
	schemas := map[string]string{
		"null-property":   `{"type":"object","properties":{"x":null}}`,
		"required-number": `{"type":"object","properties":{"y":{"type":"string"}},"required":5}`,
		"required-object": `{"type":"object","properties":{"y":{"type":"string"}},"required":{"y":true}}`,
		"properties-text": `{"type":"object","properties":"abc"}`,
		"odd-values": `{"type":"object","properties":{
			"a":{"type":{"toString":1}},
			"b":{"enum":[{"toString":1,"valueOf":1},null,[1]]},
			"c":{"type":["null",5],"description":{"toString":1,"valueOf":1}},
			"d":"string","e":[1],"f":{"title":7,"type":"string"}},
			"required":["f",{"toString":1}]}`,
	}
	for name, schema := range schemas {
		bad.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "args " + string(req.Params.Arguments)}}}, nil
			})
	}
	// ask-bad asks for input with a null property in its form.
	bad.AddTool(&mcp.Tool{Name: "ask-bad", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"x": nil, "name": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil
		})
	badURL := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return bad }).URL
	c := e.client("test", "a")
	// Should the test stop with an elicitation pending, decline it before
	// the bad server waits for its tool call to end.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pending, _ := c.Elicitations(ctx)
		for _, el := range pending {
			c.AnswerElicitation(ctx, el.ID, api.ElicitationAnswer{Action: "decline"})
		}
	})
	for id, url := range map[string]string{"good": goodURL, "bad": badURL} {
		if _, err := c.AddMCPServer(testCtx(t), api.AddRequest{Name: id, URL: url, ID: id}); err != nil {
			t.Fatal(err)
		}
	}

	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	tool := func(server, name string) string {
		return fmt.Sprintf(`details.tool[data-server-id=%q][data-tool=%q]`, server, name)
	}
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(e.ts.URL + "/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(tool("good", "echo"))),
	}
	for name := range schemas {
		steps = append(steps, chromedp.WaitVisible(css(tool("bad", name))))
	}
	nullProp := tool("bad", "null-property")
	steps = append(steps,
		// The null property is a free JSON field, and the call sends it.
		chromedp.Click(css(nullProp+" > summary")),
		chromedp.SendKeys(css(nullProp+` form textarea[name="x"]`), `{"k":1}`),
		chromedp.Click(css(nullProp+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(nullProp+` .result[data-outcome="ok"]`)),
	)
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%v (problems: %v)", err, problems())
	}
	out, _ := chromedp.Run(ctx, chromedp.Text(css(nullProp+" .result")))
	if !strings.HasPrefix(out, `args {"x":{"k":1}}`) {
		t.Errorf("null-property result %q", out)
	}
	// Every property of the odd schema has a field, and only the valid
	// required name is required.
	fields, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+
		`'details.tool[data-tool="odd-values"] form [name]')].map((f) => f.name + (f.required ? "*" : ""))`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d", "e", "f*"}, fields); diff != "" {
		t.Errorf("odd-values fields (-want +got):\n%s", diff)
	}
	for _, name := range []string{"required-number", "required-object"} {
		req, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(
			`document.querySelector('details.tool[data-tool=%q] form input[name="y"]').required`, name)))
		if err != nil || req {
			t.Errorf("%s: y required=%v (%v), want an optional field", name, req, err)
		}
	}

	// An elicitation with a null property shows as a form too.
	ask := tool("bad", "ask-bad")
	err = chromedp.Do(ctx,
		chromedp.Click(css(ask+" > summary")),
		chromedp.Click(css(ask+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(`.elicitation[data-mode="form"] input[name="name"]`)),
		chromedp.WaitVisible(css(`.elicitation[data-mode="form"] textarea[name="x"]`)),
		chromedp.Click(css(`.elicitation .form-actions button.remove`)), // Decline
		chromedp.WaitVisible(css(ask+` .result[data-outcome="ok"]`)),
	)
	if err != nil {
		t.Fatalf("elicitation: %v (problems: %v)", err, problems())
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %v", p)
	}
}
