package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolSchema is a realistic input schema (as aitools' own benchmarks use).
func toolSchema(i int) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"owner":    map[string]any{"type": "string", "description": fmt.Sprintf("Owner of resource %d", i)},
			"name":     map[string]any{"type": "string", "minLength": 1, "maxLength": 100},
			"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "default": 30},
			"state":    map[string]any{"type": "string", "enum": []any{"open", "closed", "all"}},
			"labels":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"archived": map[string]any{"type": "boolean"},
		},
		"required":             []any{"owner", "name"},
		"additionalProperties": false,
	}
}

// runAITools measures Manager.AITools over c.aitoolsServers in-process
// servers of c.aitoolsPer tools each: the first call on a fresh Manager
// against a repeat call on the unchanged catalog.
func runAITools(ctx context.Context, c *config) (string, []figure, error) {
	servers := make([]*mcp.Server, c.aitoolsServers)
	for s := range servers {
		srv := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("tools-%d", s), Version: "1"}, nil)
		for i := range c.aitoolsPer {
			srv.AddTool(&mcp.Tool{
				Name:        fmt.Sprintf("list_items_%d", i),
				Description: fmt.Sprintf("Lists the items of kind %d.", s*c.aitoolsPer+i),
				InputSchema: toolSchema(s*c.aitoolsPer + i),
			}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		}
		servers[s] = srv
	}
	want := c.aitoolsServers * c.aitoolsPer
	var firsts, repeats, ratios []float64
	for rep := range c.reps {
		progress(c.stderr, "aitools: repetition %d/%d", rep+1, c.reps)
		m := mcpclient.New(nil)
		var wg sync.WaitGroup
		errs := make([]error, len(servers))
		for s, srv := range servers {
			wg.Go(func() {
				errs[s] = connectReady(ctx, m, fmt.Sprintf("tools-%d", s), mcpclient.ServerOptions{
					InProcess: func(context.Context, map[string]any) (*mcp.Server, error) { return srv, nil }})
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				m.Close(ctx)
				return "", nil, err
			}
		}
		t0 := time.Now()
		set := m.AITools(mcpclient.Filter{})
		first := time.Since(t0)
		if set.Len() != want {
			m.Close(ctx)
			return "", nil, fmt.Errorf("AITools returned %d tools, want %d", set.Len(), want)
		}
		var rs []float64
		for range 21 {
			t0 := time.Now()
			again := m.AITools(mcpclient.Filter{})
			rs = append(rs, time.Since(t0).Seconds())
			if again.Len() != want {
				m.Close(ctx)
				return "", nil, fmt.Errorf("AITools returned %d tools, want %d", again.Len(), want)
			}
		}
		m.Close(ctx)
		repeat := median(rs)
		firsts = append(firsts, first.Seconds())
		repeats = append(repeats, repeat)
		ratios = append(ratios, repeat/first.Seconds())
	}
	t := newTable("call", "ms")
	t.add("first (fresh Manager)", fmt.Sprintf("%.2f", median(firsts)*1e3))
	t.add("repeat (unchanged catalog)", fmt.Sprintf("%.4f", median(repeats)*1e3))
	title := fmt.Sprintf("AITools: %d tools over %d in-process servers\n", want, c.aitoolsServers)
	return title + t.String(), []figure{{name: "aitools_cached_ratio", value: median(ratios), goal: "<= 0.01",
		note: "repeat call over first call"}}, nil
}
