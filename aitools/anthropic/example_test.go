package anthropic_test

import (
	"context"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	aianthropic "github.com/agentmcp/agentmcp/aitools/anthropic"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// Example is an agent loop over the Messages API with the tools of a
// Manager's servers.
func Example() {
	ctx := context.Background()
	m := mcpclient.New(nil) // with servers registered and connected
	defer m.Close(ctx)
	client := anthropic.NewClient() // ANTHROPIC_API_KEY

	set := m.AITools(mcpclient.Filter{})
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is on my calendar today?"))},
		Tools:     aianthropic.Tools(set),
	}
	for range 10 {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			fmt.Println(err)
			return
		}
		if msg.StopReason != anthropic.StopReasonToolUse {
			for _, b := range msg.Content {
				fmt.Print(b.Text)
			}
			return
		}
		params.Messages = append(params.Messages, msg.ToParam(),
			anthropic.NewUserMessage(aianthropic.ToolResults(ctx, set, msg.Content, nil)...))
	}
}
