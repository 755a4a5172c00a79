package server

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/mcptest"
	"github.com/agentmcp/agentmcp/internal/oauthtest"
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
	if out != "Added as private: authorization needed (use Authorize)." {
		t.Errorf("add result %q", out)
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
