package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/api"
)

// TestApprovalDecidedBy: the "by" of POST .../approvals/{id} is the
// approval's decidedBy and its audit record's (GET .../audit, JSON lines
// too); a bad one is refused with 400 and the approval stays pending; an
// answer without one names nobody.
func TestApprovalDecidedBy(t *testing.T) {
	t.Parallel()
	e, _ := policyEnv(t)
	putPolicy(t, e, `{"default":"ask","rules":[]}`)
	ask := func() string {
		t.Helper()
		status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"increment","timeoutMs":50}`)
		if status != http.StatusAccepted {
			t.Fatalf("call of an ask tool: %d %s, want 202", status, b)
		}
		var accepted api.ApprovalResponse
		if err := json.Unmarshal(b, &accepted); err != nil {
			t.Fatal(err)
		}
		return accepted.Approval.ID
	}

	first := ask()
	for _, bad := range []string{`"x\u0007"`, `"` + strings.Repeat("a", 129) + `"`, `" x"`, `"a\nb"`, `"\u202e"`} {
		status, _, b := e.do("POST", agentPath+"/approvals/"+first, `{"decision":"approve","by":`+bad+`}`)
		if status != http.StatusBadRequest || !strings.Contains(string(b), api.CodeInvalidRequest) || !strings.Contains(string(b), "by: ") {
			t.Errorf("approve by %s: %d %s, want 400 invalid_request", bad, status, b)
		}
	}
	if got := waitApprovalState(t, e, first, "pending"); got.DecidedBy != "" {
		t.Fatalf("after the refused answers: %+v", got)
	}
	status, _, b := e.do("POST", agentPath+"/approvals/"+first, `{"decision":"approve","by":"Ana Lima"}`)
	var answered api.ApprovalResponse
	if status != http.StatusOK || json.Unmarshal(b, &answered) != nil || answered.Approval.DecidedBy != "Ana Lima" {
		t.Fatalf("approve: %d %s", status, b)
	}
	if got := waitApprovalState(t, e, first, "done"); got.DecidedBy != "Ana Lima" {
		t.Errorf("done approval's decidedBy %q", got.DecidedBy)
	}

	second := ask()
	if status, _, b := e.do("POST", agentPath+"/approvals/"+second, `{"decision":"deny","reason":"no","by":"bo"}`); status != http.StatusOK {
		t.Fatalf("deny: %d %s", status, b)
	}
	third := ask()
	if status, _, b := e.do("POST", agentPath+"/approvals/"+third, `{"decision":"deny"}`); status != http.StatusOK {
		t.Fatalf("deny without by: %d %s", status, b)
	}
	if got := waitApprovalState(t, e, third, "denied"); got.DecidedBy != "" {
		t.Errorf("decidedBy %q of an answer without by", got.DecidedBy)
	}

	want := map[string]string{first: "approved Ana Lima", second: "rejected bo", third: "rejected "}
	check := func(how string, recs []api.AuditRecord) {
		t.Helper()
		got := map[string]string{}
		for _, r := range recs {
			if r.Decision == "approved" || r.Decision == "rejected" {
				got[r.Approval] = r.Decision + " " + r.DecidedBy
			}
		}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: the answer to %s is %q, want %q", how, id, got[id], w)
			}
		}
	}
	status, _, b = e.do("GET", agentPath+"/audit", "")
	var page api.AuditResponse
	if status != http.StatusOK || json.Unmarshal(b, &page) != nil {
		t.Fatalf("audit: %d %s", status, b)
	}
	check("GET .../audit", page.Records)
	if !strings.Contains(string(b), `"decidedBy":"Ana Lima"`) {
		t.Errorf("the page has no decidedBy field: %s", b)
	}
	status, _, b = e.do("GET", agentPath+"/audit?format=jsonl", "")
	if status != http.StatusOK {
		t.Fatalf("audit export: %d %s", status, b)
	}
	var lines []api.AuditRecord
	for line := range strings.Lines(string(b)) {
		var r api.AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		lines = append(lines, r)
	}
	check("the export", lines)
}

// TestPinDecidedBy: the "by" of POST .../pins/{server}/{tool} names who
// decided in the decision's audit record; a bad one is refused with 400
// and decides nothing.
func TestPinDecidedBy(t *testing.T) {
	t.Parallel()
	e, srv := policyEnv(t)
	pollUntil(t, func() bool { return len(getPins(t, e)) == 6 })
	redescribeEcho(srv, "Echoes its text, and more.")
	pollUntil(t, func() bool { p := getPins(t, e); return p[0].Tool == "echo" && p[0].State == "changed" })

	status, _, b := e.do("POST", agentPath+"/pins/s/echo", `{"decision":"accept","by":"a\u0007"}`)
	if status != http.StatusBadRequest || !strings.Contains(string(b), api.CodeInvalidRequest) || !strings.Contains(string(b), "by: ") {
		t.Errorf("accept by a bad name: %d %s, want 400 invalid_request", status, b)
	}
	if p := getPins(t, e)[0]; p.Tool != "echo" || p.State != "changed" {
		t.Fatalf("after the refused decision: %+v", p)
	}
	if status, _, b := e.do("POST", agentPath+"/pins/s/echo", `{"decision":"accept","by":"Ana Lima"}`); status != http.StatusOK {
		t.Fatalf("accept: %d %s", status, b)
	}
	status, _, b = e.do("GET", agentPath+"/audit?decision=pin_accepted", "")
	var page api.AuditResponse
	if status != http.StatusOK || json.Unmarshal(b, &page) != nil {
		t.Fatalf("GET audit: %d %s", status, b)
	}
	if len(page.Records) != 1 || page.Records[0].Tool != "echo" || page.Records[0].DecidedBy != "Ana Lima" {
		t.Errorf("pin_accepted records: %+v, want echo's, by Ana Lima", page.Records)
	}
}
