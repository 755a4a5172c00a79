package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// step is one request the fake model expects: a check of the request
// body, and the reply.
type step struct {
	check func(t *testing.T, body string)
	reply string
}

// fakeModel serves a scripted Chat Completions endpoint on 127.0.0.1 and
// fails the test if the requests differ from the script.
func fakeModel(t *testing.T, steps ...step) string {
	var (
		mu sync.Mutex
		n  int
	)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(steps) || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("unexpected request %d: %s %s", i+1, r.Method, r.URL.Path)
			http.Error(w, "unexpected", http.StatusInternalServerError)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("request %d: Authorization %q", i+1, got)
		}
		body, _ := io.ReadAll(r.Body)
		steps[i].check(t, string(body))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, steps[i].reply)
	}))
	t.Cleanup(func() {
		hs.Close()
		mu.Lock()
		defer mu.Unlock()
		if n != len(steps) {
			t.Errorf("the fake model got %d requests, want %d", n, len(steps))
		}
	})
	return hs.URL + "/v1"
}

func toolCallReply(id, name, args string) string {
	a, _ := json.Marshal(args)
	return `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
		"message":{"role":"assistant","content":null,"tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":` + string(a) + `}}]}}]}`
}

func answerReply(text string) string {
	return `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop",
		"message":{"role":"assistant","content":"` + text + `"}}]}`
}

func env(base string) func(string) string {
	vars := map[string]string{"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-test", "OPENAI_MODEL": "fake-model"}
	return func(k string) string { return vars[k] }
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestRun: the loop against an MCP server over streamable HTTP: the model
// calls a tool, gets its result, answers.
func TestRun(t *testing.T) {
	srv := mcptest.NewServer("demo")
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	base := fakeModel(t,
		step{reply: toolCallReply("call_1", "tool_demo_add", `{"a":2,"b":3}`), check: func(t *testing.T, body string) {
			if !strings.Contains(body, `"name":"tool_demo_add"`) || !strings.Contains(body, `"model":"fake-model"`) ||
				!strings.Contains(body, `"content":"What is 2+3?"`) {
				t.Errorf("request 1: %s", body)
			}
		}},
		step{reply: answerReply("2+3 is 5."), check: func(t *testing.T, body string) {
			if !strings.Contains(body, `{"content":"5","tool_call_id":"call_1","role":"tool"}`) {
				t.Errorf("request 2 lacks the tool result: %s", body)
			}
		}},
	)
	var stdout, stderr bytes.Buffer
	err := run(testCtx(t), []string{"-prompt", "What is 2+3?", "demo=" + hs.URL}, env(base), strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if stdout.String() != "2+3 is 5.\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), `tool call tool_demo_add (demo/add) {"a":2,"b":3} -> 5`) {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestRunStdio: the loop with server-everything run over stdio after
// "--", and the prompt on standard input.
func TestRunStdio(t *testing.T) {
	cmd := peers.EverythingCommand(t)
	base := fakeModel(t,
		step{reply: toolCallReply("call_1", "tool_local_echo", `{"message":"hi"}`), check: func(t *testing.T, body string) {
			if !strings.Contains(body, `"name":"tool_local_echo"`) || !strings.Contains(body, `"content":"Say hi."`) {
				t.Errorf("request 1: %s", body)
			}
		}},
		step{reply: answerReply("It said hi."), check: func(t *testing.T, body string) {
			if !strings.Contains(body, `{"content":"Echo: hi","tool_call_id":"call_1","role":"tool"}`) {
				t.Errorf("request 2 lacks the tool result: %s", body)
			}
		}},
	)
	args := append([]string{"--", cmd.Path}, cmd.Args...)
	var stdout, stderr bytes.Buffer
	if err := run(testCtx(t), args, env(base), strings.NewReader("Say hi.\n"), &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if stdout.String() != "It said hi.\n" {
		t.Errorf("stdout %q", stdout.String())
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  func(string) string
		want string
	}{
		{"no model", []string{"-prompt", "x"}, func(string) string { return "" }, "OPENAI_MODEL is not set"},
		{"no prompt", nil, env("http://127.0.0.1:1/v1"), "empty prompt"},
		{"no command", []string{"-prompt", "x", "--"}, env("http://127.0.0.1:1/v1"), `no command after "--"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(testCtx(t), tt.args, tt.env, strings.NewReader(""), &stdout, &stderr)
			if err == nil || err.Error() != tt.want {
				t.Errorf("run: %v, want %s", err, tt.want)
			}
		})
	}
}

// TestRunSearch: with -search the model gets search_tools and call_tool,
// not the catalog; it searches, then calls the tool it found by key.
func TestRunSearch(t *testing.T) {
	srv := mcptest.NewServer("demo")
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	toolMessage := func(t *testing.T, body, callID string) string {
		var req struct {
			Messages []struct {
				Role       string `json:"role"`
				Content    string `json:"content"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatalf("request: %v", err)
		}
		for _, m := range req.Messages {
			if m.Role == "tool" && m.ToolCallID == callID {
				return m.Content
			}
		}
		t.Errorf("no tool message for %s in %s", callID, body)
		return ""
	}
	base := fakeModel(t,
		step{reply: toolCallReply("call_1", "search_tools", `{"query":"add two integers"}`), check: func(t *testing.T, body string) {
			if !strings.Contains(body, `"name":"search_tools"`) || !strings.Contains(body, `"name":"call_tool"`) ||
				strings.Contains(body, `"name":"tool_demo_`) {
				t.Errorf("request 1 should offer the meta-tools only: %s", body)
			}
		}},
		step{reply: toolCallReply("call_2", "call_tool", `{"key":"tool_demo_add","arguments":{"a":2,"b":3}}`), check: func(t *testing.T, body string) {
			var found struct {
				Tools []struct {
					Key         string          `json:"key"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			}
			content := toolMessage(t, body, "call_1")
			if err := json.Unmarshal([]byte(content), &found); err != nil || len(found.Tools) == 0 ||
				found.Tools[0].Key != "tool_demo_add" || !strings.Contains(string(found.Tools[0].InputSchema), `"a"`) {
				t.Errorf("search result %q: %v", content, err)
			}
		}},
		step{reply: answerReply("2+3 is 5."), check: func(t *testing.T, body string) {
			if got := toolMessage(t, body, "call_2"); got != "5" {
				t.Errorf("call_tool's result %q, want 5", got)
			}
		}},
	)
	var stdout, stderr bytes.Buffer
	err := run(testCtx(t), []string{"-search", "-prompt", "What is 2+3?", "demo=" + hs.URL}, env(base), strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if stdout.String() != "2+3 is 5.\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	for _, want := range []string{"search mode: the model gets 2 tools", `tool call call_tool (demo/add)`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q: %q", want, stderr.String())
		}
	}

	// -always-load sends a server's tools as well.
	base = fakeModel(t, step{reply: answerReply("ok"), check: func(t *testing.T, body string) {
		if !strings.Contains(body, `"name":"search_tools"`) || !strings.Contains(body, `"name":"tool_demo_add"`) {
			t.Errorf("with -always-load demo: %s", body)
		}
	}})
	stderr.Reset()
	if err := run(testCtx(t), []string{"-search", "-always-load", "demo", "-prompt", "hi", "demo=" + hs.URL}, env(base), strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("run -always-load: %v\n%s", err, stderr.String())
	}
}
