package openai_test

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/aitools/internal/aitest"
	aiopenai "github.com/agentmcp/agentmcp/aitools/openai"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// checkDeferred checks a request's tools: the tool_search tool first,
// then every tool, deferred unless its server is "other".
func checkDeferred(t testing.TB, body map[string]any, n int, client bool) {
	tools := body["tools"].([]any)
	if len(tools) != n+1 {
		t.Errorf("%d tools, want %d and tool_search", len(tools), n)
		return
	}
	if aitest.Get(tools, 0, "type") != "tool_search" {
		t.Errorf("first tool %s, want tool_search", aitest.JSON(tools[0]))
	}
	if client != (aitest.Get(tools, 0, "execution") == "client") || client && aitest.Get(tools, 0, "parameters", "required", 0) != "query" {
		t.Errorf("tool_search %s, client execution %v", aitest.JSON(tools[0]), client)
	}
	for _, tool := range tools[1:] {
		name := aitest.Get(tool, "name").(string)
		loaded := strings.HasPrefix(name, "tool_other_")
		if (aitest.Get(tool, "defer_loading") == true) == loaded || aitest.Get(tool, "type") != "function" {
			t.Errorf("tool %s: want deferred %v", aitest.JSON(tool), !loaded)
		}
	}
}

// TestDeferredResponseTools: the hosted tool search (tool_search, and
// defer_loading on every tool not kept loaded), with a response in which
// the API searched and the model called the tool it found.
func TestDeferredResponseTools(t *testing.T) {
	m := aitest.Manager(t)
	aitest.InProcess(t, m, "srv")
	aitest.InProcess(t, m, "other")
	set := m.AITools(mcpclient.Filter{})
	ctx := aitest.Ctx(t)
	const searched = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"fake-model","output":[
		{"type":"tool_search_call","id":"tsc_1","call_id":"ts_1","execution":"server","status":"completed","arguments":{"query":"add integers"}},
		{"type":"tool_search_output","id":"tso_1","call_id":"ts_1","execution":"server","status":"completed","tools":[{"type":"function","name":"tool_srv_add","parameters":{"type":"object"},"strict":false}]},
		{"type":"function_call","id":"fc_1","call_id":"call_add","name":"tool_srv_add","arguments":"{\"a\":1,\"b\":2}","status":"completed"}],
		"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`
	fake := aitest.Serve(t,
		aitest.Step{Path: "/v1/responses", Reply: searched, Check: func(t testing.TB, body map[string]any) {
			checkDeferred(t, body, set.Len(), false)
		}},
		aitest.Step{Path: "/v1/responses", Reply: responsesFinal, Check: func(t testing.TB, body map[string]any) {
			input := body["input"].([]any)
			if len(input) != 1 || aitest.Get(input, 0, "call_id") != "call_add" || aitest.Get(input, 0, "output") != "3" {
				t.Errorf("request 2: input %s", aitest.JSON(input))
			}
		}},
	)
	load := &aitools.SearchModeOptions{AlwaysLoadedServers: []string{"other"}}
	c := client(fake)
	tools := aiopenai.DeferredResponseTools(set, &aiopenai.DeferredOptions{Load: load})
	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "fake-model", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is 1+2?")}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if got := aiopenai.ResponseToolSearchOutputs(aitools.NewIndex(nil), set, resp.Output); len(got) != 0 {
		t.Errorf("a server-executed search was answered: %v", got)
	}
	resp, err = c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "fake-model", PreviousResponseID: openai.String(resp.ID), Tools: tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: aiopenai.ResponseToolOutputs(ctx, set, resp.Output, nil)}})
	if err != nil || resp.OutputText() != "Done." {
		t.Fatalf("request 2: %v", err)
	}
}

// TestClientToolSearch: a client-executed tool search: the model's
// tool_search_call is answered from the index with the tools it finds,
// which the model then calls.
func TestClientToolSearch(t *testing.T) {
	m := aitest.Manager(t)
	aitest.InProcess(t, m, "srv")
	aitest.InProcess(t, m, "other")
	set := m.AITools(mcpclient.Filter{})
	ctx := aitest.Ctx(t)
	idx := aitools.NewIndex(nil)
	const search = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"fake-model","output":[
		{"type":"tool_search_call","id":"tsc_1","call_id":"ts_1","execution":"client","status":"completed","arguments":{"query":"add two integers"}},
		{"type":"tool_search_call","id":"tsc_2","call_id":"ts_2","execution":"client","status":"completed","arguments":{}}],
		"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`
	const call = `{"id":"resp_2","object":"response","created_at":1,"status":"completed","model":"fake-model","output":[
		{"type":"function_call","id":"fc_1","call_id":"call_add","name":"tool_srv_add","arguments":"{\"a\":1,\"b\":2}","status":"completed"}],
		"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}`
	fake := aitest.Serve(t,
		aitest.Step{Path: "/v1/responses", Reply: search, Check: func(t testing.TB, body map[string]any) {
			checkDeferred(t, body, set.Len(), true)
		}},
		aitest.Step{Path: "/v1/responses", Reply: call, Check: func(t testing.TB, body map[string]any) {
			input := body["input"].([]any)
			if len(input) != 2 || aitest.Get(input, 0, "type") != "tool_search_output" || aitest.Get(input, 0, "call_id") != "ts_1" ||
				aitest.Get(input, 0, "execution") != "client" || aitest.Get(input, 0, "status") != "completed" {
				t.Fatalf("request 2: input %s", aitest.JSON(input))
			}
			found := aitest.Get(input, 0, "tools").([]any)
			if len(found) == 0 || aitest.Get(found, 0, "name") != "tool_srv_add" && aitest.Get(found, 0, "name") != "tool_other_add" ||
				aitest.Get(found, 0, "parameters", "required", 1) != "b" {
				t.Errorf("request 2: the search found %s", aitest.JSON(found))
			}
			if n := len(aitest.Get(input, 1, "tools").([]any)); n != 0 || aitest.Get(input, 1, "call_id") != "ts_2" {
				t.Errorf("request 2: a search without a query found %d tools", n)
			}
		}},
		aitest.Step{Path: "/v1/responses", Reply: responsesFinal, Check: func(t testing.TB, body map[string]any) {
			if aitest.Get(body, "input", 0, "output") != "3" {
				t.Errorf("request 3: input %s", aitest.JSON(body["input"]))
			}
		}},
	)
	c := client(fake)
	tools := aiopenai.DeferredResponseTools(set, &aiopenai.DeferredOptions{
		Load: &aitools.SearchModeOptions{AlwaysLoadedServers: []string{"other"}}, Client: idx})
	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "fake-model", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is 1+2?")}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "fake-model", PreviousResponseID: openai.String(resp.ID), Tools: tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: aiopenai.ResponseToolSearchOutputs(idx, set, resp.Output)}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "fake-model", PreviousResponseID: openai.String(resp.ID), Tools: tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: aiopenai.ResponseToolOutputs(ctx, set, resp.Output, nil)}})
	if err != nil || resp.OutputText() != "Done." {
		t.Fatalf("request 3: %v", err)
	}
}
