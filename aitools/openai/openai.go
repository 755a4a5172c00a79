package openai

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentmcp/agentmcp/aitools"
)

// Options configures the dispatchers. The zero value, or nil, gives the
// defaults each field documents.
type Options struct {
	// Concurrency caps the calls run at once. Zero means
	// aitools.DefaultConcurrency (8).
	Concurrency int

	// Budget, if set, caps what each result puts in the model's context
	// (aitools.Budget.Text), keeps the rest, and answers calls of the read
	// meta-tool (offer it with ChatReadTool or ResponseReadTool). Nil
	// means results go in whole.
	Budget *aitools.Budget
}

func (o *Options) concurrency() int {
	if o == nil {
		return 0
	}
	return o.Concurrency
}

func (o *Options) budget() *aitools.Budget {
	if o == nil {
		return nil
	}
	return o.Budget
}

// execute runs calls, the read meta-tool's through the budget.
func (o *Options) execute(ctx context.Context, set *aitools.ToolSet, calls []aitools.Call) []aitools.Outcome {
	if b := o.budget(); b != nil {
		return b.ExecuteAll(ctx, set, calls, o.concurrency())
	}
	return set.ExecuteAll(ctx, calls, o.concurrency())
}

// ChatReadTool returns the read meta-tool (aitools.ReadToolName) as a
// function tool, to offer next to ChatTools when Options.Budget is set.
func ChatReadTool() openai.ChatCompletionToolUnionParam {
	def := aitools.ReadToolDef()
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: def.Name,
		Description: param.NewOpt(def.Description), Parameters: shared.FunctionParameters(def.InputSchema.(map[string]any))})
}

// ResponseReadTool is ChatReadTool for the Responses API.
func ResponseReadTool() responses.ToolUnionParam {
	def := aitools.ReadToolDef()
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: def.Name,
		Description: param.NewOpt(def.Description), Parameters: def.InputSchema.(map[string]any), Strict: param.NewOpt(false)}}
}

// description is what the model is told about t.
func description(t *aitools.Tool) string {
	if t.Description != "" {
		return t.Description
	}
	return t.Title
}

// ChatTools returns the function tool definitions of set, for
// ChatCompletionNewParams.Tools.
func ChatTools(set *aitools.ToolSet) []openai.ChatCompletionToolUnionParam {
	out := make([]openai.ChatCompletionToolUnionParam, 0, set.Len())
	for t := range set.All() {
		fn := shared.FunctionDefinitionParam{Name: t.Key, Parameters: shared.FunctionParameters(t.InputSchema)}
		if d := description(t); d != "" {
			fn.Description = param.NewOpt(d)
		}
		out = append(out, openai.ChatCompletionFunctionTool(fn))
	}
	return out
}

// ResponseTools returns the function tool definitions of set, for
// responses.ResponseNewParams.Tools. They are not strict: MCP schemas
// rarely meet strict mode's rules.
func ResponseTools(set *aitools.ToolSet) []responses.ToolUnionParam {
	out := make([]responses.ToolUnionParam, 0, set.Len())
	for t := range set.All() {
		out = append(out, responses.ToolUnionParam{OfFunction: functionTool(t)})
	}
	return out
}

// functionTool is t as a Responses API function tool.
func functionTool(t *aitools.Tool) *responses.FunctionToolParam {
	fn := &responses.FunctionToolParam{Name: t.Key, Parameters: t.InputSchema, Strict: param.NewOpt(false)}
	if d := description(t); d != "" {
		fn.Description = param.NewOpt(d)
	}
	return fn
}

// ChatToolMessages runs the tool calls of an assistant message and returns
// one tool message per call, in order, each with the call's tool_call_id:
// the messages to append (after the assistant message) for the next
// request.
func ChatToolMessages(ctx context.Context, set *aitools.ToolSet, calls []openai.ChatCompletionMessageToolCallUnion, opts *Options) []openai.ChatCompletionMessageParamUnion {
	batch := make([]aitools.Call, len(calls))
	for i, c := range calls {
		batch[i] = aitools.Call{ID: c.ID, Key: c.Function.Name, Args: json.RawMessage(c.Function.Arguments)}
		if c.Type == "custom" {
			// Custom tools are not ours: the call fails as an unknown tool.
			batch[i] = aitools.Call{ID: c.ID, Key: c.Custom.Name}
		}
	}
	outs := opts.execute(ctx, set, batch)
	msgs := make([]openai.ChatCompletionMessageParamUnion, len(outs))
	for i, o := range outs {
		msgs[i] = openai.ToolMessage(BudgetText(o, opts.budget()), o.Call.ID)
	}
	return msgs
}

// ResponseToolOutputs runs the function_call items of a response's output
// and returns one function_call_output item per call, in order, each with
// the call's call_id: the input items of the next request (with
// PreviousResponseID, or after the response's output items). Other items
// are ignored.
func ResponseToolOutputs(ctx context.Context, set *aitools.ToolSet, output []responses.ResponseOutputItemUnion, opts *Options) []responses.ResponseInputItemUnionParam {
	var batch []aitools.Call
	for _, item := range output {
		if item.Type == "function_call" {
			batch = append(batch, aitools.Call{ID: item.CallID, Key: item.Name, Args: json.RawMessage(item.Arguments.OfString)})
		}
	}
	outs := opts.execute(ctx, set, batch)
	items := make([]responses.ResponseInputItemUnionParam, len(outs))
	for i, o := range outs {
		items[i] = responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: param.NewOpt(o.Call.ID),
			Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(BudgetText(o, opts.budget()))},
		}}
	}
	return items
}

// Text is what the model is told about an outcome: the result as text
// ([aitools.ResultText]), or "Error: " and the error's message.
func Text(o aitools.Outcome) string { return BudgetText(o, nil) }

// BudgetText is Text with the result cut to b (aitools.Budget.Text); a
// nil b cuts nothing.
func BudgetText(o aitools.Outcome, b *aitools.Budget) string {
	if o.Err != nil {
		return "Error: " + o.Err.Error()
	}
	return b.Text(o.Result)
}
