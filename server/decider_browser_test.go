package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentmcp/agentmcp/api"
)

// TestDashboardDecidedBy: the name in the approvals' "Answer as" field is
// sent with an answer (the approval's decidedBy), shown as text in the
// answered row and the audit log's By column, and remembered by the
// browser across a reload.
func TestDashboardDecidedBy(t *testing.T) {
	p := newPage(t)
	e, _ := policyEnv(t)
	putPolicy(t, e, `{"default":"ask","rules":[]}`)
	status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"increment","timeoutMs":50}`)
	var accepted api.ApprovalResponse
	if status != http.StatusAccepted || json.Unmarshal(b, &accepted) != nil {
		t.Fatalf("call of an ask tool: %d %s, want 202", status, b)
	}
	id := accepted.Approval.ID
	const name = `Ana <b>Lima</b>`
	row := `#approvals .approval[data-id="` + id + `"]`
	p.do("answering as a name",
		chromedp.Navigate(e.ts.URL+"/?agent=test/a"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(row+` button.approve`)),
		chromedp.SendKeys(css(`#approvals-by`), name),
		chromedp.Click(css(row+` button.approve`)),
		chromedp.WaitVisible(css(`#approvals-recent tr[data-id="`+id+`"]`)),
	)
	if got := waitApprovalState(t, e, id, "done"); got.DecidedBy != name {
		t.Fatalf("the approval's decidedBy %q, want %q", got.DecidedBy, name)
	}
	p.poll("the answered row names who", `(document.querySelector('#approvals-recent tr[data-id="`+id+`"] td.approval-by') || {}).textContent === `+jsString(name))
	p.do("the audit log", chromedp.Reload(), chromedp.WaitVisible(css(`#status[data-status="open"]`)))
	p.poll("the audit log's By column", `[...document.querySelectorAll('#audit tr[data-decision="approved"] td.decided-by')].some((td) => td.textContent === `+jsString(name)+`)`)
	if n := eval[float64](p, `document.querySelectorAll('#approvals-recent b, #audit b').length`); n != 0 {
		t.Errorf("the name made %v elements", n)
	}
	if got := eval[string](p, `document.getElementById('approvals-by').value`); got != name {
		t.Errorf("the name after a reload: %q, want %q", got, name)
	}
	p.noProblems()
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
