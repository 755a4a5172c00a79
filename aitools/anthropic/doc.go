// Package anthropic adapts an [aitools.ToolSet] to the Anthropic Go SDK,
// github.com/anthropics/anthropic-sdk-go/v2: tool definitions for the
// Messages API, and a dispatcher that runs a reply's tool_use blocks and
// returns the tool_result blocks of the next user message.
//
// Its name clashes with the SDK's; import it under another, for example
// aianthropic.
//
// # Usage
//
//	set := manager.AITools(mcpclient.Filter{})
//	params := anthropic.MessageNewParams{Model: model, MaxTokens: 1024, Messages: msgs, Tools: aianthropic.Tools(set)}
//	for {
//		msg, err := client.Messages.New(ctx, params)
//		...
//		if msg.StopReason != anthropic.StopReasonToolUse {
//			break
//		}
//		params.Messages = append(params.Messages, msg.ToParam(),
//			anthropic.NewUserMessage(aianthropic.ToolResults(ctx, set, msg.Content, nil)...))
//	}
//
// # Deferred loading
//
// With many tools, DeferredTools gives the Messages API's tool search
// instead: the tool search tool (BM25, or regex with
// DeferredOptions.Regex) and every tool marked defer_loading, but those
// DeferredOptions.Load keeps loaded. The API finds deferred tools for the
// model; their calls are tool_use blocks like any other, run by
// ToolResults. For a model or provider without it, aitools' search mode
// (aitools.Index.SearchMode, mcpclient.Manager.SearchMode) does the same
// on this side: pass its ToolSet to Tools and ToolResults.
//
// # Concurrency
//
// The functions are safe for concurrent use. ToolResults runs the calls
// in parallel, at most Options.Concurrency at a time, and returns when all
// have ended.
//
// # Errors
//
// ToolResults returns no error: every tool_use gets its tool_result, and
// one that failed (unknown tool, invalid arguments, a tool error, a
// transport failure, a panic) has is_error set and the error's text,
// which is written for the model. Tool definitions share the ToolSet's
// schemas, which must not be modified.
package anthropic
