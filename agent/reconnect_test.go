package agent_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReconnect: Reconnect, and adding a failed server again, retry it at
// once; neither drops the server's OAuth data.
func TestReconnect(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	st := openSQLite(t, "")
	a := openAgent(t, st, "reconnect", nil)
	ctx := testCtx(t)
	opts := &agent.AddOptions{Retry: &mcpclient.RetryOptions{MaxAttempts: 1, DisableBackground: true}}
	res, err := a.AddMCPServer(ctx, "S", hs.URL, opts)
	if err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("AddMCPServer = %+v, %v", res, err)
	}
	// OAuth data (a token, a client registration) must survive all this.
	if err := st.KVPut(ctx, a.Namespace(), res.ID, "token", []byte("grant"), time.Time{}); err != nil {
		t.Fatal(err)
	}

	hs.Stop()
	if _, err := a.Reconnect(ctx, res.ID); err == nil {
		t.Fatal("Reconnect with the server down succeeded")
	}
	if s := a.MCPServers().Servers[res.ID]; s.State != "failed" || s.Error == nil {
		t.Fatalf("after a failed Reconnect: %+v", s)
	}
	if _, err := a.AddMCPServer(ctx, "S", hs.URL, opts); err == nil {
		t.Fatal("adding the failed server again with it still down succeeded")
	}

	// Adding it again once it is back retries it.
	hs.Restart()
	again, err := a.AddMCPServer(ctx, "S", hs.URL, opts)
	if err != nil || again != res {
		t.Fatalf("adding the failed server again = %+v, %v; want %+v", again, err, res)
	}
	if s := a.MCPServers().Servers[res.ID]; s.State != "ready" {
		t.Errorf("after adding it again: %+v", s)
	}

	// And so does Reconnect.
	hs.Stop()
	a.Reconnect(ctx, res.ID)
	hs.Restart()
	if r, err := a.Reconnect(ctx, res.ID); err != nil || r != res {
		t.Fatalf("Reconnect with the server back = %+v, %v", r, err)
	}
	if _, err := a.Manager().CallTool(ctx, res.ID, "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Errorf("call after Reconnect: %v", err)
	}
	if v, err := st.KVGet(ctx, a.Namespace(), res.ID, "token"); err != nil || string(v) != "grant" {
		t.Errorf("OAuth data after the reconnections: %q, %v", v, err)
	}
	if _, err := a.Reconnect(ctx, "nosuch"); !errors.Is(err, mcpclient.ErrNotRegistered) {
		t.Errorf("Reconnect(nosuch) = %v", err)
	}
	if _, err := st.GetServer(ctx, a.Namespace(), res.ID); errors.Is(err, store.ErrNotFound) {
		t.Error("the row is gone")
	}
}
