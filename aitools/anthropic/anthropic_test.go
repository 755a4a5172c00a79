package anthropic_test

import (
	"encoding/base64"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	aianthropic "github.com/agentmcp/agentmcp/aitools/anthropic"
	"github.com/agentmcp/agentmcp/aitools/internal/aitest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const replyToolUse = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-fake","stop_reason":"tool_use","stop_sequence":null,
	"usage":{"input_tokens":10,"output_tokens":10},"content":[
	{"type":"text","text":"Let me use the tools."},
	{"type":"tool_use","id":"toolu_slow","name":"tool_srv_slow","input":{}},
	{"type":"tool_use","id":"toolu_release","name":"tool_srv_release","input":{}},
	{"type":"tool_use","id":"toolu_add","name":"tool_srv_add","input":{"a":2,"b":3}},
	{"type":"tool_use","id":"toolu_fail","name":"tool_srv_fail","input":{}},
	{"type":"tool_use","id":"toolu_bad","name":"tool_srv_add","input":{"a":2.5,"b":3}},
	{"type":"tool_use","id":"toolu_echo","name":"tool_everything_echo","input":{"message":"hi"}},
	{"type":"tool_use","id":"toolu_sum","name":"tool_everything_get-sum","input":{"a":"x"}},
	{"type":"tool_use","id":"toolu_image","name":"tool_everything_get-tiny-image","input":{}}]}`

const replyFinal = `{"id":"msg_2","type":"message","role":"assistant","model":"claude-fake","stop_reason":"end_turn","stop_sequence":null,
	"usage":{"input_tokens":10,"output_tokens":10},"content":[{"type":"text","text":"All done."}]}`

// result is a tool_result block, simplified for comparison.
type result struct {
	IsError bool
	Texts   []string
	Images  []string // media types
}

// TestEndToEnd is acceptance test 2 for Anthropic: the real SDK client, a
// scripted fake model, and the dispatcher running tool_use blocks against
// a go-sdk server in process and server-everything over stdio.
func TestEndToEnd(t *testing.T) {
	m := aitest.Manager(t)
	srv := aitest.InProcess(t, m, "srv")
	aitest.Everything(t, m, "everything", "echo", "get-sum", "get-tiny-image")
	set := m.AITools(mcpclient.Filter{})
	ctx := aitest.Ctx(t)

	fake := aitest.Serve(t,
		aitest.Step{Path: "/v1/messages", Reply: replyToolUse, Check: func(t testing.TB, body map[string]any) {
			var names []string
			for _, tool := range body["tools"].([]any) {
				names = append(names, aitest.Get(tool, "name").(string))
				switch aitest.Get(tool, "name") {
				case "tool_srv_add":
					want := `{"description":"Adds two integers.","input_schema":{"additionalProperties":false,"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"},"name":"tool_srv_add"}`
					if got := aitest.JSON(tool); got != want {
						t.Errorf("request 1: add is\n%s\nwant\n%s", got, want)
					}
				case "tool_everything_get-sum":
					if aitest.Get(tool, "input_schema", "$schema") != "http://json-schema.org/draft-07/schema#" ||
						aitest.Get(tool, "input_schema", "required", 1) != "b" {
						t.Errorf("request 1: get-sum is %s", aitest.JSON(tool))
					}
				}
			}
			for _, want := range []string{"tool_srv_add", "tool_srv_fail", "tool_everything_echo", "tool_everything_get-tiny-image"} {
				if !slices.Contains(names, want) {
					t.Errorf("request 1: tool %s missing from %v", want, names)
				}
			}
			if len(names) != set.Len() {
				t.Errorf("request 1: %d tools, want %d", len(names), set.Len())
			}
		}},
		aitest.Step{Path: "/v1/messages", Reply: replyFinal, Check: func(t testing.TB, body map[string]any) {
			msgs := body["messages"].([]any)
			if len(msgs) != 3 || aitest.Get(msgs, 1, "role") != "assistant" || aitest.Get(msgs, 2, "role") != "user" {
				t.Errorf("request 2: messages %s", aitest.JSON(msgs))
				return
			}
			var order []string
			got := map[string]result{}
			for _, block := range aitest.Get(msgs, 2, "content").([]any) {
				if aitest.Get(block, "type") != "tool_result" {
					t.Errorf("request 2: block %s", aitest.JSON(block))
					continue
				}
				id := aitest.Get(block, "tool_use_id").(string)
				order = append(order, id)
				r := result{IsError: aitest.Get(block, "is_error") == true}
				content, _ := aitest.Get(block, "content").([]any)
				for _, c := range content {
					switch aitest.Get(c, "type") {
					case "text":
						r.Texts = append(r.Texts, aitest.Get(c, "text").(string))
					case "image":
						mt := aitest.Get(c, "source", "media_type").(string)
						data, err := base64.StdEncoding.DecodeString(aitest.Get(c, "source", "data").(string))
						if err != nil || len(data) < 8 || string(data[1:4]) != "PNG" {
							t.Errorf("request 2: image data %v, %q", err, data)
						}
						r.Images = append(r.Images, mt)
					}
				}
				got[id] = r
			}
			wantOrder := []string{"toolu_slow", "toolu_release", "toolu_add", "toolu_fail", "toolu_bad", "toolu_echo", "toolu_sum", "toolu_image"}
			if diff := cmp.Diff(wantOrder, order); diff != "" {
				t.Errorf("request 2: tool_result order (-want +got):\n%s", diff)
			}
			img := got["toolu_image"]
			if len(img.Images) != 1 || img.Images[0] != "image/png" || img.IsError {
				t.Errorf("request 2: get-tiny-image gave %+v", img)
			}
			delete(got, "toolu_image")
			want := map[string]result{
				"toolu_slow":    {Texts: []string{"released"}},
				"toolu_release": {Texts: []string{"released"}},
				"toolu_add":     {Texts: []string{"5"}},
				"toolu_fail":    {IsError: true, Texts: []string{"it failed"}},
				"toolu_bad":     {IsError: true, Texts: []string{`invalid arguments for tool "tool_srv_add": argument "a": got number, want integer`}},
				"toolu_echo":    {Texts: []string{"Echo: hi"}},
				"toolu_sum":     {IsError: true, Texts: []string{`invalid arguments for tool "tool_everything_get-sum": missing property 'b'; argument "a": got string, want number`}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request 2: tool results (-want +got):\n%s", diff)
			}
		}},
	)

	c := anthropic.NewClient(option.WithBaseURL(fake.URL+"/"), option.WithAPIKey("sk-ant-test-fake"), option.WithMaxRetries(0))
	params := anthropic.MessageNewParams{
		Model:     "claude-fake",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Use the tools."))},
		Tools:     aianthropic.Tools(set),
	}
	var answer string
	for turn := 0; turn < 5; turn++ {
		msg, err := c.Messages.New(ctx, params)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if msg.StopReason != anthropic.StopReasonToolUse {
			answer = msg.Content[0].Text
			break
		}
		params.Messages = append(params.Messages, msg.ToParam(),
			anthropic.NewUserMessage(aianthropic.ToolResults(ctx, set, msg.Content, nil)...))
	}
	if answer != "All done." {
		t.Errorf("answer %q", answer)
	}
	if srv.Increments.Load() != 0 {
		t.Errorf("increment ran")
	}
}
