package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

const documentedPolicy = `{"default":"allow","rules":[{"match":{"tools":["github/delete_*"]},"action":"deny"},{"match":{"annotations":{"destructiveHint":true}},"action":"ask"},{"match":{"tools":["search/*"],"callers":["llm"]},"action":"allow","rate":"10/m"}]}`

// policyEnv is a server whose agent has server "s" (mcptest: echo is
// read-only, increment counts its calls).
func policyEnv(t *testing.T) (*env, *mcptest.Server) {
	t.Helper()
	e := newEnv(t, nil)
	srv, url := mcpServer(t, "s")
	if status, _, b := e.do("POST", agentPath+"/servers", `{"name":"s","url":"`+url+`","id":"s"}`); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	return e, srv
}

func putPolicy(t *testing.T, e *env, doc string) {
	t.Helper()
	if status, _, b := e.do("PUT", agentPath+"/policy", doc); status != http.StatusOK {
		t.Fatalf("PUT policy %s: %d %s", doc, status, b)
	}
}

// TestPolicyAPI: GET and PUT .../policy read and replace the policy in
// its documented form, which is stored (it survives a restart); a bad one
// gets a 400 that names the rule and changes nothing.
func TestPolicyAPI(t *testing.T) {
	t.Parallel()
	e, _ := policyEnv(t)
	if status, _, b := e.do("GET", agentPath+"/policy", ""); status != http.StatusOK || string(b) != `{"rules":[]}`+"\n" {
		t.Fatalf("policy of a new agent: %d %s", status, b)
	}
	putPolicy(t, e, documentedPolicy)
	for _, tt := range []struct{ body, want string }{
		{`{"rules":[{"match":{},"action":"block"}]}`, `policy rule 0: action: \"block\"`},
		{`{"rules":[{"match":{"tools":["x/"]},"action":"deny"}]}`, `match.tools[0]`},
		{`{"rules":[{"match":{},"action":"allow","rate":"10/min"}]}`, `the period is s, m or h`},
		{`{"rules":[{"match":{"tool":["x"]},"action":"deny"}]}`, `unknown field`},
		{`{"default":"maybe","rules":[]}`, `policy default`},
	} {
		status, _, b := e.do("PUT", agentPath+"/policy", tt.body)
		if status != http.StatusBadRequest || !strings.Contains(string(b), tt.want) {
			t.Errorf("PUT %s: %d %s, want 400 saying %q", tt.body, status, b, tt.want)
		}
	}
	e.stop()
	e = openEnv(t, e.path, nil)
	status, _, b := e.do("GET", agentPath+"/policy", "")
	if status != http.StatusOK || strings.TrimSpace(string(b)) != documentedPolicy {
		t.Fatalf("policy after a restart: %d %s", status, b)
	}
}

