package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// TestDashboardOAuth: a server behind OAuth shows Authorize; the popup
// goes through the (fake, auto-approving) authorization server and back to
// the agent's callback, closes itself, and the main page flips to ready
// from its live stream, without a reload.
func TestDashboardOAuth(t *testing.T) {
	ctx, problems := browser(t)
	start := time.Now()
	as := oauthtest.NewServer(t, nil)
	srv := mcptest.NewServer("private")
	res := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }), nil)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})

	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	row := `#servers tr[data-server-id="private"]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.SendKeys(css(`#add-form input[name="name"]`), "private"),
		chromedp.SendKeys(css(`#add-form input[name="url"]`), res.URL),
		chromedp.SendKeys(css(`#add-form input[name="id"]`), "private"),
		chromedp.Click(css(`#add-form button[type="submit"]`)),
		chromedp.WaitVisible(css(row+` .state[data-state="authenticating"]`)),
		chromedp.WaitVisible(css(`#add-result[data-outcome="ok"]`)),
	)
	if err != nil {
		t.Fatalf("adding the server: %v (problems: %v)", err, problems())
	}
	out, _ := chromedp.Run(ctx, chromedp.Text(css(`#add-result`)))
	if out != "Added as private: sign-in needed (use Authorize)." {
		t.Errorf("add result %q", out)
	}
	// authenticating is a call to action, not a failure: it reads "sign-in
	// needed", beside Authorize, in another colour than failed.
	look, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const s = document.querySelector('`+row+` .state');
		const failed = document.createElement("span");
		failed.className = "state";
		failed.dataset.state = "failed";
		document.body.append(failed);
		const out = [s.textContent, String(getComputedStyle(s).color === getComputedStyle(failed).color),
			document.querySelector('`+row+` button.authorize').textContent];
		failed.remove();
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"sign-in needed", "false", "Authorize"}, look); diff != "" {
		t.Errorf("the authenticating row (-want +got):\n%s", diff)
	}
	// The popup is a new page target; it should go away by itself.
	wctx, cancelWait := context.WithTimeout(ctx, 30*time.Second)
	defer cancelWait()
	created := chromedp.BrowserEvents(wctx, target.TargetCreated)
	destroyed := chromedp.BrowserEvents(wctx, target.TargetDestroyed)
	err = chromedp.Do(ctx,
		chromedp.Click(css(row+` button.authorize`)),
		chromedp.WaitVisible(css(row+` .state[data-state="ready"]`)),
		chromedp.WaitVisible(css(`details.tool[data-server-id="private"][data-tool="echo"]`)),
		chromedp.WaitNotPresent(css(row+` button.authorize`)),
	)
	if err != nil {
		t.Fatalf("authorizing: %v (problems: %v)", err, problems())
	}
	if n := len(as.AuthorizationRequests()); n != 1 {
		t.Errorf("%d authorization requests, want 1", n)
	}
	// The popup closed itself after the success.
	var popup target.ID
	for ev, err := range created {
		if err != nil {
			t.Fatalf("no popup opened: %v", err)
		}
		if ev.TargetInfo.Type == "page" {
			popup = ev.TargetInfo.TargetID
			break
		}
	}
	for ev, err := range destroyed {
		if err != nil {
			t.Fatalf("the popup %s did not close: %v", popup, err)
		}
		if ev.TargetID == popup {
			break
		}
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %v", p)
	}
	t.Logf("OAuth browser test took %v", time.Since(start).Round(time.Millisecond))
}

// TestDashboardOAuthDenied: a refused authorization fails the server, and
// the dashboard shows the authorization server's message as the text it
// was (the agent stores it HTML-escaped), never as markup.
func TestDashboardOAuthDenied(t *testing.T) {
	ctx, problems := browser(t)
	as := oauthtest.NewServer(t, nil)
	const reason = `User said "no" <b id="injected">to</b> Tom's & Jerry's app`
	as.Deny(reason)
	srv := mcptest.NewServer("denied")
	res := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }), nil)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})

	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	row := `#servers tr[data-server-id="denied"]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.SendKeys(css(`#add-form input[name="name"]`), "denied"),
		chromedp.SendKeys(css(`#add-form input[name="url"]`), res.URL),
		chromedp.SendKeys(css(`#add-form input[name="id"]`), "denied"),
		chromedp.Click(css(`#add-form button[type="submit"]`)),
		chromedp.WaitVisible(css(row+` button.authorize`)),
		chromedp.Click(css(row+` button.authorize`)),
		chromedp.WaitVisible(css(row+` .state[data-state="failed"]`)),
	)
	if err != nil {
		t.Fatalf("authorizing: %v (problems: %v)", err, problems())
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(css(row+` td.error`)))
	if err != nil {
		t.Fatal(err)
	}
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#injected").length`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, reason) {
		t.Errorf("the dashboard shows the error as %q, want it to contain %q", shown, reason)
	}
	if injected != 0 {
		t.Errorf("the error's markup became %d element(s) in the page", injected)
	}
	// The stored error is still escaped, for pages that insert it as HTML.
	st, err := e.client("test", "a").MCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Servers["denied"].Error; got == nil || strings.Contains(*got, "<b") {
		t.Errorf("stored error %v is not HTML-escaped", got)
	}
}
