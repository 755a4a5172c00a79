package aitools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// bigResult is a result of about 12 KB of text with multi-byte characters,
// a 1 MB image and a resource blob.
func bigResult() *mcp.CallToolResult {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "line %03d: naïve café – 東京 🚀\n", i)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: b.String()},
		&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1<<20)},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x.bin", MIMEType: "application/octet-stream", Blob: make([]byte, 4096)}},
	}}
}

// TestBudgetCutsAndKeeps: a result over its budget is cut to the budget
// (note included), binary content shown as a note with its size and never
// inlined, and reading the kept result back by handle through the read
// meta-tool, offset after offset, returns every byte; a result within the
// budget is unchanged.
func TestBudgetCutsAndKeeps(t *testing.T) {
	res := bigResult()
	full := aitools.ResultText(res)
	for _, tc := range []struct {
		name   string
		budget *aitools.Budget
		limit  int
	}{
		{"tokens", &aitools.Budget{MaxTokens: 300, Results: aitools.NewResults(nil)}, 1200},
		{"bytes", &aitools.Budget{MaxBytes: 777, Results: aitools.NewResults(nil)}, 777},
		{"both", &aitools.Budget{MaxBytes: 5000, MaxTokens: 250, Results: aitools.NewResults(nil)}, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.budget.Text(res)
			if len(text) > tc.limit {
				t.Errorf("cut result is %d bytes, over the budget of %d", len(text), tc.limit)
			}
			if !strings.HasPrefix(full, text[:strings.LastIndex(text, "\n[result cut")]) {
				t.Errorf("the part shown is not the result's beginning")
			}
			if !strings.Contains(text, `handle "r1"`) || !strings.Contains(text, aitools.ReadToolName) {
				t.Errorf("the cut result does not say how to read on: %q", text[len(text)-200:])
			}
			if strings.Contains(full, "AAAA") || !strings.Contains(full, "[image: image/png, 1048576 bytes]") {
				t.Errorf("binary content inlined, or its note missing")
			}

			// Read it all back through the meta-tool.
			var got strings.Builder
			offset := 0
			for reads := 0; ; reads++ {
				if reads > len(full) {
					t.Fatal("reading never ends")
				}
				args, _ := json.Marshal(map[string]any{"handle": "r1", "offset": offset})
				r := tc.budget.ExecuteRead(context.Background(), args)
				if r.IsError {
					t.Fatalf("read at %d: %v", offset, r.Content[0].(*mcp.TextContent).Text)
				}
				if answer := r.Content[0].(*mcp.TextContent).Text; len(answer) > tc.limit {
					t.Errorf("a read's answer is %d bytes, over the budget of %d", len(answer), tc.limit)
				}
				sc := r.StructuredContent.(map[string]any)
				chunk := sc["text"].(string)
				if len(chunk) > tc.limit {
					t.Errorf("a read returned %d bytes, over the budget of %d", len(chunk), tc.limit)
				}
				got.WriteString(chunk)
				offset = sc["next"].(int)
				if offset == sc["total"].(int) {
					break
				}
			}
			if got.String() != full {
				t.Fatalf("read back %d bytes, want the result's %d, byte for byte", got.Len(), len(full))
			}
			if kept, ok := tc.budget.Results.Result("r1"); !ok || kept != res {
				t.Errorf("Result(r1) = %v, %v; want the whole result", kept, ok)
			}
		})
	}

	t.Run("one byte at a time", func(t *testing.T) {
		b := &aitools.Budget{MaxBytes: 100, Results: aitools.NewResults(nil)}
		b.Text(res)
		var got strings.Builder
		for offset := 0; offset < len(full); {
			chunk, next, _, err := b.Results.Read("r1", offset, 1)
			if err != nil || next <= offset {
				t.Fatalf("Read(r1, %d, 1) = %q, %d, %v", offset, chunk, next, err)
			}
			got.WriteString(chunk)
			offset = next
		}
		if got.String() != full {
			t.Fatal("reading a byte at a time lost bytes")
		}
	})

	t.Run("within budget", func(t *testing.T) {
		small := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "short"}}}
		b := &aitools.Budget{MaxBytes: 100, Results: aitools.NewResults(nil)}
		if got := b.Text(small); got != "short" {
			t.Errorf("Text = %q, want it unchanged", got)
		}
		if _, ok := b.Results.Result("r1"); ok {
			t.Error("a result within the budget was kept")
		}
		var none *aitools.Budget
		if got := none.Text(res); got != full {
			t.Error("a nil Budget cut the result")
		}
	})

	t.Run("evicted and unknown", func(t *testing.T) {
		b := &aitools.Budget{MaxBytes: 100, Results: aitools.NewResults(&aitools.ResultsOptions{MaxBytes: len(full) + 10})}
		b.Text(res)
		b.Text(res) // evicts r1
		if _, _, _, err := b.Results.Read("r1", 0, 0); !errors.Is(err, aitools.ErrUnknownResult) {
			t.Errorf("read of an evicted result: %v, want ErrUnknownResult", err)
		}
		if _, _, total, err := b.Results.Read("r2", 0, 0); err != nil || total != len(full) {
			t.Errorf("read of the kept result: %d, %v", total, err)
		}
		if r := b.ExecuteRead(context.Background(), json.RawMessage(`{"handle":"nope","offset":0}`)); !r.IsError {
			t.Error("reading an unknown handle is not an error for the model")
		}
		dropped := (&aitools.Budget{MaxBytes: 200}).Text(res)
		if !strings.Contains(dropped, "not kept") || len(dropped) > 200 {
			t.Errorf("without Results: %q", dropped)
		}
	})
}
