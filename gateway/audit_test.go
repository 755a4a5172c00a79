package gateway_test

import (
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/store"
)

// TestAuditGateway: a client's call through the gateway is in the
// agent's audit log as the gateway's, and so is a call the gateway
// refuses because it no longer exposes the tool, denied.
func TestAuditGateway(t *testing.T) {
	var deny atomic.Bool
	e := newEnv(t, &gateway.Options{Expose: func(serverID, tool string) bool { return !deny.Load() || tool != "echo" }})
	ctx := testCtx(t)
	cs := e.connect(eraStateless, nil)
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	deny.Store(true) // refused at call time, before the gateway lists its tools again
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_echo", Arguments: map[string]any{"text": "y"}}); err != nil || !res.IsError {
		t.Fatalf("echo once not exposed: %+v, %v", res, err)
	}
	recs, err := e.a.Audit(ctx, agent.AuditQuery{ServerID: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if r.Tool != "" {
			got = append(got, r.Tool+" "+r.Caller+" "+r.Decision+" "+r.Outcome)
		}
	}
	want := []string{"echo gateway " + store.AuditAllowed + " " + store.AuditOK, "echo gateway " + store.AuditDenied + " "}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("the gateway's records: %q, want %q", got, want)
	}
}
