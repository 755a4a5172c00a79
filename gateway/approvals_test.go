package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// askEverything sets a policy on e's agent that asks about every call.
func askEverything(t *testing.T, e *env) {
	t.Helper()
	p, err := policy.Parse([]byte(`{"default": "ask", "rules": []}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.a.SetPolicy(testCtx(t), p); err != nil {
		t.Fatal(err)
	}
}

// waitApprovalState polls e's agent until its newest approval is in
// state, and returns it.
func waitApprovalState(t *testing.T, e *env, state string) agent.Approval {
	t.Helper()
	ctx := testCtx(t)
	for {
		list, err := e.a.Approvals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range list {
			if ap.State == state {
				return ap
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no approval %s; approvals %+v", state, list)
		case <-time.After(5 * time.Millisecond): // polling, bounded by ctx
		}
	}
}

// TestApprovalByElicitation: a call the agent's policy asks about, made
// by a client that declared elicitation (a go-sdk client, in either era),
// asks that client through an elicitation form; its answer decides the
// stored approval: approve runs the call once and the client gets its
// result, deny reaches the client with its reason, remember adds an allow
// rule; a client that declines leaves the approval pending, and the call
// waits until a person approves it.
func TestApprovalByElicitation(t *testing.T) {
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			e := newEnv(t, nil)
			askEverything(t, e)
			ctx := testCtx(t)
			answers := make(chan map[string]any, 1) // nil: decline
			forms := make(chan *mcp.ElicitParams, 4)
			cs := e.connect(era, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					forms <- req.Params
					content := <-answers
					if content == nil {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: content}, nil
				},
			})
			call := func() <-chan *mcp.CallToolResult {
				out := make(chan *mcp.CallToolResult, 1)
				go func() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_increment", Arguments: map[string]any{}})
					if err != nil {
						t.Errorf("call: %v", err)
					}
					out <- res
				}()
				return out
			}
			form := func() *mcp.ElicitParams {
				t.Helper()
				select {
				case f := <-forms:
					if !strings.Contains(f.Message, `"increment"`) || !strings.Contains(f.Message, `"beta"`) {
						t.Errorf("the form's message: %q", f.Message)
					}
					return f
				case <-time.After(20 * time.Second): // a safety timeout
					// The call waits for its approval: a person's deny
					// ends it, so that the test ends.
					list, _ := e.a.Approvals(ctx)
					for _, ap := range list {
						e.a.Deny(ctx, ap.ID, "the test is over")
					}
					t.Fatal("the client was not asked")
					return nil
				}
			}

			// Approve.
			out := call()
			form()
			pending := waitApprovalState(t, e, store.ApprovalPending)
			if pending.Caller != policy.Gateway {
				t.Errorf("approval caller %q", pending.Caller)
			}
			answers <- map[string]any{"decision": "approve"}
			if res := <-out; res == nil || res.IsError || text(res) != "1" {
				t.Fatalf("approved call: %+v", res)
			}
			if ap, err := e.a.Approval(ctx, pending.ID); err != nil || ap.State != store.ApprovalDone {
				t.Fatalf("approval after the client approved: %+v %v", ap, err)
			}

			// Deny, with a reason.
			out = call()
			form()
			answers <- map[string]any{"decision": "deny", "reason": "not on a Friday"}
			if res := <-out; res == nil || !res.IsError || !strings.Contains(text(res), "not on a Friday") {
				t.Fatalf("denied call: %+v", res)
			}
			denied := waitApprovalState(t, e, store.ApprovalDenied)
			if denied.Reason != "not on a Friday" {
				t.Fatalf("denied approval: %+v", denied)
			}

			// Decline: pending for a person, who approves.
			out = call()
			form()
			answers <- nil
			waiting := waitApprovalState(t, e, store.ApprovalPending)
			select {
			case res := <-out:
				t.Fatalf("the call ended while its approval is pending: %+v", res)
			default:
			}
			if _, err := e.a.Approve(ctx, waiting.ID, false); err != nil {
				t.Fatal(err)
			}
			if res := <-out; res == nil || res.IsError || text(res) != "2" {
				t.Fatalf("call approved by a person: %+v", res)
			}

			// Approve and remember: no more asks for that tool.
			out = call()
			form()
			answers <- map[string]any{"decision": "approve", "remember": true}
			if res := <-out; res == nil || text(res) != "3" {
				t.Fatalf("approved and remembered call: %+v", res)
			}
			if d := e.a.Decide("beta", "increment", policy.Gateway); d.Action != policy.Allow {
				t.Fatalf("decision after remember: %+v", d)
			}
			if res := <-call(); res == nil || text(res) != "4" {
				t.Fatalf("call after remember: %+v", res)
			}
			select {
			case f := <-forms:
				t.Fatalf("asked again after remember: %q", f.Message)
			default:
			}
			if n := e.beta.Increments.Load(); n != 4 {
				t.Fatalf("the tool ran %d times, want 4", n)
			}
		})
	}
}
