package aitools

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The keys of the meta-tools of search mode. Keys of MCP tools start with
// "tool_", so they never collide with these.
const (
	SearchToolKey = "search_tools"
	CallToolKey   = "call_tool"
)

// Search mode's limits on search_tools' results.
const (
	DefaultSearchResults = 5
	MaxSearchResults     = 20
)

// SearchModeOptions configures [Index.SearchMode]. The zero value, or nil,
// gives the defaults each field documents.
type SearchModeOptions struct {
	// AlwaysLoadedServers are servers (by id) whose tools are offered to
	// the model directly, besides the meta-tools. Nil means none.
	AlwaysLoadedServers []string
	// AlwaysLoadedTools are tools offered directly, by key or by
	// "serverID/toolName". Nil means none.
	AlwaysLoadedTools []string
	// AlwaysLoaded, if set, offers directly every tool it accepts, besides
	// those named above.
	AlwaysLoaded func(*Tool) bool
	// Results is how many matches search_tools returns when the model
	// does not say. Zero means DefaultSearchResults (5); it is capped at
	// MaxSearchResults (20).
	Results int
}

// Loads reports whether o marks t always loaded: offered to the model
// with its definition, not deferred to a search. A nil o loads none. The
// adapters' deferred loading (aitools/anthropic, aitools/openai) uses it
// too.
func (o *SearchModeOptions) Loads(t *Tool) bool {
	keep := o.alwaysLoaded()
	return keep != nil && keep(t)
}

// alwaysLoaded returns the predicate the options describe, or nil.
func (o *SearchModeOptions) alwaysLoaded() func(*Tool) bool {
	if o == nil || len(o.AlwaysLoadedServers) == 0 && len(o.AlwaysLoadedTools) == 0 && o.AlwaysLoaded == nil {
		return nil
	}
	return func(t *Tool) bool {
		return slices.Contains(o.AlwaysLoadedServers, t.ServerID) ||
			slices.Contains(o.AlwaysLoadedTools, t.Key) ||
			slices.Contains(o.AlwaysLoadedTools, t.ServerID+"/"+t.Name) ||
			o.AlwaysLoaded != nil && o.AlwaysLoaded(t)
	}
}

// SearchMode updates the index with set and returns the ToolSet to offer
// a model that should find its tools by search rather than see them all:
// two meta-tools, then the always-loaded tools of set. When set was
// selected ([ToolSet.Select]) from the ToolSet the index holds, the index
// is left as it is and searches keep to set's tools.
//
//   - search_tools {"query": string, "limit"?: integer} answers the best
//     matches for a natural-language query ([Index.Search]), as JSON:
//     {"tools": [{"key", "server", "name", "title", "description",
//     "inputSchema", "score"}, ...]}, best first (and a "note" when
//     nothing matches).
//   - call_tool {"key": string, "arguments"?: object} calls the tool with
//     key, exactly as calling it by its key would: its arguments are
//     validated against its input schema, and its errors are the same
//     ([*ArgumentsError], [*ToolError], ErrUnknownTool).
//
// Every tool of set can also be called by its own key through the
// returned ToolSet ([ToolSet.Get] and [ToolSet.Execute] find it), though
// [ToolSet.All] lists only the meta-tools and the always-loaded tools: a
// model that calls a key it found by search directly is served.
func (idx *Index) SearchMode(set *ToolSet, opts *SearchModeOptions) *ToolSet {
	idx.mu.RLock()
	selected := set != nil && set.from != nil && set.from == idx.set
	idx.mu.RUnlock()
	if !selected {
		idx.Update(set)
	}
	results := DefaultSearchResults
	if opts != nil && opts.Results > 0 {
		results = min(opts.Results, MaxSearchResults)
	}
	cfg := defaultConfig()
	for t := range set.All() {
		cfg = t.cfg
		break
	}
	out := &ToolSet{byKey: map[string]int{}, fallback: set}
	m := &metaTools{idx: idx, set: set, results: results}
	out.tools = append(out.tools,
		metaTool(SearchToolKey, searchToolDescription, searchToolSchema(results), m.search, cfg),
		metaTool(CallToolKey, callToolDescription, callToolSchema, m.call, cfg))
	if keep := opts.alwaysLoaded(); keep != nil {
		for t := range set.All() {
			if keep(t) {
				out.tools = append(out.tools, *t)
			}
		}
	}
	for i, t := range out.tools {
		out.byKey[t.Key] = i
	}
	for _, c := range set.collisions {
		if slices.ContainsFunc(c.Tools, func(r ToolRef) bool { _, ok := out.byKey[r.Key]; return ok }) {
			out.collisions = append(out.collisions, c)
		}
	}
	return out
}

