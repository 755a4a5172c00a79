package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestSearchTools: the Manager's tool search and search mode, over every
// server or the ones a filter selects, following a server's list_changed.
func TestSearchTools(t *testing.T) {
	s1, s2 := mcptest.NewServer("one"), mcptest.NewServer("two")
	s1.AddTool("translate_subtitles")
	m := aiManager(t, map[string]*mcp.Server{"one": s1.Server, "two": s2.Server}, "one", "two")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ids := func(ms []aitools.Match) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Tool.ServerID+"/"+m.Tool.Name)
		}
		return out
	}
	if got := ids(m.SearchTools(Filter{}, "add two integers", 2)); len(got) != 2 || !strings.HasSuffix(got[0], "/add") || !strings.HasSuffix(got[1], "/add") {
		t.Errorf("add two integers: %v", got)
	}
	if got := ids(m.SearchTools(Filter{ServerID: []string{"two"}}, "add two integers", 5)); len(got) == 0 || got[0] != "two/add" || strings.Contains(strings.Join(got, " "), "one/") {
		t.Errorf("add two integers on two: %v", got)
	}

	// Search mode with a filter: search_tools keeps to the selected
	// server, and the index still holds every server (SearchTools over
	// all of them still finds one's tool).
	mode := m.SearchMode(Filter{ServerID: []string{"two"}}, nil)
	if mode.Len() != 2 {
		t.Errorf("search mode offers %d tools, want the 2 meta-tools", mode.Len())
	}
	res, err := mode.Execute(ctx, aitools.SearchToolKey, json.RawMessage(`{"query":"subtitles"}`))
	if err != nil || strings.Contains(aitools.ResultText(res), "translate_subtitles") {
		t.Errorf("search mode on two found one's tool: %v, %v", aitools.ResultText(res), err)
	}
	if got := ids(m.SearchTools(Filter{}, "subtitles", 5)); len(got) != 1 || got[0] != "one/translate_subtitles" {
		t.Errorf("subtitles over every server after search mode on two: %v", got)
	}
	res, err = mode.Execute(ctx, aitools.CallToolKey, json.RawMessage(`{"key":"tool_two_add","arguments":{"a":2,"b":3}}`))
	if err != nil || aitools.ResultText(res) != "5" {
		t.Errorf("call_tool add on two: %v, %v", aitools.ResultText(res), err)
	}

	// A tool that appears later (list_changed) is found once the Manager
	// has the new list.
	s2.AddTool("render_chart")
	deadline := time.Now().Add(20 * time.Second)
	for len(m.SearchTools(Filter{}, "render chart", 5)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a tool added to a server is never found")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a safety deadline
	}
}
