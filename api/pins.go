package api

import "encoding/json"

// Error codes of pinned tool definitions.
const (
	CodeToolChanged = "tool_changed" // 409: the tool's definition changed since the agent pinned it (or it is new and held, or rejected); a person must accept it
	CodeUnknownPin  = "unknown_pin"  // 404: the agent has no pin of that tool
)

// PolicyPins are the reactions to the servers' tool definitions changing
// after the agent pinned them (the policy's "pins" field):
//
//	"pins": {"changed": "block", "new": "allow",
//	         "servers": {"github": {"changed": "warn", "new": "hold"}}}
//
// changed is block (the default: the tool is left out and its calls are
// 409 tool_changed until a person accepts it), warn (it stays, marked
// changed) or accept (the new definition is pinned silently); new is allow
// (the default) or hold (a tool that appears after the server's first
// listing is left out until accepted). servers overrides them per server
// id.
type PolicyPins struct {
	Changed string                    `json:"changed,omitempty"`
	New     string                    `json:"new,omitempty"`
	Servers map[string]PolicyPinRules `json:"servers,omitempty"`
}

// PolicyPinRules are one server's reactions in PolicyPins.
type PolicyPinRules struct {
	Changed string `json:"changed,omitempty"`
	New     string `json:"new,omitempty"`
}

// Pin is one pinned tool (GET /agents/{class}/{name}/pins).
type Pin struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// State is pinned, changed, new, removed or rejected.
	State string `json:"state"`
	// Blocked says whether the tool is left out and its calls refused.
	Blocked bool `json:"blocked"`
	// Fingerprint and Definition are the pinned definition's (canonical
	// JSON of the tool's name, title, description, schemas and
	// annotations; the fingerprint is its hex SHA-256).
	Fingerprint string          `json:"fingerprint"`
	Definition  json.RawMessage `json:"definition"`
	// SeenFingerprint and Seen are what the server lists, when it differs;
	// Diff names the fields that differ, with their old and new text.
	SeenFingerprint string          `json:"seenFingerprint,omitempty"`
	Seen            json.RawMessage `json:"seen,omitempty"`
	Diff            []PinChange     `json:"diff,omitempty"`
	PinnedAt        string          `json:"pinnedAt"`
	ChangedAt       string          `json:"changedAt"`
}

// PinChange is one field of a tool's definition that changed.
type PinChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// PinsResponse is GET .../pins: the tools changed, new or rejected first,
// then removed ones, then the others.
type PinsResponse struct {
	Pins []Pin `json:"pins"`
}

// PinDecisionRequest is POST .../pins/{server}/{tool}.
type PinDecisionRequest struct {
	Decision string `json:"decision"` // accept or reject
	// By, optional, names who decides (the audit record's decidedBy), as
	// AnswerApprovalRequest.By: a label the request states.
	By string `json:"by,omitempty"`
}

// PinResponse is the answer to a PinDecisionRequest: the pin as it is
// now.
type PinResponse struct {
	Pin Pin `json:"pin"`
}
