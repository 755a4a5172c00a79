package openai_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/aitools/internal/aitest"
	aiopenai "github.com/agentmcp/agentmcp/aitools/openai"
	"github.com/agentmcp/agentmcp/mcpclient"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client is the real SDK client, pointed at the fake model.
func client(s *aitest.Script) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.URL+"/v1/"), option.WithAPIKey("sk-test-fake"), option.WithMaxRetries(0))
}

// toolMessages returns tool_call_id -> content of the tool messages in a
// chat request.
func toolMessages(body map[string]any) map[string]any {
	out := map[string]any{}
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		if aitest.Get(m, "role") == "tool" {
			out[aitest.Get(m, "tool_call_id").(string)] = aitest.Get(m, "content")
		}
	}
	return out
}

// functionNames returns the names of the function tools of a request.
func functionNames(tools any, path ...any) []string {
	var names []string
	list, _ := tools.([]any)
	for _, tool := range list {
		if name, ok := aitest.Get(tool, path...).(string); ok {
			names = append(names, name)
		}
	}
	return names
}

const chatReplyCalls1 = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"fake-model","choices":[{"index":0,"finish_reason":"tool_calls",
	"message":{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_slow","type":"function","function":{"name":"tool_srv_slow","arguments":"{}"}},
		{"id":"call_release","type":"function","function":{"name":"tool_srv_release","arguments":"{}"}},
		{"id":"call_echo","type":"function","function":{"name":"tool_everything_echo","arguments":"{\"message\":\"hi\"}"}}]}}]}`

const chatReplyCalls2 = `{"id":"chatcmpl-2","object":"chat.completion","created":2,"model":"fake-model","choices":[{"index":0,"finish_reason":"tool_calls",
	"message":{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_fail","type":"function","function":{"name":"tool_srv_fail","arguments":"{}"}},
		{"id":"call_bad","type":"function","function":{"name":"tool_everything_get-sum","arguments":"{\"a\":\"two\",\"b\":1}"}},
		{"id":"call_add","type":"function","function":{"name":"tool_srv_add","arguments":"{\"a\":2,\"b\":3}"}},
		{"id":"call_sum","type":"function","function":{"name":"tool_everything_get-sum","arguments":"{\"a\":2,\"b\":3}"}},
		{"id":"call_nope","type":"function","function":{"name":"tool_nope","arguments":"{}"}}]}}]}`

const chatReplyFinal = `{"id":"chatcmpl-3","object":"chat.completion","created":3,"model":"fake-model","choices":[{"index":0,"finish_reason":"stop",
	"message":{"role":"assistant","content":"All done."}}]}`

// TestChatEndToEnd is acceptance test 2 for Chat Completions: the real
// SDK client, a scripted fake model, and the dispatcher running the calls
// against a go-sdk server in process and server-everything over stdio.
func TestChatEndToEnd(t *testing.T) {
	m := aitest.Manager(t)
	srv := aitest.InProcess(t, m, "srv")
	aitest.Everything(t, m, "everything", "echo", "get-sum")
	set := m.AITools(mcpclient.Filter{})
	ctx := aitest.Ctx(t)

	fake := aitest.Serve(t,
		aitest.Step{Path: "/v1/chat/completions", Reply: chatReplyCalls1, Check: func(t testing.TB, body map[string]any) {
			names := functionNames(body["tools"], "function", "name")
			for _, want := range []string{"tool_srv_add", "tool_srv_slow", "tool_srv_release", "tool_srv_fail", "tool_everything_echo", "tool_everything_get-sum"} {
				if !slices.Contains(names, want) {
					t.Errorf("request 1: tool %s missing from %v", want, names)
				}
			}
			if len(names) != set.Len() {
				t.Errorf("request 1: %d tools, want %d", len(names), set.Len())
			}
			for _, tool := range body["tools"].([]any) {
				switch aitest.Get(tool, "function", "name") {
				case "tool_srv_add":
					if aitest.Get(tool, "type") != "function" || aitest.Get(tool, "function", "description") != "Adds two integers." ||
						aitest.Get(tool, "function", "parameters", "properties", "a", "type") != "integer" {
						t.Errorf("request 1: add is %s", aitest.JSON(tool))
					}
				case "tool_everything_echo":
					if aitest.Get(tool, "function", "parameters", "properties", "message", "type") != "string" {
						t.Errorf("request 1: echo is %s", aitest.JSON(tool))
					}
				}
			}
		}},
		aitest.Step{Path: "/v1/chat/completions", Reply: chatReplyCalls2, Check: func(t testing.TB, body map[string]any) {
			want := map[string]any{"call_slow": "released", "call_release": "released", "call_echo": "Echo: hi"}
			if diff := cmp.Diff(want, toolMessages(body)); diff != "" {
				t.Errorf("request 2: tool messages (-want +got):\n%s", diff)
			}
			msgs := body["messages"].([]any)
			if len(msgs) != 5 || aitest.Get(msgs, 1, "role") != "assistant" || aitest.Get(msgs, 1, "tool_calls", 2, "id") != "call_echo" {
				t.Errorf("request 2: messages %s", aitest.JSON(msgs))
			}
		}},
		aitest.Step{Path: "/v1/chat/completions", Reply: chatReplyFinal, Check: func(t testing.TB, body map[string]any) {
			want := map[string]any{
				"call_slow": "released", "call_release": "released", "call_echo": "Echo: hi",
				"call_fail": "Error: it failed",
				"call_bad":  `Error: invalid arguments for tool "tool_everything_get-sum": argument "a": got string, want number`,
				"call_add":  "5",
				"call_sum":  "The sum of 2 and 3 is 5.",
				"call_nope": `Error: unknown tool "tool_nope"`,
			}
			if diff := cmp.Diff(want, toolMessages(body)); diff != "" {
				t.Errorf("request 3: tool messages (-want +got):\n%s", diff)
			}
		}},
	)

	c := client(fake)
	params := openai.ChatCompletionNewParams{
		Model:    "fake-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Use the tools.")},
		Tools:    aiopenai.ChatTools(set),
	}
	var answer string
	for turn := 0; turn < 5; turn++ {
		resp, err := c.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			answer = msg.Content
			break
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, aiopenai.ChatToolMessages(ctx, set, msg.ToolCalls, nil)...)
	}
	if answer != "All done." {
		t.Errorf("answer %q", answer)
	}
	if srv.Increments.Load() != 0 {
		t.Errorf("increment ran")
	}
}

const responsesCalls = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"fake-model","output":[
	{"type":"function_call","id":"fc_1","call_id":"call_add","name":"tool_srv_add","arguments":"{\"a\":1,\"b\":2}","status":"completed"},
	{"type":"function_call","id":"fc_2","call_id":"call_bad","name":"tool_srv_add","arguments":"{\"a\":1}","status":"completed"},
	{"type":"function_call","id":"fc_3","call_id":"call_inc","name":"tool_srv_increment","arguments":"","status":"completed"},
	{"type":"function_call","id":"fc_4","call_id":"call_fail","name":"tool_srv_fail","arguments":"{}","status":"completed"}],
	"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`

