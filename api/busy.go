package api

// BusyState is the answer of GET /agents/{class}/{name}/busy: what keeps
// the agent awake now, what POST .../hibernate's 409 agent_busy names.
type BusyState struct {
	// Awake is false for an agent asleep: the other fields are then zero.
	Awake bool `json:"awake"`
	// InUse counts the requests to the agent in flight.
	InUse int `json:"inUse,omitempty"`
	// Work counts calls, adds and reconnections in flight.
	Work int `json:"work,omitempty"`
	// Watchers counts open streams (a dashboard, an SSE or WebSocket
	// client).
	Watchers int `json:"watchers,omitempty"`
	// Elicitations counts pending elicitations.
	Elicitations int `json:"elicitations,omitempty"`
	// Authorizing is set while an OAuth sign-in may still complete.
	Authorizing bool `json:"authorizing,omitempty"`
	// Inputs counts MCP client questions (of the agent's MCP endpoint)
	// waiting for the client's answer, each cancelled if not answered in
	// time; they are counted in Work too.
	Inputs int `json:"inputs,omitempty"`
	// KeepAwake is set when the agent is kept awake whatever it does (a
	// keep-awake server, or serve --keep-awake).
	KeepAwake bool `json:"keepAwake,omitempty"`
	// Reason says it in words: "asleep", "idle" (the idle timeout will
	// hibernate it), or what keeps it awake.
	Reason string `json:"reason"`
}

// Idle reports whether nothing in flight or open holds the agent (it may
// still be kept awake: KeepAwake).
func (b BusyState) Idle() bool {
	return b.InUse == 0 && b.Work == 0 && b.Watchers == 0 && b.Elicitations == 0 && !b.Authorizing && b.Inputs == 0
}
