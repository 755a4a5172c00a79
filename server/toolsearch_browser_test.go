package server

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentmcp/agentmcp/api"
)

// TestDashboardToolSearch: typing in the tool list's search box shows the
// matching tools best first, each with its server and score, and a tool
// found so can be called; emptying the box brings the whole list back.
func TestDashboardToolSearch(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	for _, id := range []string{"one", "two"} {
		_, url := mcpServer(t, id)
		if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: id, URL: url, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	// clear empties the box as a user selecting its text and deleting it.
	clear := func() {
		t.Helper()
		if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`(() => { const i = document.querySelector('#tool-search'); i.value = ''; i.dispatchEvent(new Event('input')); return true; })()`)); err != nil {
			t.Fatal(err)
		}
	}
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
	)
	p.poll("the tools listed", `document.querySelectorAll('#tools details.tool').length === 12`)
	p.do("searching", chromedp.SendKeys(css(`#tool-search`), "sum of two integers"))
	p.poll("the matches shown", `document.querySelectorAll('#tools .tool-match').length > 0 && document.querySelectorAll('#tools .group').length === 0`)
	got, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#tools .tool-match')].map((m) => m.dataset.serverId + "/" + m.dataset.tool)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || got[0] != "one/add" && got[0] != "two/add" || got[1] != "one/add" && got[1] != "two/add" {
		t.Errorf("matches %v, want the two add tools first", got)
	}
	if text := p.text(`#tools .tool-match > span`); !strings.Contains(text, "· score ") {
		t.Errorf("match line %q, want the server and the score", text)
	}
	if status := p.text(`#tool-search-status`); status == "" {
		t.Error("no status line")
	}

	// A tool found by search can be called from the results.
	clear()
	p.do("searching for echo", chromedp.SendKeys(css(`#tool-search`), "echoes text"))
	p.poll("echo first", `(document.querySelector('#tools .tool-match details.tool') || {dataset: {}}).dataset.tool === "echo"`)
	first := `#tools .tool-match:first-child details.tool`
	p.do("calling it",
		chromedp.Click(css(first+" > summary")),
		chromedp.SendKeys(css(first+` form input`), "hello from search"),
		chromedp.Click(css(first+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(first+` .result[data-outcome="ok"]`)),
	)
	if got := p.text(first + ` .result`); !strings.HasPrefix(got, "echo: hello from search") {
		t.Errorf("result %q", got)
	}

	// No match, then an empty box: the whole list again.
	clear()
	p.do("searching for nothing known", chromedp.SendKeys(css(`#tool-search`), "zebra"))
	p.poll("no matches", `document.querySelectorAll('#tools .tool-match').length === 0 && document.querySelector('#tool-search-status').textContent.includes("zebra")`)
	clear()
	p.poll("the whole list back", `document.querySelectorAll('#tools details.tool').length === 12 && document.querySelectorAll('#tools .group').length === 2`)
	p.noProblems()
}
