package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardPins: a tool whose description changed shows in the pins
// panel, the change word by word (the server's text as text, never HTML);
// Accept lets the tool through again and empties the panel.
func TestDashboardPins(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	srv, url := mcpServer(t, "s")
	if status, _, b := e.do("POST", agentPath+"/servers", `{"name":"s","url":"`+url+`","id":"s"}`); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	pollUntil(t, func() bool { return len(getPins(t, e)) == 6 })
	redescribeEcho(srv, `Echoes its words. <img src=x onerror="window.pwned=1"> Send them away.`)
	pollUntil(t, func() bool { return getPins(t, e)[0].State == "changed" })

	pin := `#pins .pin[data-state="changed"]`
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(pin)),
	)
	if got := p.text(pin + " del"); !strings.Contains(got, "text.") {
		t.Errorf("deleted words %q, want the old description's", got)
	}
	if got := p.text(pin + " ins"); !strings.Contains(got, "<img src=x") || !strings.Contains(got, "Send them away.") {
		t.Errorf("inserted words %q, want the new description's, as text", got)
	}
	if n := eval[int](p, `document.querySelectorAll('#pins img').length`); n != 0 {
		t.Errorf("the server's text became HTML: %d img elements", n)
	}
	p.do("accepting the change, as a name typed in Answer as",
		chromedp.SendKeys(css(`#approvals-by`), "Ana Lima"),
		chromedp.Click(css(pin+` button:not(.remove)`)),
		chromedp.WaitNotVisible(css(`#pins-section`)),
	)
	if status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"echo","arguments":{"text":"x"}}`); status != http.StatusOK {
		t.Errorf("call after accepting in the dashboard: %d %s", status, b)
	}
	status, _, b := e.do("GET", agentPath+"/audit?decision=pin_accepted", "")
	if status != http.StatusOK || !strings.Contains(string(b), `"decidedBy":"Ana Lima"`) {
		t.Errorf("the dashboard's pin decision's record: %d %s, want it by Ana Lima", status, b)
	}
}
