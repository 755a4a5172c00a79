package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentmcp/agentmcp/api"
)

// hostile is an argument that would run script if the page parsed it as
// HTML.
const hostile = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`

// pendingApproval waits for a pending approval of tool in the list and
// returns it.
func pendingApproval(t *testing.T, e *env, tool string) api.Approval {
	t.Helper()
	var found api.Approval
	pollUntil(t, func() bool {
		_, _, b := e.do("GET", agentPath+"/approvals", "")
		var list api.ApprovalsResponse
		json.Unmarshal(b, &list)
		for _, ap := range list.Approvals {
			if ap.State == "pending" && ap.Tool == tool {
				found = ap
				return true
			}
		}
		return false
	})
	return found
}

// TestDashboardApprovals: calls of ask tools made through the API are
// listed in the approval queue with their arguments as text (a hostile
// argument stays text); Approve runs the call once and the row turns
// done with its result; Deny with a reason reaches the waiting caller;
// Approve and remember adds an allow rule, which the policy section and
// the tool's mark then show; a call from the page's tool form waits in
// the queue and, approved, gets its result.
func TestDashboardApprovals(t *testing.T) {
	p := newPage(t)
	e, srv := policyEnv(t)
	putPolicy(t, e, `{"default":"ask","rules":[]}`)

	status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"increment","timeoutMs":50}`)
	if status != http.StatusAccepted {
		t.Fatalf("call of an ask tool: %d %s, want 202", status, b)
	}
	var accepted api.ApprovalResponse
	if err := json.Unmarshal(b, &accepted); err != nil {
		t.Fatal(err)
	}
	first := accepted.Approval.ID

	p.do("the queue",
		chromedp.Navigate(e.ts.URL+"/?agent=test/a"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(`#approvals .approval[data-id="`+first+`"] button.approve`)),
	)
	row := `#approvals .approval[data-id="` + first + `"]`
	if got := p.text(row + ` .approval-tool`); got != "increment" {
		t.Errorf("tool shown: %q", got)
	}
	if got := p.text(row + ` .approval-caller`); got != "api" {
		t.Errorf("caller shown: %q", got)
	}
	p.poll("the tools' marks", `(document.querySelector('details.tool[data-server-id="s"][data-tool="increment"] .policy-mark') || {}).textContent === "ask · default"`)
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("the tool ran %d times before approval", n)
	}
	p.do("approving", chromedp.Click(css(row+` button.approve`)))
	got := waitApprovalState(t, e, first, "done")
	if !strings.Contains(string(got.Result), `"text":"1"`) {
		t.Fatalf("result %s", got.Result)
	}
	p.do("the answered row", chromedp.WaitVisible(css(`#approvals-recent tr[data-id="`+first+`"][data-state="done"]`)))
	p.poll("its result", `document.querySelector('#approvals-recent tr[data-id="`+first+`"] pre.approval-outcome').textContent === "1"`)
	if n := srv.Increments.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}

	// A caller that waits, with a hostile argument: shown as text, denied
	// with a reason the caller gets.
	type answer struct {
		status int
		body   []byte
	}
	waiting := make(chan answer, 1)
	args, _ := json.Marshal(map[string]any{"name": "echo", "arguments": map[string]string{"text": hostile}, "timeoutMs": 60000})
	go func() {
		status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", string(args))
		waiting <- answer{status, b}
	}()
	second := pendingApproval(t, e, "echo").ID
	row = `#approvals .approval[data-id="` + second + `"]`
	p.do("the hostile one", chromedp.WaitVisible(css(row+` pre.approval-args`)))
	shown := p.text(row + ` pre.approval-args`)
	var parsed map[string]string
	if err := json.Unmarshal([]byte(shown), &parsed); err != nil || parsed["text"] != hostile {
		t.Errorf("arguments shown as %q (%v), want the JSON with the text as it is", shown, err)
	}
	if n := eval[float64](p, `document.querySelectorAll('#approvals img, #approvals script').length`); n != 0 {
		t.Errorf("the arguments made %v elements", n)
	}
	if v := eval[bool](p, `window.__pwned === undefined`); !v {
		t.Error("the arguments ran script")
	}
	p.screenshot("dashboard-approvals.png")
	p.do("denying",
		chromedp.SendKeys(css(row+` input.approval-reason`), "not on production"),
		chromedp.Click(css(row+` button.deny`)),
		chromedp.WaitVisible(css(`#approvals-recent tr[data-id="`+second+`"][data-state="denied"]`)),
	)
	a := <-waiting
	if a.status != http.StatusForbidden || !strings.Contains(string(a.body), api.CodeApprovalDenied) || !strings.Contains(string(a.body), "not on production") {
		t.Fatalf("the waiting call got %d %s", a.status, a.body)
	}
	if got := waitApprovalState(t, e, second, "denied"); got.Reason != "not on production" {
		t.Errorf("denied approval's reason %q", got.Reason)
	}

	// Approve and remember: an allow rule for the tool.
	if status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"increment","timeoutMs":50}`); status != http.StatusAccepted {
		t.Fatalf("second call: %d %s", status, b)
	}
	third := pendingApproval(t, e, "increment").ID
	row = `#approvals .approval[data-id="` + third + `"]`
	p.do("approving and remembering",
		chromedp.WaitVisible(css(row+` button.approve-remember`)),
		chromedp.Click(css(row+` button.approve-remember`)),
		chromedp.WaitVisible(css(`#approvals-recent tr[data-id="`+third+`"][data-state="done"]`)),
	)
	if n := srv.Increments.Load(); n != 2 {
		t.Fatalf("the tool ran %d times, want 2", n)
	}
	_, _, b = e.do("GET", agentPath+"/policy", "")
	var pol api.Policy
	if err := json.Unmarshal(b, &pol); err != nil {
		t.Fatal(err)
	}
	remembered := false
	for _, r := range pol.Rules {
		remembered = remembered || (r.Action == "allow" && len(r.Match.Tools) == 1 && r.Match.Tools[0] == "s/increment")
	}
	if !remembered {
		t.Fatalf("policy after remember: %s", b)
	}
	p.poll("the policy section shows the rule", `[...document.querySelectorAll('#policy-summary li[data-action="allow"]')].some((li) => li.textContent.includes("s/increment"))`)
	p.poll("the tool's mark", `/^allow · rule \d+$/.test((document.querySelector('details.tool[data-server-id="s"][data-tool="increment"] .policy-mark') || {}).textContent)`)

	// A call from the page's own tool form waits in the queue; approved,
	// its result reaches the form.
	echo := `details.tool[data-server-id="s"][data-tool="echo"]`
	p.do("calling from the page",
		chromedp.Click(css(echo+` > summary`)),
		chromedp.SendKeys(css(echo+` input[name="text"]`), "from the page"),
		chromedp.Click(css(echo+` button[type="submit"]`)),
	)
	fourth := pendingApproval(t, e, "echo").ID
	row = `#approvals .approval[data-id="` + fourth + `"]`
	p.do("approving the page's call",
		chromedp.WaitVisible(css(row+` button.approve`)),
		chromedp.Click(css(row+` button.approve`)),
	)
	p.poll("its result in the form", `(document.querySelector('`+echo+` .result[data-outcome="ok"]') || {textContent: ""}).textContent.includes("echo: from the page")`)
	p.noProblems()
}

