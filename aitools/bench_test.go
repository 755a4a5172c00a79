package aitools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// benchSchema is a realistic input schema, as a client decodes it.
func benchSchema(i int) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"owner":    map[string]any{"type": "string", "description": fmt.Sprintf("Owner of resource %d", i)},
			"name":     map[string]any{"type": "string", "minLength": float64(1), "maxLength": float64(100)},
			"limit":    map[string]any{"type": "integer", "minimum": float64(1), "maximum": float64(100), "default": float64(30)},
			"state":    map[string]any{"type": "string", "enum": []any{"open", "closed", "all"}},
			"labels":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"archived": map[string]any{"type": "boolean"},
		},
		"required":             []any{"owner", "name"},
		"additionalProperties": false,
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
	}
}

// benchCatalog returns servers*perServer tools with distinct schemas.
func benchCatalog(servers, perServer int) []aitools.MCPTool {
	out := make([]aitools.MCPTool, 0, servers*perServer)
	for s := range servers {
		for i := range perServer {
			n := s*perServer + i
			out = append(out, aitools.MCPTool{ServerID: fmt.Sprintf("server-%d", s), Def: &mcp.Tool{
				Name:        fmt.Sprintf("list_items_%d", i),
				Description: fmt.Sprintf("Lists the items of kind %d.", n),
				InputSchema: benchSchema(n),
			}})
		}
	}
	return out
}

func okCall(context.Context, string, string, map[string]any) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

// BenchmarkBuild measures Cache.Build on 10,000 tools over 50 servers:
// cold (a new cache), warm (an unchanged catalog), and refreshes (the
// definitions of one server, or of every server, replaced by identical
// ones, as after list_changed). BenchmarkAITools in mcpclient measures the same through a
// Manager.
func BenchmarkBuild(b *testing.B) {
	const servers, perServer = 50, 200
	cat := benchCatalog(servers, perServer)
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			aitools.NewCache(okCall, nil).Build(cat)
		}
	})
	b.Run("warm", func(b *testing.B) {
		cache := aitools.NewCache(okCall, nil)
		cache.Build(cat)
		b.ReportAllocs()
		for b.Loop() {
			cache.Build(cat)
		}
	})
	b.Run("refresh-one-server", func(b *testing.B) {
		// One server's definitions replaced by identical ones, as after a
		// list_changed from it.
		other := slices.Clone(cat)
		copy(other, benchCatalog(1, perServer))
		cache := aitools.NewCache(okCall, nil)
		cache.Build(cat)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i++; i%2 == 0 {
				cache.Build(cat)
			} else {
				cache.Build(other)
			}
		}
	})
	b.Run("refresh-all", func(b *testing.B) {
		other := benchCatalog(servers, perServer) // same content, new pointers
		cache := aitools.NewCache(okCall, nil)
		cache.Build(cat)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i++; i%2 == 0 {
				cache.Build(cat)
			} else {
				cache.Build(other)
			}
		}
	})
}

// BenchmarkExecute measures argument validation: a tool's first call
// (which compiles its schema) and later calls.
func BenchmarkExecute(b *testing.B) {
	args := json.RawMessage(`{"owner":"octo","name":"repo","limit":10,"state":"open","labels":["a","b"]}`)
	b.Run("first", func(b *testing.B) {
		cat := benchCatalog(1, 1)
		b.ReportAllocs()
		for b.Loop() {
			set := aitools.NewCache(okCall, nil).Build(cat)
			if _, err := set.Execute(context.Background(), "tool_server0_list_items_0", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("later", func(b *testing.B) {
		set := aitools.NewCache(okCall, nil).Build(benchCatalog(1, 1))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := set.Execute(context.Background(), "tool_server0_list_items_0", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
