package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentmcp/agentmcp/api"
)

// TestDashboardAudit: the audit section lists the agent's records newest
// first (a denied call's reason, the server's name as text, never HTML);
// the decision filter narrows them, and the export link asks for the
// same records as JSON lines.
func TestDashboardAudit(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	c := e.client("test", "a")
	ctx := testCtx(t)
	_, url := mcpServer(t, "s")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: `S <img src=x onerror="window.pwned=1">`, URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetPolicy(ctx, api.Policy{Rules: []api.PolicyRule{{Match: api.PolicyMatch{Tools: []string{"s/add"}}, Action: "deny"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "s", "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	var aerr *api.APIError
	if _, err := c.CallTool(ctx, "s", "add", map[string]any{"a": 1, "b": 2}); !errors.As(err, &aerr) || aerr.Code != api.CodeToolDenied {
		t.Fatalf("add: %v, want tool_denied", err)
	}

	rows := `#audit tbody tr`
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(`#audit tbody tr[data-decision="denied"]`)),
	)
	decisions := eval[[]string](p, `[...document.querySelectorAll("#audit tbody tr")].map((r) => r.dataset.decision)`)
	if want := []string{"denied", "allowed", "server_added"}; strings.Join(decisions, " ") != strings.Join(want, " ") {
		t.Errorf("the rows' decisions %v, want %v (newest first)", decisions, want)
	}
	if got := p.text(rows + `[data-decision="denied"]`); !strings.Contains(got, "s/add") || !strings.Contains(got, "the policy's rule 0") {
		t.Errorf("the denied call's row reads %q", got)
	}
	if got := p.text(rows + `[data-decision="server_added"]`); !strings.Contains(got, `<img src=x`) {
		t.Errorf("the server's row reads %q, want its name as text", got)
	}
	if n := eval[int](p, `document.querySelectorAll("#audit img").length`); n != 0 {
		t.Errorf("a server's text became HTML: %d img elements", n)
	}
	if !eval[bool](p, `document.getElementById("no-audit").hidden`) {
		t.Error("'No records' is shown beside records")
	}

	p.do("filtering by decision",
		chromedp.SetValue(css(`#audit-form select[name="decision"]`), "allowed"),
	)
	eval[bool](p, `document.getElementById("audit-form").dispatchEvent(new Event("change"))`)
	p.do("waiting for the allowed calls only",
		chromedp.WaitNotPresent(css(rows+`:not([data-decision="allowed"])`)),
	)
	if n := eval[int](p, `document.querySelectorAll("#audit tbody tr").length`); n != 1 {
		t.Errorf("%d rows of allowed calls, want 1", n)
	}
	href := eval[string](p, `document.getElementById("audit-export").href`)
	if !strings.Contains(href, "/agents/test/a/audit?") || !strings.Contains(href, "decision=allowed") || !strings.Contains(href, "format=jsonl") {
		t.Errorf("export link %q", href)
	}
	p.noProblems()
}
