package agent

import (
	"context"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
)

// ToolView returns the MCP Apps view of tool name of server serverID
// (mcpclient.Manager.ToolView: its ui:// URI, HTML and _meta, kept until
// the server's lists are listed again). The error wraps
// mcpclient.ErrNoView for a tool without one. The view is the server's
// code: render it only in a sandboxed frame (package server's view route
// does).
func (a *Agent) ToolView(ctx context.Context, serverID, name string) (*mcpclient.View, error) {
	defer a.hold()()
	start := time.Now()
	v, err := a.m.ToolView(ctx, serverID, name)
	a.callFailed(ctx, serverID, "resources/read", "view of "+name, start, err)
	return v, err
}
