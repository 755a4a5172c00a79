package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
)

// TestDashboardExposure: the dashboard shows the agent's MCP endpoint and
// edits its exposure rules: a save reaches the API (and the endpoint's
// lists), a bad pattern shows the server's reason and changes nothing.
func TestDashboardExposure(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	_, url := mcpServer(t, "s")
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "s", URL: url, ID: "docs"}); err != nil {
		t.Fatal(err)
	}
	if status, _, b := e.do("PUT", agentPath+"/exposure", `{"allow":["docs"]}`); status != 200 {
		t.Fatalf("PUT exposure: %d %s", status, b)
	}
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(`#exposure-status[data-state="loaded"]`)),
	)
	if got := p.text("#mcp-endpoint"); got != e.ts.URL+agentPath+"/mcp" {
		t.Errorf("endpoint shown: %q, want %q", got, e.ts.URL+agentPath+"/mcp")
	}
	if got := eval[string](p, `document.querySelector('#exposure-form [name=allow]').value`); got != "docs" {
		t.Errorf("allow rules shown: %q, want the stored ones", got)
	}
	setRules(p, "", "docs/echo\n\n  */delete_*  \n")
	p.do("saving rules",
		chromedp.Click(css(`#exposure-form button[type=submit]`)),
		chromedp.WaitVisible(css(`#exposure-status[data-state="saved"]`)),
	)
	if diff := cmp.Diff(api.Exposure{Allow: []string{}, Deny: []string{"docs/echo", "*/delete_*"}}, exposureOf(t, e)); diff != "" {
		t.Errorf("rules after the save (-want +got):\n%s", diff)
	}
	p.noProblems()
	setRules(p, "", "docs/")
	p.do("saving a bad pattern",
		chromedp.Click(css(`#exposure-form button[type=submit]`)),
		chromedp.WaitVisible(css(`#exposure-status[data-state="error"]`)),
	)
	if got := p.text("#exposure-status"); !strings.Contains(got, `deny pattern "docs/": no tool part`) {
		t.Errorf("error shown: %q", got)
	}
	if got := exposureOf(t, e); !cmp.Equal(got.Deny, []string{"docs/echo", "*/delete_*"}) {
		t.Errorf("a refused save changed the rules: %+v", got)
	}
	p.screenshot("dashboard-exposure.png")
	// The refused save is the one problem the page reports (the browser
	// logs the 400).
	if pr := p.problems(); len(pr) != 1 || !strings.Contains(pr[0], "400") {
		t.Errorf("the page reported problems: %v; want the refused save's 400 only", pr)
	}
}

// exposureOf reads the rules of agentPath through the API.
func exposureOf(t *testing.T, e *env) api.Exposure {
	t.Helper()
	var c *client.Client = e.client("test", "a")
	ex, err := c.Exposure(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return api.Exposure{Allow: ex.Allow, Deny: ex.Deny}
}

// setRules types the rules into the editor, as a user would.
func setRules(p *page, allow, deny string) {
	p.t.Helper()
	js := fmt.Sprintf(`(() => {
		const f = document.getElementById("exposure-form");
		for (const [name, v] of [["allow", %q], ["deny", %q]]) {
			f.elements[name].value = v;
			f.elements[name].dispatchEvent(new Event("input"));
		}
		return true;
	})()`, allow, deny)
	eval[bool](p, js)
}
