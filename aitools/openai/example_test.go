package openai_test

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"

	aiopenai "github.com/agentmcp/agentmcp/aitools/openai"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// Example is an agent loop over Chat Completions with the tools of a
// Manager's servers.
func Example() {
	ctx := context.Background()
	m := mcpclient.New(nil) // with servers registered and connected
	defer m.Close(ctx)
	client := openai.NewClient() // OPENAI_API_KEY, OPENAI_BASE_URL

	set := m.AITools(mcpclient.Filter{})
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-5-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is on my calendar today?")},
		Tools:    aiopenai.ChatTools(set),
	}
	for range 10 {
		resp, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			fmt.Println(err)
			return
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			fmt.Println(msg.Content)
			return
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, aiopenai.ChatToolMessages(ctx, set, msg.ToolCalls, nil)...)
	}
}
