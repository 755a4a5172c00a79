package api

// PolicyToolsResponse is GET /agents/{class}/{name}/policy/tools: every
// tool of the agent's connected servers, denied ones included, with the
// policy's decision on a call of it by each caller.
type PolicyToolsResponse struct {
	Tools []PolicyTool `json:"tools"`
}

// PolicyTool is one tool's effective action per caller ("llm", "api",
// "gateway").
type PolicyTool struct {
	ServerID  string                    `json:"serverId"`
	Name      string                    `json:"name"`
	Decisions map[string]PolicyDecision `json:"decisions"`
}

// PolicyDecision is what the policy decides on a call: its action (allow,
// deny or ask), the index of the rule that decided (-1 for the default),
// the rule's rate if any, and, for a decision no rule made (the exposure
// rules at the gateway), why.
type PolicyDecision struct {
	Action string `json:"action"`
	Rule   int    `json:"rule"`
	Rate   string `json:"rate,omitempty"`
	Reason string `json:"reason,omitempty"`
}
