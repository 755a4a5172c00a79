package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/api"
)

// TestPolicyToolsAPI: GET .../policy/tools answers every tool, the denied
// one included, with its decision per caller and the rule that decided;
// GET .../policy/presets/{name} answers a preset as a policy to PUT.
func TestPolicyToolsAPI(t *testing.T) {
	t.Parallel()
	e, _ := policyEnv(t)
	putPolicy(t, e, `{"default":"ask","rules":[{"match":{"tools":["s/increment"]},"action":"deny"},{"match":{"tools":["s/echo"],"callers":["llm"]},"action":"allow","rate":"5/m"}]}`)
	if status, _, b := e.do("PUT", agentPath+"/exposure", `{"deny":["s/add"]}`); status != http.StatusOK {
		t.Fatalf("exposure: %d %s", status, b)
	}
	status, _, b := e.do("GET", agentPath+"/policy/tools", "")
	if status != http.StatusOK {
		t.Fatalf("policy/tools: %d %s", status, b)
	}
	var got api.PolicyToolsResponse
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]api.PolicyDecision{}
	for _, tool := range got.Tools {
		if tool.ServerID == "s" {
			byName[tool.Name] = tool.Decisions
		}
	}
	ask := api.PolicyDecision{Action: "ask", Rule: -1}
	deny := api.PolicyDecision{Action: "deny", Rule: 0}
	want := map[string]map[string]api.PolicyDecision{
		"increment": {"llm": deny, "api": deny, "gateway": deny},
		"echo":      {"llm": {Action: "allow", Rule: 1, Rate: "5/m"}, "api": ask, "gateway": ask},
		"add":       {"llm": ask, "api": ask, "gateway": {Action: "deny", Rule: -1, Reason: "not exposed by the agent's exposure rules"}},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, byName[name]); diff != "" {
			t.Errorf("decisions of %s (-want +got):\n%s", name, diff)
		}
	}

	status, _, b = e.do("GET", agentPath+"/policy/presets/cautious", "")
	if status != http.StatusOK {
		t.Fatalf("preset: %d %s", status, b)
	}
	putPolicy(t, e, string(b))
	_, _, now := e.do("GET", agentPath+"/policy", "")
	if string(now) != string(b) {
		t.Errorf("the preset put in force: %s, want %s", now, b)
	}
	if status, _, b = e.do("GET", agentPath+"/policy/presets/reckless", ""); status != http.StatusNotFound || !strings.Contains(string(b), "cautious") {
		t.Errorf("unknown preset: %d %s", status, b)
	}
}
