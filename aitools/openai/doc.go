// Package openai adapts an [aitools.ToolSet] to the OpenAI Go SDK,
// github.com/openai/openai-go/v3: tool definitions for Chat Completions
// and for the Responses API, and dispatchers that run a reply's tool
// calls and return what the next request must carry.
//
// Its name clashes with the SDK's; import it under another, for example
// aiopenai.
//
// # Usage
//
//	set := manager.AITools(mcpclient.Filter{})
//	params := openai.ChatCompletionNewParams{Model: model, Messages: msgs, Tools: aiopenai.ChatTools(set)}
//	for {
//		resp, err := client.Chat.Completions.New(ctx, params)
//		...
//		msg := resp.Choices[0].Message
//		if len(msg.ToolCalls) == 0 {
//			break // msg.Content is the answer
//		}
//		params.Messages = append(params.Messages, msg.ToParam())
//		params.Messages = append(params.Messages, aiopenai.ChatToolMessages(ctx, set, msg.ToolCalls, nil)...)
//	}
//
// With the Responses API, ResponseTools gives the definitions and
// ResponseToolOutputs the function_call_output items for a response's
// function_call items.
//
// # Deferred loading
//
// With many tools, DeferredResponseTools gives the Responses API's tool
// search instead: a tool_search tool and every function tool marked
// defer_loading, but those DeferredOptions.Load keeps loaded. The API's
// hosted search loads deferred tools for the model, whose calls are
// function_call items as usual. With DeferredOptions.Client the search is
// client-executed: ResponseToolSearchOutputs answers the response's
// tool_search_call items with the tools aitools' index finds. Chat
// Completions has no tool search: use aitools' search mode
// (mcpclient.Manager.SearchMode) and pass its ToolSet to ChatTools and
// ChatToolMessages.
//
// # Concurrency
//
// The functions are safe for concurrent use. The dispatchers run a
// reply's calls in parallel, at most Options.Concurrency at a time, and
// return when all have ended.
//
// # Errors
//
// The dispatchers return no error: every call gets its message, and a
// call that failed (unknown tool, invalid arguments, a tool error, a
// transport failure, a panic) gets "Error: " and the error's text, which
// is written for the model. Tool definitions share the ToolSet's schemas,
// which must not be modified.
package openai