// TestPolicyDeniedEverywhere: a denied tool is absent from the API's
// tools and the gateway's list, and refused by name through the API (403
// tool_denied) and the gateway (a result the model reads); the server
// never sees the call.
func TestPolicyDeniedEverywhere(t *testing.T) {
	t.Parallel()
	e, srv := policyEnv(t)
	ctx := testCtx(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.ts.URL + agentPath + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	gatewayTools := func() []string {
		tl, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range tl.Tools {
			names = append(names, tool.Name)
		}
		return names
	}
	if !slices.Contains(gatewayTools(), "tool_s_increment") {
		t.Fatalf("the gateway lists %v before the policy", gatewayTools())
	}
	putPolicy(t, e, `{"rules":[{"match":{"tools":["s/increment"]},"action":"deny"}]}`)

	status, _, b := e.do("GET", agentPath+"/tools", "")
	if status != http.StatusOK || strings.Contains(string(b), `"increment"`) || !strings.Contains(string(b), `"echo"`) {
		t.Errorf("API tools: %d %s", status, b)
	}
	status, _, b = e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"increment"}`)
	if status != http.StatusForbidden || !strings.Contains(string(b), api.CodeToolDenied) {
		t.Errorf("API call: %d %s, want 403 tool_denied", status, b)
	}
	pollUntil(t, func() bool { return !slices.Contains(gatewayTools(), "tool_s_increment") })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_s_increment", Arguments: map[string]any{}})
	if err == nil && (res == nil || !res.IsError) {
		t.Errorf("gateway call of a denied tool: %+v", res)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("the denied tool ran %d times", n)
	}
}

// TestPolicyRateAPI: the 11th call in a minute of a 10/m tool gets 429
// with Retry-After.
func TestPolicyRateAPI(t *testing.T) {
	t.Parallel()
	e, _ := policyEnv(t)
	putPolicy(t, e, `{"rules":[{"match":{"tools":["s/echo"]},"action":"allow","rate":"10/m"}]}`)
	for i := range 10 {
		if status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"echo","arguments":{"text":"x"}}`); status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, status, b)
		}
	}
	status, hdr, b := e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"echo","arguments":{"text":"x"}}`)
	if status != http.StatusTooManyRequests || !strings.Contains(string(b), api.CodeRateLimited) || hdr.Get("Retry-After") == "" {
		t.Fatalf("11th call: %d %v %s, want 429 with Retry-After", status, hdr, b)
	}
}

// TestApprovalsAPI: an ask tool through the API answers 202 with the
// approval; it is listed and got by id; approved, it runs once (a second
// approve changes nothing) and its result is in the approval; a replay
// with other arguments is refused; a deny reaches a waiting caller with
// its reason.
func TestApprovalsAPI(t *testing.T) {
	t.Parallel()
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
	ap := accepted.Approval
	if ap.ID == "" || ap.Server != "s" || ap.Tool != "increment" || ap.State != "pending" || ap.Caller != "api" || string(ap.Arguments) != "{}" ||
		ap.ExpiresAt.Sub(ap.RequestedAt) != 24*time.Hour {
		t.Fatalf("approval %s", b)
	}
	status, _, b = e.do("GET", agentPath+"/approvals", "")
	if status != http.StatusOK || !strings.Contains(string(b), ap.ID) {
		t.Fatalf("approvals: %d %s", status, b)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatal("the tool ran before approval")
	}
	if status, _, b = e.do("POST", agentPath+"/approvals/"+ap.ID, `{"decision":"approve"}`); status != http.StatusOK {
		t.Fatalf("approve: %d %s", status, b)
	}
	got := waitApprovalState(t, e, ap.ID, "done")
	if !strings.Contains(string(got.Result), `"text":"1"`) {
		t.Fatalf("result %s", got.Result)
	}
	if status, _, b = e.do("POST", agentPath+"/approvals/"+ap.ID, `{"decision":"approve"}`); status != http.StatusOK {
		t.Fatalf("second approve: %d %s", status, b)
	}
	status, _, b = e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"increment","arguments":{"n":2},"approval":"`+ap.ID+`"}`)
	if status != http.StatusConflict || !strings.Contains(string(b), api.CodeApprovalMismatch) {
		t.Fatalf("replay with other arguments: %d %s", status, b)
	}
	status, _, b = e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"increment","approval":"`+ap.ID+`"}`)
	if status != http.StatusOK || !strings.Contains(string(b), `"text":"1"`) {
		t.Fatalf("replay: %d %s", status, b)
	}
	if n := srv.Increments.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}

	type answer struct {
		status int
		body   []byte
	}
	waiting := make(chan answer, 1)
	go func() {
		status, _, b := e.do("POST", agentPath+"/servers/s/tools/call", `{"name":"increment","timeoutMs":60000}`)
		waiting <- answer{status, b}
	}()
	var pending api.Approval
	pollUntil(t, func() bool {
		_, _, b := e.do("GET", agentPath+"/approvals", "")
		var list api.ApprovalsResponse
		json.Unmarshal(b, &list)
		if len(list.Approvals) > 0 && list.Approvals[0].State == "pending" {
			pending = list.Approvals[0]
			return true
		}
		return false
	})
	if status, _, b = e.do("POST", agentPath+"/approvals/"+pending.ID, `{"decision":"deny","reason":"not today"}`); status != http.StatusOK {
		t.Fatalf("deny: %d %s", status, b)
	}
	a := <-waiting
	if a.status != http.StatusForbidden || !strings.Contains(string(a.body), api.CodeApprovalDenied) || !strings.Contains(string(a.body), "not today") {
		t.Fatalf("the waiting call got %d %s", a.status, a.body)
	}
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"decision":"maybe"}`, http.StatusBadRequest},
		{`{"decision":"approve"}`, http.StatusConflict},
	} {
		if status, _, b := e.do("POST", agentPath+"/approvals/"+pending.ID, tt.body); status != tt.want {
			t.Errorf("POST %s: %d %s, want %d", tt.body, status, b, tt.want)
		}
	}
	if status, _, b := e.do("GET", agentPath+"/approvals/ap_nope", ""); status != http.StatusNotFound || !strings.Contains(string(b), api.CodeUnknownApproval) {
		t.Errorf("unknown approval: %d %s", status, b)
	}
}