const searchToolDescription = "Search the available tools by what they do. " +
	"Give a short natural-language query (for example \"create a github issue\" or \"read a file\"); " +
	"the answer lists the best matching tools, best first, each with its key, description and input schema. " +
	"Then call one with " + CallToolKey + ", giving its key and arguments that match its input schema."

const callToolDescription = "Call a tool found with " + SearchToolKey + ": give its key and its arguments " +
	"(a JSON object that matches the tool's input schema)."

func searchToolSchema(results int) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "minLength": 1,
				"description": "What the tool should do, in a few words."},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxSearchResults,
				"description": fmt.Sprintf("How many tools to return (default %d).", results)},
		},
		"required":             []any{"query"},
		"additionalProperties": false,
	}
}

var callToolSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"key":       map[string]any{"type": "string", "minLength": 1, "description": "The tool's key, as " + SearchToolKey + " gave it."},
		"arguments": map[string]any{"type": "object", "description": "The tool's arguments."},
	},
	"required":             []any{"key"},
	"additionalProperties": false,
}

// defaultConfig is the config of a Cache made with no options.
func defaultConfig() *config {
	return &config{logger: slog.New(slog.DiscardHandler), maxSchemaBytes: 1 << 20, maxArgumentBytes: 1 << 20}
}

// metaTool returns a Tool that is served by call, not by an MCP server.
func metaTool(key, desc string, in map[string]any, call Caller, cfg *config) Tool {
	raw, err := json.Marshal(in)
	if err != nil {
		panic(err) // the schemas above are plain JSON
	}
	s := newSchema(in, raw, sha256.Sum256(raw), nil)
	return Tool{
		Key:         key,
		Name:        key,
		Description: desc,
		InputSchema: s.m,
		Def:         &mcp.Tool{Name: key, Description: desc, InputSchema: in},
		in:          s,
		call:        call,
		cfg:         cfg,
	}
}

// metaTools serves the meta-tools of one search-mode ToolSet.
type metaTools struct {
	idx     *Index
	set     *ToolSet
	results int
}

// A SearchResult is one match as search_tools returns it.
type SearchResult struct {
	Key         string          `json:"key"`
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Score       float64         `json:"score"`
}

// SearchResults returns the matches as search_tools returns them.
func SearchResults(matches []Match) []SearchResult {
	out := make([]SearchResult, len(matches))
	for i, m := range matches {
		t := m.Tool
		out[i] = SearchResult{Key: t.Key, Server: t.ServerID, Name: t.Name, Title: t.Title,
			Description: t.Description, InputSchema: t.InputSchemaJSON(), Score: math.Round(m.Score*1000) / 1000}
	}
	return out
}

func (m *metaTools) search(_ context.Context, _, _ string, args map[string]any) (*mcp.CallToolResult, error) {
	query, _ := args["query"].(string)
	limit := m.results
	if n, ok := args["limit"].(json.Number); ok {
		if v, err := n.Int64(); err == nil && v > 0 {
			limit = int(min(v, MaxSearchResults))
		}
	}
	// Only tools of the ToolSet this mode was made from: the index may
	// have moved on to a newer one.
	matches := m.idx.SearchFunc(query, limit, func(t *Tool) bool {
		got, ok := m.set.Get(t.Key)
		return ok && got.Def == t.Def
	})
	body := map[string]any{"tools": SearchResults(matches)}
	if len(matches) == 0 {
		body["note"] = "no tool matches the query; try other words"
	}
	text, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding search results: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
}

func (m *metaTools) call(ctx context.Context, _, _ string, args map[string]any) (*mcp.CallToolResult, error) {
	key, _ := args["key"].(string)
	t, ok := m.set.Get(key)
	if !ok {
		return nil, fmt.Errorf("%w %q (search with %s for the keys of the tools)", ErrUnknownTool, key, SearchToolKey)
	}
	inner, _ := args["arguments"].(map[string]any)
	return t.ExecuteMap(ctx, inner)
}
