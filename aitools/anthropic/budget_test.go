package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	aianthropic "github.com/agentmcp/agentmcp/aitools/anthropic"
)

// TestBudgetToolResult: an image counts by its base64 size: a result
// with a small image within the budget keeps it inlined, one whose image
// is over the budget becomes text within the budget, the image a note
// with its size (never base64 in text), the whole kept under a handle.
// The read tool marshals with the SDK.
func TestBudgetToolResult(t *testing.T) {
	budget := &aitools.Budget{MaxBytes: 2000, Results: aitools.NewResults(nil)}
	small := aitools.Outcome{Call: aitools.Call{ID: "a"}, Result: &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a chart"}, &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 900)}}}}
	r := aianthropic.BudgetToolResult(small, budget)
	if len(r.Content) != 2 || r.Content[1].OfImage == nil {
		t.Errorf("a small image within the budget: %s", mustJSON(t, r))
	}
	large := aitools.Outcome{Call: aitools.Call{ID: "b"}, Result: &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: strings.Repeat("data ", 200)}, &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1600)}}}}
	r = aianthropic.BudgetToolResult(large, budget)
	if len(r.Content) != 1 || r.Content[0].OfText == nil {
		t.Fatalf("an image over the budget: %s", mustJSON(t, r))
	}
	text := r.Content[0].OfText.Text
	if len(text) > 2000 || !strings.Contains(text, "[image: image/png, 1600 bytes]") || strings.Contains(text, "AAAA") {
		t.Errorf("an image over the budget: %q", text)
	}
	if _, ok := budget.Results.Result("r1"); ok {
		t.Errorf("a result that fits once its image is a note was kept")
	}
	if b := mustJSON(t, aianthropic.ReadTool()); !strings.Contains(b, `"name":"read_tool_result"`) || !strings.Contains(b, `"handle"`) {
		t.Errorf("ReadTool marshals as %s", b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