const responsesFinal = `{"id":"resp_2","object":"response","created_at":2,"status":"completed","model":"fake-model","output":[
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Done.","annotations":[]}]}],
	"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`

// TestResponsesEndToEnd is acceptance test 2 for the Responses API, with
// a go-sdk server in process.
func TestResponsesEndToEnd(t *testing.T) {
	m := aitest.Manager(t)
	srv := aitest.InProcess(t, m, "srv")
	set := m.AITools(mcpclient.Filter{})
	ctx := aitest.Ctx(t)

	fake := aitest.Serve(t,
		aitest.Step{Path: "/v1/responses", Reply: responsesCalls, Check: func(t testing.TB, body map[string]any) {
			names := functionNames(body["tools"], "name")
			if len(names) != set.Len() || !slices.Contains(names, "tool_srv_add") {
				t.Errorf("request 1: tools %v", names)
			}
			for _, tool := range body["tools"].([]any) {
				if aitest.Get(tool, "name") == "tool_srv_add" &&
					(aitest.Get(tool, "type") != "function" || aitest.Get(tool, "strict") != false ||
						aitest.Get(tool, "parameters", "required", 1) != "b") {
					t.Errorf("request 1: add is %s", aitest.JSON(tool))
				}
			}
		}},
		aitest.Step{Path: "/v1/responses", Reply: responsesFinal, Check: func(t testing.TB, body map[string]any) {
			if body["previous_response_id"] != "resp_1" {
				t.Errorf("request 2: previous_response_id %v", body["previous_response_id"])
			}
			got := map[string]any{}
			for _, item := range body["input"].([]any) {
				if aitest.Get(item, "type") == "function_call_output" {
					got[aitest.Get(item, "call_id").(string)] = aitest.Get(item, "output")
				}
			}
			want := map[string]any{
				"call_add":  "3",
				"call_bad":  `Error: invalid arguments for tool "tool_srv_add": missing property 'b'`,
				"call_inc":  "1",
				"call_fail": "Error: it failed",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request 2: outputs (-want +got):\n%s", diff)
			}
		}},
	)

	c := client(fake)
	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "fake-model",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Use the tools.")},
		Tools: aiopenai.ResponseTools(set),
	})
	if err != nil {
		t.Fatal(err)
	}
	outputs := aiopenai.ResponseToolOutputs(ctx, set, resp.Output, &aiopenai.Options{Concurrency: 2})
	resp, err = c.Responses.New(ctx, responses.ResponseNewParams{
		Model:              "fake-model",
		PreviousResponseID: openai.String(resp.ID),
		Input:              responses.ResponseNewParamsInputUnion{OfInputItemList: outputs},
		Tools:              aiopenai.ResponseTools(set),
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "Done." {
		t.Errorf("answer %q", resp.OutputText())
	}
	if srv.Increments.Load() != 1 {
		t.Errorf("increment ran %d times, want 1", srv.Increments.Load())
	}
}