func waitApprovalState(t *testing.T, e *env, id, state string) api.Approval {
	t.Helper()
	var got api.ApprovalResponse
	pollUntil(t, func() bool {
		status, _, b := e.do("GET", agentPath+"/approvals/"+id, "")
		if status != http.StatusOK {
			t.Fatalf("GET approval: %d %s", status, b)
		}
		json.Unmarshal(b, &got)
		return got.Approval.State == state
	})
	return got.Approval
}

// pollUntil polls cond until it holds, within the test's deadline.
func pollUntil(t *testing.T, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition not met in time")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestApprovalsGateway: a client of the agent's MCP endpoint that calls an
// ask tool is held while a person answers: approved, it gets the result;
// denied, a result with isError that gives the reason, for its model.
func TestApprovalsGateway(t *testing.T) {
	t.Parallel()
	e, srv := policyEnv(t)
	ctx := testCtx(t)
	putPolicy(t, e, `{"rules":[{"match":{"tools":["s/increment"],"callers":["gateway"]},"action":"ask"}]}`)
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.ts.URL + agentPath + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	call := func() <-chan outcome {
		out := make(chan outcome, 1)
		go func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_s_increment", Arguments: map[string]any{}})
			out <- outcome{res, err}
		}()
		return out
	}
	pendingID := func() string {
		var id string
		pollUntil(t, func() bool {
			_, _, b := e.do("GET", agentPath+"/approvals", "")
			var list api.ApprovalsResponse
			json.Unmarshal(b, &list)
			if len(list.Approvals) > 0 && list.Approvals[0].State == "pending" {
				if list.Approvals[0].Caller != "gateway" {
					t.Fatalf("approval %+v", list.Approvals[0])
				}
				id = list.Approvals[0].ID
				return true
			}
			return false
		})
		return id
	}
	out := call()
	if status, _, b := e.do("POST", agentPath+"/approvals/"+pendingID(), `{"decision":"approve"}`); status != http.StatusOK {
		t.Fatalf("approve: %d %s", status, b)
	}
	o := <-out
	if o.err != nil || o.res.IsError || o.res.Content[0].(*mcp.TextContent).Text != "1" {
		t.Fatalf("approved call through the gateway: %+v %v", o.res, o.err)
	}
	out = call()
	if status, _, b := e.do("POST", agentPath+"/approvals/"+pendingID(), `{"decision":"deny","reason":"ask Bob"}`); status != http.StatusOK {
		t.Fatalf("deny: %d %s", status, b)
	}
	o = <-out
	if o.err != nil || !o.res.IsError || !strings.Contains(o.res.Content[0].(*mcp.TextContent).Text, "ask Bob") {
		t.Fatalf("denied call through the gateway: %+v %v", o.res, o.err)
	}
	if n := srv.Increments.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}

