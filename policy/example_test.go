package policy_test

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/policy"
)

func ExampleParse() {
	p, err := policy.Parse([]byte(`{"default": "allow", "rules": [
		{"match": {"tools": ["github/delete_*"]}, "action": "deny"},
		{"match": {"annotations": {"destructiveHint": true}}, "action": "ask"},
		{"match": {"tools": ["search/*"], "callers": ["llm"]}, "action": "allow", "rate": "10/m"}]}`))
	if err != nil {
		panic(err)
	}
	no := false
	for _, c := range []policy.Call{
		{Server: "github", Tool: "delete_repo", Caller: policy.LLM},
		{Server: "github", Tool: "create_issue", Hints: policy.HintsOf(nil), Caller: policy.API},
		{Server: "search", Tool: "web", Hints: policy.HintsOf(&mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no}), Caller: policy.LLM},
	} {
		d := p.Decide(c)
		fmt.Printf("%s/%s: %s (rule %d, rate %q)\n", c.Server, c.Tool, d.Action, d.Rule, d.Rate)
	}
	// Output:
	// github/delete_repo: deny (rule 0, rate "")
	// github/create_issue: ask (rule 1, rate "")
	// search/web: allow (rule 2, rate "10/m")
}
