//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them
package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// loggingServer hosts mcptest's server with a tool "log" that sends its
// text as a log message (notifications/message, level warning, logger
// "db"), and returns its URL.
func loggingServer(t *testing.T) string {
	srv := mcptest.NewServer("logs")
	// A server that logs from the start (go-sdk's servers wait for the
	// client to set a level; TypeScript servers do not).
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{Session: req.GetSession().(*mcp.ServerSession),
					Params: &mcp.SetLoggingLevelParams{Level: "debug"}})
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(srv.Server, &mcp.Tool{Name: "log", Description: "Logs."},
		func(ctx context.Context, req *mcp.CallToolRequest, a mcptest.EchoArgs) (*mcp.CallToolResult, any, error) {
			err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "db", Data: a.Text})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, err
		})
	_, url := mcpServerOf(t, srv.Server)
	return url
}

// TestServerLogsRoute: GET .../servers/{id}/logs answers the log messages
// the server sent (notifications/message), GET .../logs every server's, and serve's log tells of the
// add and the remove, naming the agent and the server.
func TestServerLogsRoute(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	e := newEnv(t, &Options{Logger: slog.New(slog.NewJSONHandler(&out, nil))})
	url := loggingServer(t)
	if status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":"Docs","url":%q,"id":"docs"}`, url)); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	if status, _, b := e.do("POST", agentPath+"/servers/docs/tools/call", `{"name":"log","arguments":{"text":"disk full"}}`); status != http.StatusOK {
		t.Fatalf("call: %d %s", status, b)
	}
	var res api.ServerLogs
	for deadline := time.Now().Add(10 * time.Second); len(res.Logs) == 0 && time.Now().Before(deadline); {
		status, _, b := e.do("GET", agentPath+"/servers/docs/logs", "")
		if status != http.StatusOK {
			t.Fatalf("logs: %d %s", status, b)
		}
		json.Unmarshal(b, &res)
		time.Sleep(time.Millisecond) // polling, with a deadline
	}
	if res.ServerID != "docs" || len(res.Logs) != 1 || res.Logs[0].Level != "warning" || res.Logs[0].Logger != "db" || res.Logs[0].Data != "disk full" {
		t.Errorf("logs: %+v", res)
	}
	// GET .../logs: every server's, by id; a server that logged nothing
	// has an empty list.
	if status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":"Quiet","url":%q,"id":"quiet"}`, loggingServer(t))); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	var all api.Logs
	if status, _, b := e.do("GET", agentPath+"/logs", ""); status != http.StatusOK || json.Unmarshal(b, &all) != nil {
		t.Fatalf("all logs: %d %s", status, b)
	}
	if len(all.Servers) != 2 || all.Servers[0].ServerID != "docs" || len(all.Servers[0].Logs) != 1 || all.Servers[0].Logs[0].Data != "disk full" ||
		all.Servers[1].ServerID != "quiet" || all.Servers[1].Logs == nil || len(all.Servers[1].Logs) != 0 {
		t.Errorf("all logs: %+v", all)
	}
	if status, _, b := e.do("GET", agentPath+"/servers/nope/logs", ""); status != http.StatusNotFound || !strings.Contains(string(b), api.CodeUnknownServer) {
		t.Errorf("logs of an unknown server: %d %s", status, b)
	}
	if status, _, b := e.do("DELETE", agentPath+"/servers/docs", ""); status != http.StatusNoContent {
		t.Fatalf("remove: %d %s", status, b)
	}
	log := out.String()
	for _, want := range []string{`"msg":"mcp server added","agent":"test/a","server":"Docs","id":"docs","state":"ready","ms":`,
		`"msg":"mcp server removed","agent":"test/a","server":"Docs","id":"docs","ms":`} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log has no %s:\n%s", want, log)
		}
	}
}

// TestDashboardServerLogs: the dashboard shows the servers' log messages,
// as text.
func TestDashboardServerLogs(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	c := e.client("test", "a")
	ctx := testCtx(t)
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "Docs", URL: loggingServer(t), ID: "docs"}); err != nil {
		t.Fatal(err)
	}
	const hostile = `<img src=x onerror="document.title='owned'"> disk full`
	if _, err := c.CallTool(ctx, "docs", "log", map[string]any{"text": hostile}); err != nil {
		t.Fatal(err)
	}
	row := `#server-logs tr[data-server-id="docs"][data-level="warning"]`
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(row)),
	)
	if got := p.text(row); !strings.Contains(got, "Docs") || !strings.Contains(got, "db: "+hostile) {
		t.Errorf("the log row reads %q", got)
	}
	if n := eval[int](p, `document.querySelectorAll("#server-logs img").length`); n != 0 {
		t.Errorf("the message became markup: %d img", n)
	}
	if eval[bool](p, `!document.getElementById("no-logs").hidden`) {
		t.Error("'No log messages' is shown beside one")
	}
	p.noProblems()
}