// TestClusterApprovalFailover: an approval asked on one replica outlives
// it: once its lease lapsed, another replica takes the agent, lists the
// approval and, approved there, runs the call once; an approve through the
// old owner afterwards runs nothing more (its writes are fenced).
func TestClusterApprovalFailover(t *testing.T) {
	t.Parallel()
	dsn := pg.Database(t)
	srv, url := mcpServer(t, "one")
	a, b := newReplica(t, dsn), newReplica(t, dsn)
	ctx := testCtx(t)
	a.add("x", url, false)
	if _, err := a.client("test", "x").SetPolicy(ctx, api.Policy{Default: "ask"}); err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(a.api.URL+"/agents/test/x/servers/one/tools/call", "application/json", strings.NewReader(`{"name":"increment","timeoutMs":100}`))
	if err != nil {
		t.Fatal(err)
	}
	var accepted api.ApprovalResponse
	err = json.NewDecoder(res.Body).Decode(&accepted)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusAccepted || accepted.Approval.State != "pending" {
		t.Fatalf("call of an ask tool: %d %+v %v", res.StatusCode, accepted, err)
	}
	id := accepted.Approval.ID
	a.cl.Close() // a is gone for the others
	expireReplicaIn(t, dsn, a.rep.ID(), 1500*time.Millisecond)

	list, err := b.client("test", "x").Approvals(ctx)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].State != "pending" {
		t.Fatalf("approvals on the new owner: %+v %v", list, err)
	}
	if _, err := b.client("test", "x").AnswerApproval(ctx, id, api.AnswerApprovalRequest{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, func() bool {
		ap, err := b.client("test", "x").Approval(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ap.State == "done"
	})
	a.client("test", "x").AnswerApproval(ctx, id, api.AnswerApprovalRequest{Decision: "approve"}) // the old owner: refused or a no-op
	if n := srv.Increments.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}

// TestApprovalPendingStream: a streamed call of an ask tool whose time
// runs out ends with an error event approval_pending (status 202) naming
// the approval.
func TestApprovalPendingStream(t *testing.T) {
	t.Parallel()
	e, _ := policyEnv(t)
	putPolicy(t, e, `{"default":"ask","rules":[]}`)
	_, ch := callEvents(t, testCtx(t), e, "s", `{"name":"increment","timeoutMs":100}`)
	next(t, ch, "call")
	ev := next(t, ch, "error")
	if ev.Status != http.StatusAccepted || ev.Error == nil || ev.Error.Code != api.CodeApprovalPending || !strings.Contains(ev.Error.Message, "waits for approval ap_") {
		t.Fatalf("error event %+v", ev)
	}
}

// TestClientApprovalPending: the Go client's CallTool of a tool the
// policy asks about, still unanswered when the server's time for the call
// runs out, returns an *client.ApprovalPendingError naming the approval
// (it used to return the 202's body as if it were the tool's result).
func TestClientApprovalPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{CallTimeout: 100 * time.Millisecond})
	srv, url := mcpServer(t, "s")
	if status, _, b := e.do("POST", agentPath+"/servers", `{"name":"s","url":"`+url+`","id":"s"}`); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	putPolicy(t, e, `{"default":"ask","rules":[]}`)
	// No deadline of its own: the server's CallTimeout bounds the call.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := e.client("test", "a").CallTool(ctx, "s", "increment", nil)
	var pending *client.ApprovalPendingError
	if !errors.As(err, &pending) || pending.Approval.ID == "" || pending.Approval.Tool != "increment" || pending.Approval.State != "pending" {
		t.Fatalf("CallTool: %s, %v; want an *ApprovalPendingError", res, err)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatal("the tool ran before approval")
	}
	got, err := e.client("test", "a").Approval(testCtx(t), pending.Approval.ID)
	if err != nil || got.State != "pending" {
		t.Fatalf("Approval: %+v, %v", got, err)
	}
}
