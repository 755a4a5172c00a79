//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them
package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// loggingServer is mcptest's server with a tool "log" that sends one log
// message (notifications/message) per call, at level error, whatever
// level the client set (go-sdk's servers send none until a client sets
// one; TypeScript servers send them from the start).
func loggingServer() *mcptest.Server {
	s := mcptest.NewServer("logs")
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{Session: req.GetSession().(*mcp.ServerSession),
					Params: &mcp.SetLoggingLevelParams{Level: "debug"}})
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "log", Description: "Logs."},
		func(ctx context.Context, req *mcp.CallToolRequest, a mcptest.EchoArgs) (*mcp.CallToolResult, any, error) {
			err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Logger: "db",
				Data: map[string]any{"level": "debug", "msg": a.Text}})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, err
		})
	return s
}

// topKeys returns the keys of a JSON object in order, duplicates kept.
func topKeys(t *testing.T, line []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// logCall connects to loggingServer (in the legacy era, where a
// server's log level is the session's; in 2026-07-28 each request carries
// its own) and calls its tool "log" with text.
func logCall(t *testing.T, m *mcpclient.Manager, text string) {
	t.Helper()
	connectReady(t, m, "srv", mcpclient.ServerOptions{InProcess: inProcess(loggingServer()),
		Client: mcpclient.ClientOptions{ProtocolVersion: "2025-11-25"}})
	if _, err := m.CallTool(testCtx(t), "srv", "log", map[string]any{"text": text}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestServerLogRecord: a server's log message reaches the Manager's log
// at its level, with the server's fields under "mcp_log": a server cannot
// add a second "level" (or any key) to the record.
func TestServerLogRecord(t *testing.T) {
	var out syncBuffer
	m := newManager(t, &mcpclient.Options{Logger: slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	logCall(t, m, "disk full")
	var line string
	for deadline := time.Now().Add(10 * time.Second); line == "" && time.Now().Before(deadline); {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, `"msg":"mcp server log"`) {
				line = l
			}
		}
		time.Sleep(time.Millisecond) // polling, with a deadline
	}
	if line == "" {
		t.Fatalf("no \"mcp server log\" record in:\n%s", out.String())
	}
	keys := topKeys(t, []byte(line))
	seen := map[string]int{}
	for _, k := range keys {
		seen[k]++
	}
	if seen["level"] != 1 || seen["mcp_log"] != 1 {
		t.Errorf("record keys %v; want one level, and mcp_log", keys)
	}
	var rec struct {
		Level  string
		Server string
		MCPLog struct{ Level, Logger, Data string } `json:"mcp_log"`
	}
	json.Unmarshal([]byte(line), &rec)
	if rec.Level != "ERROR" || rec.Server != "srv" || rec.MCPLog.Level != "error" || rec.MCPLog.Logger != "db" || !strings.Contains(rec.MCPLog.Data, "disk full") {
		t.Errorf("record %s", line)
	}
}

// TestServerLogsKept: ServerLogs returns the server's last log messages.
func TestServerLogsKept(t *testing.T) {
	m := newManager(t, nil)
	logCall(t, m, "disk full")
	var logs []mcpclient.ServerLog
	for deadline := time.Now().Add(10 * time.Second); len(logs) == 0 && time.Now().Before(deadline); {
		logs, _ = m.ServerLogs("srv")
		time.Sleep(time.Millisecond) // polling, with a deadline
	}
	if len(logs) != 1 || logs[0].Level != "error" || logs[0].Logger != "db" || logs[0].Data != `{"level":"debug","msg":"disk full"}` {
		t.Fatalf("ServerLogs = %+v", logs)
	}
	for i := range mcpclient.ServerLogsKept + 5 {
		if _, err := m.CallTool(testCtx(t), "srv", "log", map[string]any{"text": fmt.Sprint("n", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		logs, _ = m.ServerLogs("srv")
		if len(logs) > 0 && strings.Contains(logs[len(logs)-1].Data, fmt.Sprint("n", mcpclient.ServerLogsKept+4)) {
			break
		}
		time.Sleep(time.Millisecond) // polling, with a deadline
	}
	if len(logs) != mcpclient.ServerLogsKept || !strings.Contains(logs[0].Data, `"n5"`) {
		t.Errorf("%d logs kept, the first %+v; want the last %d", len(logs), logs[0], mcpclient.ServerLogsKept)
	}
	if _, ok := m.ServerLogs("nope"); ok {
		t.Error("ServerLogs of an unknown server is ok")
	}
}
