package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agentmcp/agentmcp/aitools"
)

// DeferredOptions configures DeferredResponseTools. The zero value, or
// nil, gives the defaults each field documents.
type DeferredOptions struct {
	// Load marks the tools sent loaded (not deferred), as in aitools'
	// search mode: by server, by key or "server/tool", or by a predicate.
	// Nil loads none.
	Load *aitools.SearchModeOptions
	// Client makes the tool search client-executed: the model's
	// tool_search_call items come back to the caller, which answers them
	// with ResponseToolSearchOutputs (this package's index search). Nil
	// means the API's hosted tool search.
	Client *aitools.Index
}

// clientSearchDescription is what the model is told about a
// client-executed tool search.
const clientSearchDescription = "Search the available tools by what they do, with a short natural-language query; " +
	"the best matches are loaded for you to call."

// DeferredResponseTools returns the tool definitions of set for
// responses.ResponseNewParams.Tools with the Responses API's tool search:
// a tool_search tool, then the function tools of ResponseTools, each
// marked defer_loading unless opts.Load keeps it loaded. The model loads
// deferred tools by searching, then calls them by key as function_call
// items, which ResponseToolOutputs runs as usual.
//
// With opts.Client the search runs here: answer the response's
// tool_search_call items with ResponseToolSearchOutputs on the same
// index and ToolSet.
func DeferredResponseTools(set *aitools.ToolSet, opts *DeferredOptions) []responses.ToolUnionParam {
	var o DeferredOptions
	if opts != nil {
		o = *opts
	}
	search := &responses.ToolSearchToolParam{}
	if o.Client != nil {
		o.Client.Update(set)
		search.Execution = responses.ToolSearchToolExecutionClient
		search.Description = param.NewOpt(clientSearchDescription)
		search.Parameters = map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "What the tool should do, in a few words."},
			},
			"required":             []any{"query"},
			"additionalProperties": false,
		}
	}
	out := make([]responses.ToolUnionParam, 0, set.Len()+1)
	out = append(out, responses.ToolUnionParam{OfToolSearch: search})
	tools := set.Tools()
	for i, tool := range ResponseTools(set) {
		if !o.Load.Loads(tools[i]) {
			tool.OfFunction.DeferLoading = param.NewOpt(true)
		}
		out = append(out, tool)
	}
	return out
}

// ResponseToolSearchOutputs answers the client-executed tool_search_call
// items of a response's output: one tool_search_output item per call, in
// order, each with the call's call_id and the function tools of set that
// idx finds for its query (at most aitools.DefaultSearchResults; none for
// a call without a query). Other items are ignored.
func ResponseToolSearchOutputs(idx *aitools.Index, set *aitools.ToolSet, output []responses.ResponseOutputItemUnion) []responses.ResponseInputItemUnionParam {
	var items []responses.ResponseInputItemUnionParam
	for _, item := range output {
		if item.Type != "tool_search_call" {
			continue
		}
		call := item.AsToolSearchCall()
		if call.Execution != responses.ResponseToolSearchCallExecutionClient {
			continue
		}
		query := searchQuery(call.Arguments)
		found := &responses.ResponseToolSearchOutputItemParam{
			CallID:    param.NewOpt(call.CallID),
			Execution: responses.ResponseToolSearchOutputItemParamExecutionClient,
			Status:    responses.ResponseToolSearchOutputItemParamStatusCompleted,
			Tools:     []responses.ResponseToolSearchOutputItemParamToolUnion{},
		}
		if query != "" {
			idx.Update(set)
			for _, m := range idx.SearchFunc(query, aitools.DefaultSearchResults, func(t *aitools.Tool) bool {
				got, ok := set.Get(t.Key)
				return ok && got.Def == t.Def
			}) {
				found.Tools = append(found.Tools, responses.ResponseToolSearchOutputItemParamToolUnion{OfFunction: functionTool(m.Tool)})
			}
		}
		items = append(items, responses.ResponseInputItemUnionParam{OfToolSearchOutput: found})
	}
	return items
}

// searchQuery is the query of a tool_search_call's arguments: an object
// with "query", or that object as a JSON string.
func searchQuery(args any) string {
	if s, ok := args.(string); ok {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return s
		}
		args = m
	}
	if m, ok := args.(map[string]any); ok {
		if q, ok := m["query"]; ok {
			return fmt.Sprint(q)
		}
	}
	return ""
}
