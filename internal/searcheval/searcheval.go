// Package searcheval is the retrieval evaluation of aitools' tool search:
// queries a person would type, each with the tool it should find, over
// real catalogs: the tools/list of the pinned reference servers
// (server-everything, server-memory, server-filesystem; recorded from
// them in testdata/reference.json, which TestReferenceCatalogs checks
// against the live servers), and a larger catalog of well-known public
// MCP servers' tools (GitHub, GitLab, Slack, Postgres, SQLite, Git, Fetch,
// Puppeteer, Brave Search, Google Drive and Maps, Sentry, Notion, Linear,
// Stripe, Kubernetes, ...) written from their public documentation in
// testdata/public.json.
//
// [Evaluate] reports recall@5 and the mean reciprocal rank of a ranker;
// aitools' tests assert them and agentmcp-bench prints them.
package searcheval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// A Server is one server's catalog.
type Server struct {
	ID    string      `json:"server"`
	Tools []*mcp.Tool `json:"tools"`
}

// A Query is what a person types, and the tool ("server/tool") it should
// find.
type Query struct {
	Text string `json:"q"`
	Want string `json:"want"`
}

var (
	//go:embed testdata/reference.json
	referenceJSON []byte
	//go:embed testdata/public.json
	publicJSON []byte
	//go:embed testdata/queries.json
	queriesJSON []byte
)

// Reference returns the reference servers' catalogs, as they listed them.
func Reference() []Server {
	var out []Server
	mustDecode(referenceJSON, &out)
	return out
}

// Public returns the public servers' catalogs.
func Public() []Server {
	var doc struct {
		About   string `json:"about"`
		Servers []struct {
			Server string `json:"server"`
			Tools  []struct {
				Name        string     `json:"name"`
				Description string     `json:"description"`
				Params      [][]string `json:"params"`
			} `json:"tools"`
		} `json:"servers"`
	}
	mustDecode(publicJSON, &doc)
	var out []Server
	for _, s := range doc.Servers {
		srv := Server{ID: s.Server}
		for _, t := range s.Tools {
			props := map[string]any{}
			var required []any
			for _, p := range t.Params {
				name, typ, desc := p[0], p[1], p[2]
				if n, ok := strings.CutSuffix(name, "*"); ok {
					name = n
					required = append(required, name)
				}
				prop := map[string]any{"type": typ, "description": desc}
				if typ == "array" {
					prop["items"] = map[string]any{}
				}
				props[name] = prop
			}
			schema := map[string]any{"type": "object", "properties": props}
			if len(required) > 0 {
				schema["required"] = required
			}
			srv.Tools = append(srv.Tools, &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
		}
		out = append(out, srv)
	}
	return out
}

// Catalog returns the reference and the public catalogs as one, the way
// an agent with all of these servers would hold it.
func Catalog() []aitools.MCPTool {
	var out []aitools.MCPTool
	for _, s := range append(Reference(), Public()...) {
		for _, t := range s.Tools {
			out = append(out, aitools.MCPTool{ServerID: s.ID, Def: t})
		}
	}
	return out
}

// Scaled returns n tools: Catalog repeated under other server ids
// ("github", "github-2", ...), so that terms are spread as in real
// catalogs. It is the catalog the search latency is measured on.
func Scaled(n int) []aitools.MCPTool {
	base := Catalog()
	out := make([]aitools.MCPTool, 0, n)
	for copyN := 1; len(out) < n; copyN++ {
		for _, t := range base {
			if len(out) == n {
				break
			}
			id := t.ServerID
			if copyN > 1 {
				id = fmt.Sprintf("%s-%d", id, copyN)
			}
			out = append(out, aitools.MCPTool{ServerID: id, Def: t.Def})
		}
	}
	return out
}

// Queries returns the evaluation's queries.
func Queries() []Query {
	var out []Query
	mustDecode(queriesJSON, &out)
	return out
}

func mustDecode(data []byte, v any) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		panic(fmt.Sprintf("searcheval: testdata: %v", err)) // embedded; checked by the tests
	}
}

// A Miss is a query whose tool was not first.
type Miss struct {
	Query Query
	Rank  int      // the wanted tool's rank (1 is first), 0 when not in the top 10
	Top   []string // the first three found, "server/tool"
}

// Result is an evaluation's outcome.
type Result struct {
	Queries int
	// RecallAt5 is the share of queries whose tool is among the first 5.
	RecallAt5 float64
	// MRR is the mean of 1/rank of each query's tool (0 when it is not
	// in the first 10).
	MRR float64
	// Misses are the queries whose tool was not first.
	Misses []Miss
}

// Evaluate runs queries against idx, which must hold set.
func Evaluate(idx *aitools.Index, queries []Query) (Result, error) {
	r := Result{Queries: len(queries)}
	var hits5, rr float64
	for _, q := range queries {
		matches := idx.Search(q.Text, 10)
		rank := 0
		var top []string
		for i, m := range matches {
			id := m.Tool.ServerID + "/" + m.Tool.Name
			if i < 3 {
				top = append(top, id)
			}
			if id == q.Want && rank == 0 {
				rank = i + 1
			}
		}
		if rank > 0 && rank <= 5 {
			hits5++
		}
		if rank > 0 {
			rr += 1 / float64(rank)
		}
		if rank != 1 {
			r.Misses = append(r.Misses, Miss{Query: q, Rank: rank, Top: top})
		}
	}
	if len(queries) == 0 {
		return r, fmt.Errorf("no queries")
	}
	r.RecallAt5 = hits5 / float64(len(queries))
	r.MRR = rr / float64(len(queries))
	return r, nil
}

// Check reports the queries whose tool is in no catalog of cat.
func Check(cat []aitools.MCPTool, queries []Query) error {
	have := map[string]bool{}
	for _, t := range cat {
		have[t.ServerID+"/"+t.Def.Name] = true
	}
	var bad []string
	for _, q := range queries {
		if !have[q.Want] {
			bad = append(bad, fmt.Sprintf("%q wants %s", q.Text, q.Want))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("queries name tools no catalog has: %s", strings.Join(bad, "; "))
	}
	return nil
}
