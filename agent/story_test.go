package agent_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// logLines is a JSON log, safe for concurrent writes.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records returns the records whose msg is msg.
func (l *logLines) records(msg string) []map[string]any {
	l.mu.Lock()
	text := l.b.String()
	l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// TestStory: the log tells what happens to an agent: its wake and its
// hibernation (with their durations in ms), each state change of a
// server (its name, the id where it differs, the state, how long the last
// one lasted) and, as a warning, each failed call.
func TestStory(t *testing.T) {
	var out logLines
	logger := slog.New(slog.NewJSONHandler(&out, nil))
	h, _ := newHost(t, openSQLite(t, ""), &agent.HostOptions{Logger: logger})
	a, release := use(t, h, "teller")
	s := serve(t, mcptest.Stateful)
	ctx := testCtx(t)
	if _, err := a.AddMCPServer(ctx, "Docs", s.URL, &agent.AddOptions{ID: "docs-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CallTool(ctx, "docs-1", "no-such-tool", nil, nil); err == nil {
		t.Fatal("a call of an unknown tool succeeded")
	}
	release()
	if !h.Hibernate(ctx, "test-agent", "teller") {
		t.Fatal("not hibernated")
	}

	woke := out.records("agent woke")
	if len(woke) != 1 || woke[0]["agent"] != "test-agent/teller" || woke[0]["ms"] == nil {
		t.Errorf("agent woke: %v", woke)
	}
	if hib := out.records("agent hibernated"); len(hib) != 1 || hib[0]["agent"] != "test-agent/teller" || hib[0]["ms"] == nil {
		t.Errorf("agent hibernated: %v", hib)
	}
	var states []string
	for _, rec := range out.records("mcp server state") {
		if rec["server"] != "Docs" || rec["id"] != "docs-1" || rec["agent"] != "test-agent/teller" {
			t.Errorf("state line %v; want server Docs, id docs-1, the agent", rec)
		}
		states = append(states, rec["state"].(string))
	}
	if len(states) == 0 || !strings.Contains(strings.Join(states, ","), "ready") {
		t.Errorf("states logged: %v; want the way to ready", states)
	}
	failed := out.records("mcp call failed")
	if len(failed) != 1 || failed[0]["level"] != "WARN" || failed[0]["server"] != "Docs" || failed[0]["call"] != "tools/call" ||
		failed[0]["target"] != "no-such-tool" || failed[0]["ms"] == nil || failed[0]["error"] == nil {
		t.Errorf("mcp call failed: %v", failed)
	}
}
