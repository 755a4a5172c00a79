package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
)

// auditScenario adds server s (at url) to the agent of c, sets a policy
// that denies add and asks about increment, and makes three calls (echo
// ok, fail isError, add denied) and one that a person approves. It
// returns the approval's id.
func auditScenario(t *testing.T, c *client.Client, url string) string {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "S", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetPolicy(ctx, api.Policy{Rules: []api.PolicyRule{
		{Match: api.PolicyMatch{Tools: []string{"s/add"}}, Action: "deny"},
		{Match: api.PolicyMatch{Tools: []string{"s/increment"}}, Action: "ask"},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "s", "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.CallTool(ctx, "s", "fail", nil); err != nil || !strings.Contains(string(res), `"isError":true`) {
		t.Fatalf("fail: %s, %v", res, err)
	}
	var aerr *api.APIError
	if _, err := c.CallTool(ctx, "s", "add", map[string]any{"a": 1, "b": 2}); !errors.As(err, &aerr) || aerr.Code != api.CodeToolDenied {
		t.Fatalf("add: %v, want tool_denied", err)
	}
	res, err := http.Post(c.URL()+"/servers/s/tools/call", "application/json", strings.NewReader(`{"name":"increment","timeoutMs":50}`))
	if err != nil {
		t.Fatal(err)
	}
	var accepted api.ApprovalResponse
	err = json.NewDecoder(res.Body).Decode(&accepted)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("increment: %d %+v %v", res.StatusCode, accepted, err)
	}
	id := accepted.Approval.ID
	if _, err := c.AnswerApproval(ctx, id, api.AnswerApprovalRequest{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, func() bool {
		ap, err := c.Approval(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ap.State == "done"
	})
	return id
}

// auditLine is what the acceptance test compares of a record.
type auditLine struct{ Server, Tool, Caller, Decision, Outcome, Approval string }

func auditLines(recs []api.AuditRecord) []auditLine {
	out := []auditLine{}
	for _, r := range recs {
		out = append(out, auditLine{r.Server, r.Tool, r.Caller, r.Decision, r.Outcome, r.Approval})
	}
	return out
}

func wantAuditLines(approval string) []auditLine {
	return []auditLine{
		{"s", "", "api", "server_added", "", ""},
		{"s", "echo", "api", "allowed", "ok", ""},
		{"s", "fail", "api", "allowed", "is_error", ""},
		{"s", "add", "api", "denied", "", ""},
		{"s", "increment", "api", "asked", "", approval},
		{"s", "increment", "api", "approved", "", approval},
		{"s", "increment", "api", "allowed", "ok", approval},
	}
}

// TestAuditAPI: three calls (ok, isError, denied) and one approved give
// their records in order through GET .../audit, page by page with the
// cursor either way, as JSON lines, filtered; and again after a restart.
func TestAuditAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	_, url := mcpServer(t, "s")
	c := e.client("test", "a")
	approval := auditScenario(t, c, url)
	want := wantAuditLines(approval)
	ctx := testCtx(t)

	page, err := c.Audit(ctx, client.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, auditLines(page.Records)); diff != "" {
		t.Fatalf("records (-want +got):\n%s", diff)
	}
	if page.More || page.Cursor == "" {
		t.Errorf("page: more %v, cursor %q", page.More, page.Cursor)
	}
	if r := page.Records[1]; r.ServerName != "S" || r.ArgumentsHash == "" || r.Arguments != nil || r.DurationMS <= 0 || r.Time.IsZero() {
		t.Errorf("the echo call's record: %+v", r)
	}
	// Pages of 2, oldest first and newest first, give every record once.
	for _, newest := range []bool{false, true} {
		var got []api.AuditRecord
		q := client.AuditQuery{Limit: 2, NewestFirst: newest}
		for range 10 {
			p, err := c.Audit(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, p.Records...)
			if !p.More {
				break
			}
			q.Cursor = p.Cursor
		}
		w := want
		if newest {
			w = nil
			for i := len(want) - 1; i >= 0; i-- {
				w = append(w, want[i])
			}
		}
		if diff := cmp.Diff(w, auditLines(got)); diff != "" {
			t.Errorf("paged by 2, newest first %v (-want +got):\n%s", newest, diff)
		}
	}
	// A follower's cursor: nothing new, then the next call's record.
	p, err := c.Audit(ctx, client.AuditQuery{Cursor: page.Cursor})
	if err != nil || len(p.Records) != 0 || p.Cursor != page.Cursor {
		t.Fatalf("after the last cursor: %+v, %v", p, err)
	}
	if _, err := c.CallTool(ctx, "s", "echo", map[string]any{"text": "again"}); err != nil {
		t.Fatal(err)
	}
	if p, err = c.Audit(ctx, client.AuditQuery{Cursor: page.Cursor}); err != nil || len(p.Records) != 1 || p.Records[0].Tool != "echo" {
		t.Fatalf("after the last cursor, a call later: %+v, %v", p, err)
	}
	want = append(want, auditLine{"s", "echo", "api", "allowed", "ok", ""})

	// Filters.
	p, err = c.Audit(ctx, client.AuditQuery{Decision: "allowed", Tool: "increment"})
	if err != nil || len(p.Records) != 1 || p.Records[0].Approval != approval {
		t.Fatalf("allowed increment: %+v, %v", p, err)
	}
	for _, bad := range []string{"?decision=maybe", "?limit=0", "?since=yesterday", "?cursor=x", "?order=up", "?what=1"} {
		if status, _, b := e.do("GET", agentPath+"/audit"+bad, ""); status != http.StatusBadRequest || apiError(t, b).Code != api.CodeInvalidRequest {
			t.Errorf("GET .../audit%s: %d %s, want 400 invalid_request", bad, status, b)
		}
	}

	// JSON lines, by ?format= or Accept.
	var lines []api.AuditRecord
	for rec, err := range c.AuditExport(ctx, client.AuditQuery{}) {
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, rec)
	}
	if diff := cmp.Diff(want, auditLines(lines)); diff != "" {
		t.Fatalf("JSON lines (-want +got):\n%s", diff)
	}
	status, hdr, b := e.do("GET", agentPath+"/audit?limit=3", "", "Accept: application/x-ndjson")
	if status != http.StatusOK || hdr.Get("Content-Type") != api.MediaTypeJSONLines || strings.Count(string(b), "\n") != 3 {
		t.Fatalf("Accept: application/x-ndjson, limit 3: %d %s %q", status, hdr.Get("Content-Type"), b)
	}

	e.stop()
	e = openEnv(t, e.path, nil)
	got, err := e.client("test", "a").Audit(ctx, client.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, auditLines(got.Records)); diff != "" {
		t.Fatalf("records after a restart (-want +got):\n%s", diff)
	}
}

// TestAuditCluster: two replicas on one Postgres store: the records of
// calls made through one are read through the other.
func TestAuditCluster(t *testing.T) {
	t.Parallel()
	dsn := pg.Database(t)
	_, url := mcpServer(t, "s")
	a, b := newReplica(t, dsn), newReplica(t, dsn)
	approval := auditScenario(t, a.client("test", "x"), url)
	want := wantAuditLines(approval)
	pollUntil(t, func() bool {
		p, err := b.client("test", "x").Audit(testCtx(t), client.AuditQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return cmp.Equal(want, auditLines(p.Records))
	})
}
