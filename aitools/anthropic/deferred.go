package anthropic

import (
	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentmcp/agentmcp/aitools"
)

// DeferredOptions configures DeferredTools. The zero value, or nil, gives
// the defaults each field documents.
type DeferredOptions struct {
	// Load marks the tools sent loaded (their definitions in the model's
	// context from the start), as in aitools' search mode: by server, by
	// key or "server/tool", or by a predicate. Nil loads none.
	Load *aitools.SearchModeOptions
	// Regex selects the regex variant of the tool search tool
	// (tool_search_tool_regex_20251119), with which the model writes
	// regular expressions over tool names and descriptions. False selects
	// the BM25 variant (tool_search_tool_bm25_20251119), with which it
	// writes natural-language queries.
	Regex bool
}

// DeferredTools returns the tool definitions of set for
// MessageNewParams.Tools with the Messages API's deferred loading: the
// tool search tool first, then every tool of set, each marked
// defer_loading unless opts.Load marks it loaded. The API keeps deferred
// definitions out of the model's context until the tool search tool finds
// them; the model then calls them by key as usual, so ToolResults runs its
// calls unchanged (the server_tool_use and tool_search_tool_result blocks
// of the reply are the API's own, and ToolResults skips them).
func DeferredTools(set *aitools.ToolSet, opts *DeferredOptions) []anthropic.ToolUnionParam {
	var o DeferredOptions
	if opts != nil {
		o = *opts
	}
	out := make([]anthropic.ToolUnionParam, 0, set.Len()+1)
	if o.Regex {
		out = append(out, anthropic.ToolUnionParam{OfToolSearchToolRegex20251119: &anthropic.ToolSearchToolRegex20251119Param{
			Type: anthropic.ToolSearchToolRegex20251119TypeToolSearchToolRegex20251119}})
	} else {
		out = append(out, anthropic.ToolUnionParam{OfToolSearchToolBm25_20251119: &anthropic.ToolSearchToolBm25_20251119Param{
			Type: anthropic.ToolSearchToolBm25_20251119TypeToolSearchToolBm25_20251119}})
	}
	tools := set.Tools()
	for i, tool := range Tools(set) {
		if !o.Load.Loads(tools[i]) {
			tool.OfTool.DeferLoading = anthropic.Bool(true)
		}
		out = append(out, tool)
	}
	return out
}
