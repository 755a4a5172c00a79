package openai_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/aitools/internal/aitest"
	aiopenai "github.com/agentmcp/agentmcp/aitools/openai"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestChatBudget: with Options.Budget, a result over the budget reaches
// the model cut to it, with the handle to read on; the read meta-tool,
// offered with ChatReadTool (marshalled by the SDK), answers the model's
// read with the next part of the kept result.
func TestChatBudget(t *testing.T) {
	m := aitest.Manager(t)
	aitest.InProcess(t, m, "srv")
	set := m.AITools(mcpclient.Filter{})
	ctx := aitest.Ctx(t)
	big := strings.Repeat("héllo wörld ", 500)
	full := "echo: " + big
	budget := &aitools.Budget{MaxBytes: 400, Results: aitools.NewResults(nil)}

	callEcho := fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":"fake-model","choices":[{"index":0,"finish_reason":"tool_calls",
	"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_echo","type":"function","function":{"name":"tool_srv_echo","arguments":%q}}]}}]}`,
		fmt.Sprintf(`{"text":%q}`, big))
	callRead := `{"id":"c2","object":"chat.completion","created":2,"model":"fake-model","choices":[{"index":0,"finish_reason":"tool_calls",
	"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_read","type":"function","function":{"name":"read_tool_result","arguments":"{\"handle\":\"r1\",\"offset\":300}"}}]}}]}`
	final := `{"id":"c3","object":"chat.completion","created":3,"model":"fake-model","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Done."}}]}`

	fake := aitest.Serve(t,
		aitest.Step{Path: "/v1/chat/completions", Reply: callEcho, Check: func(t testing.TB, body map[string]any) {
			names := functionNames(body["tools"], "function", "name")
			if !slices.Contains(names, aitools.ReadToolName) {
				t.Errorf("request 1: the read tool is missing from %v", names)
			}
		}},
		aitest.Step{Path: "/v1/chat/completions", Reply: callRead, Check: func(t testing.TB, body map[string]any) {
			got, _ := toolMessages(body)["call_echo"].(string)
			if len(got) > 400 || !strings.Contains(got, `handle "r1"`) || !strings.HasPrefix(full, got[:strings.Index(got, "\n[result cut")]) {
				t.Errorf("request 2: the cut result is %d bytes: %q", len(got), got)
			}
		}},
		aitest.Step{Path: "/v1/chat/completions", Reply: final, Check: func(t testing.TB, body map[string]any) {
			got, _ := toolMessages(body)["call_read"].(string)
			chunk, _, _ := strings.Cut(got, "\n[bytes ")
			if len(chunk) == 0 || len(chunk) > 400 || !strings.HasPrefix(full[300:], chunk) {
				t.Errorf("request 3: the read answered %q", got)
			}
		}},
	)
	c := client(fake)
	params := openai.ChatCompletionNewParams{
		Model:    "fake-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Echo a lot.")},
		Tools:    append(aiopenai.ChatTools(set), aiopenai.ChatReadTool()),
	}
	opts := &aiopenai.Options{Budget: budget}
	for turn := 0; turn < 5; turn++ {
		resp, err := c.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			break
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, aiopenai.ChatToolMessages(ctx, set, msg.ToolCalls, opts)...)
	}
}
