package anthropic_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentmcp/agentmcp/aitools"
	aianthropic "github.com/agentmcp/agentmcp/aitools/anthropic"
	"github.com/agentmcp/agentmcp/aitools/internal/aitest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// replySearchThenUse is a reply in which the API's tool search found
// tool_srv_add and the model called it.
const replySearchThenUse = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-fake","stop_reason":"tool_use","stop_sequence":null,
	"usage":{"input_tokens":10,"output_tokens":10},"content":[
	{"type":"server_tool_use","id":"srvtoolu_1","name":"tool_search_tool_bm25","input":{"query":"add two integers"},"caller":{"type":"direct"}},
	{"type":"tool_search_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"tool_srv_add"}]}},
	{"type":"tool_use","id":"toolu_add","name":"tool_srv_add","input":{"a":2,"b":3}}]}`

// TestDeferredTools: the real SDK client sends the tool search tool and
// every tool with defer_loading but the always-loaded ones; a reply with
// the API's tool search blocks goes back in the conversation as the SDK
// writes it, and the tool the model found runs.
func TestDeferredTools(t *testing.T) {
	m := aitest.Manager(t)
	aitest.InProcess(t, m, "srv")
	aitest.InProcess(t, m, "other")
	set := m.AITools(mcpclient.Filter{})
	ctx := aitest.Ctx(t)

	checkTools := func(t testing.TB, body map[string]any, search string) {
		tools := body["tools"].([]any)
		if len(tools) != set.Len()+1 {
			t.Errorf("%d tools, want %d and the tool search tool", len(tools), set.Len())
			return
		}
		if aitest.Get(tools, 0, "type") != search+"_20251119" || aitest.Get(tools, 0, "name") != search {
			t.Errorf("first tool %s, want %s", aitest.JSON(tools[0]), search)
		}
		for _, tool := range tools[1:] {
			name := aitest.Get(tool, "name").(string)
			deferred := aitest.Get(tool, "defer_loading") == true
			loaded := len(name) > len("tool_other_") && name[:len("tool_other_")] == "tool_other_"
			if deferred == loaded || aitest.Get(tool, "input_schema") == nil {
				t.Errorf("tool %s: defer_loading %v, want %v", aitest.JSON(tool), deferred, !loaded)
			}
		}
	}
	fake := aitest.Serve(t,
		aitest.Step{Path: "/v1/messages", Reply: replySearchThenUse, Check: func(t testing.TB, body map[string]any) {
			checkTools(t, body, "tool_search_tool_bm25")
		}},
		aitest.Step{Path: "/v1/messages", Reply: replyFinal, Check: func(t testing.TB, body map[string]any) {
			msgs := body["messages"].([]any)
			if len(msgs) != 3 {
				t.Fatalf("request 2: messages %s", aitest.JSON(msgs))
			}
			if aitest.Get(msgs, 1, "content", 0, "type") != "server_tool_use" || aitest.Get(msgs, 1, "content", 1, "type") != "tool_search_tool_result" ||
				aitest.Get(msgs, 1, "content", 1, "content", "tool_references", 0, "tool_name") != "tool_srv_add" {
				t.Errorf("request 2: the assistant's tool search blocks: %s", aitest.JSON(msgs[1]))
			}
			if aitest.Get(msgs, 2, "content", 0, "tool_use_id") != "toolu_add" || aitest.Get(msgs, 2, "content", 0, "content", 0, "text") != "5" {
				t.Errorf("request 2: the tool result: %s", aitest.JSON(msgs[2]))
			}
			if len(aitest.Get(msgs, 2, "content").([]any)) != 1 {
				t.Errorf("request 2: results for blocks that are not tool_use: %s", aitest.JSON(msgs[2]))
			}
		}},
		aitest.Step{Path: "/v1/messages", Reply: replyFinal, Check: func(t testing.TB, body map[string]any) {
			checkTools(t, body, "tool_search_tool_regex")
		}},
	)
	c := anthropic.NewClient(option.WithBaseURL(fake.URL+"/"), option.WithAPIKey("sk-ant-test-fake"), option.WithMaxRetries(0))
	load := &aitools.SearchModeOptions{AlwaysLoadedServers: []string{"other"}}
	params := anthropic.MessageNewParams{
		Model:     "claude-fake",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is 2+3?"))},
		Tools:     aianthropic.DeferredTools(set, &aianthropic.DeferredOptions{Load: load}),
	}
	msg, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(aianthropic.ToolResults(ctx, set, msg.Content, nil)...))
	if msg, err = c.Messages.New(ctx, params); err != nil || msg.Content[0].Text != "All done." {
		t.Fatalf("request 2: %v, %v", msg, err)
	}
	params.Tools = aianthropic.DeferredTools(set, &aianthropic.DeferredOptions{Load: load, Regex: true})
	if _, err := c.Messages.New(ctx, params); err != nil {
		t.Fatal(err)
	}
}