// TestDashboardPolicy: the policy section shows the policy in force, and
// the tool list each tool's effective action (a tool denied to the API,
// which the list leaves out, is named under it); a preset fills the editor and Save puts it in force (the tools' marks
// follow); a bad policy shows the server's 400 and changes nothing.
func TestDashboardPolicy(t *testing.T) {
	p := newPage(t)
	e, _ := policyEnv(t)
	putPolicy(t, e, `{"rules":[{"match":{"tools":["s/increment"]},"action":"deny"}]}`)
	p.do("the policy",
		chromedp.Navigate(e.ts.URL+"/?agent=test/a"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(`#policy-summary li[data-rule="0"][data-action="deny"]`)),
	)
	p.poll("a denied tool, named under the list", `(document.querySelector('#tools-denied .denied-tool[data-server-id="s"][data-tool="increment"] .policy-mark') || {}).textContent === "deny · rule 0"`)
	if n := eval[float64](p, `document.querySelectorAll('details.tool[data-tool="increment"]').length`); n != 0 {
		t.Errorf("the denied tool is in the list (%v)", n)
	}
	p.poll("an allowed tool's mark", `(document.querySelector('details.tool[data-server-id="s"][data-tool="echo"] .policy-mark') || {}).textContent === "allow · default"`)

	eval[bool](p, `(() => { const s = document.querySelector('#policy-form select[name="preset"]'); s.value = "cautious"; return s.dispatchEvent(new Event("change")); })()`)
	p.poll("the editor holds it", `document.querySelector('#policy-form textarea').value.includes('"readOnlyHint": true')`)
	p.do("saving", chromedp.Click(css(`#policy-form button[type="submit"]`)), chromedp.WaitVisible(css(`#policy-status[data-state="saved"]`)))
	_, _, b := e.do("GET", agentPath+"/policy", "")
	if want := `{"default":"ask","rules":[{"match":{"annotations":{"readOnlyHint":true}},"action":"allow"},{"match":{"annotations":{"destructiveHint":true}},"action":"ask"}]}`; strings.TrimSpace(string(b)) != want {
		t.Fatalf("policy after the preset: %s, want %s", b, want)
	}
	p.poll("the marks follow", `(document.querySelector('details.tool[data-server-id="s"][data-tool="echo"] .policy-mark') || {}).textContent === "allow · rule 0"`+
		` && (document.querySelector('details.tool[data-server-id="s"][data-tool="increment"] .policy-mark') || {}).textContent === "ask · rule 1"`)

	p.do("a bad policy",
		chromedp.SetValue(css(`#policy-form textarea`), `{"rules":[{"match":{},"action":"block"}]}`),
		chromedp.Click(css(`#policy-form button[type="submit"]`)),
		chromedp.WaitVisible(css(`#policy-status[data-state="error"]`)),
	)
	if got := p.text(`#policy-status`); !strings.Contains(got, `policy rule 0: action: "block"`) {
		t.Errorf("status %q, want the server's 400", got)
	}
	_, _, b2 := e.do("GET", agentPath+"/policy", "")
	if string(b2) != string(b) {
		t.Errorf("a refused policy changed it: %s", b2)
	}
	// The refused save is the page's only problem (the browser logs the
	// 400 of PUT .../policy).
	if pr := p.problems(); len(pr) != 1 || !strings.Contains(pr[0], "400") || !strings.Contains(pr[0], "/policy") {
		t.Errorf("the page reported problems: %v; want the refused save's 400 only", pr)
	}
}
