package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestConnectFailedReadable: a server that cannot be reached, on add and
// on reconnect, is named by its name, with what failed in short (what ls
// and the dashboard show) and what happens to it, never an API route; the
// error carries the server's name, the short form and the whole error for
// clients to say the next step their own way, each said once. Its state
// says when the next try is (nextRetryAt).
func TestConnectFailedReadable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	hs.Stop()
	c := e.client("test", "a")
	ctx := testCtx(t)
	slowRetry := &api.RetryRequest{MaxAttempts: 1, BaseDelayMS: 600_000, MaxDelayMS: 600_000}
	const summary = "cannot connect: connection refused"
	check := func(what string, err error, message string) {
		t.Helper()
		var aerr *api.APIError
		if !errors.As(err, &aerr) || aerr.Code != api.CodeConnectFailed {
			t.Fatalf("%s: %v", what, err)
		}
		if aerr.Message != message {
			t.Errorf("%s: message %q, want %q", what, aerr.Message, message)
		}
		if aerr.ServerID != "docs-1" || aerr.ServerName != "docs" || aerr.Summary != summary {
			t.Errorf("%s: server %q named %q, summary %q", what, aerr.ServerID, aerr.ServerName, aerr.Summary)
		}
		if !strings.Contains(aerr.Detail, "dial tcp") || !strings.Contains(aerr.Detail, hs.URL) || strings.Count(aerr.Detail, "failed to connect") != 1 {
			t.Errorf("%s: detail %q, want the whole error once", what, aerr.Detail)
		}
	}
	_, err := c.AddMCPServer(ctx, api.AddRequest{Name: "docs", URL: hs.URL, ID: "docs-1", Retry: slowRetry, KeepIfUnreachable: true})
	check("add", err, `MCP server "docs" (id docs-1): `+summary+"; it is saved and retried in the background")
	_, err = c.Reconnect(ctx, "docs-1")
	check("reconnect", err, `MCP server "docs" (id docs-1): `+summary+"; it keeps being retried in the background")

	// The API's state says when the next try is.
	status, _, b := e.do("GET", agentPath+"/servers/docs-1", "")
	var s agent.MCPServer
	if err := json.Unmarshal(b, &s); status != http.StatusOK || err != nil {
		t.Fatalf("GET the server: %d %s", status, b)
	}
	if s.State != "failed" || s.NextRetryAt == nil || time.Until(*s.NextRetryAt) < time.Minute {
		t.Errorf("the failed server's state: %s, next retry at %v; want minutes away", s.State, s.NextRetryAt)
	}
}
