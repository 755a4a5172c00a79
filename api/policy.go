package api

import (
	"encoding/json"
	"time"
)

// Error codes of the tool policy and its approvals.
const (
	CodeToolDenied       = "tool_denied"       // 403: the agent's policy denies the tool to this caller
	CodeRateLimited      = "rate_limited"      // 429: the tool's rate is used up; Retry-After says when to try again
	CodeApprovalDenied   = "approval_denied"   // 403: a person denied the call; the message has their reason
	CodeApprovalExpired  = "approval_expired"  // 409: the approval was not answered in time
	CodeApprovalMismatch = "approval_mismatch" // 409: a call presented with an approval of another tool or other arguments
	CodeApprovalAnswered = "approval_answered" // 409: an answer to an approval answered otherwise
	CodeUnknownApproval  = "unknown_approval"  // 404: no approval with that id
	// CodeApprovalPending is the error event of a streamed call still
	// waiting for approval when its time ran out (a call without a stream
	// answers 202 {"approval": {...}} instead); the message names the
	// approval.
	CodeApprovalPending = "approval_pending"
)

// Policy is an agent's tool policy (GET and PUT
// /agents/{class}/{name}/policy), as package policy defines it:
//
//	{"default": "allow",
//	 "rules": [
//	   {"match": {"tools": ["github/delete_*"]}, "action": "deny"},
//	   {"match": {"annotations": {"destructiveHint": true}}, "action": "ask"},
//	   {"match": {"tools": ["search/*"], "callers": ["llm"]}, "action": "allow", "rate": "10/m"}]}
type Policy struct {
	Default string       `json:"default,omitempty"`
	Rules   []PolicyRule `json:"rules"`
	Pins    *PolicyPins  `json:"pins,omitempty"`  // pins.go
	Audit   *PolicyAudit `json:"audit,omitempty"` // audit.go
}

// PolicyRule is one rule of a Policy: the first whose match matches a
// call decides its action.
type PolicyRule struct {
	Match  PolicyMatch `json:"match"`
	Action string      `json:"action"` // allow, deny or ask
	Rate   string      `json:"rate,omitempty"`
}

// PolicyMatch says which calls a rule applies to (see package policy).
type PolicyMatch struct {
	Tools       []string           `json:"tools,omitempty"`
	Servers     []string           `json:"servers,omitempty"`
	Annotations *PolicyAnnotations `json:"annotations,omitempty"`
	Callers     []string           `json:"callers,omitempty"` // llm, api, gateway
}

// PolicyAnnotations are the tool hints a rule asks for.
type PolicyAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Approval is a tool call waiting for, or given, a person's answer (GET
// .../approvals, .../approvals/{id}; the 202 of a call that waits for one,
// as ApprovalResponse).
type Approval struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Arguments are the call's, exactly: the approval runs these only.
	Arguments json.RawMessage `json:"arguments"`
	Caller    string          `json:"caller"` // llm, api, gateway
	// State is pending, approved, denied, expired or done.
	State       string     `json:"state"`
	RequestedAt time.Time  `json:"requestedAt"`
	ExpiresAt   time.Time  `json:"expiresAt"`
	DecidedAt   *time.Time `json:"decidedAt,omitempty"`
	// DecidedBy names who answered it: the "by" of the answer
	// (AnswerApprovalRequest.By), a label the answer stated, or for an
	// answer from the gateway's MCP client in OAuth mode the subject of
	// its access token ("sub:...", "client:...").
	DecidedBy string `json:"decidedBy,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Remember  bool   `json:"remember,omitempty"`
	// Result is the tool's MCP CallToolResult once done; Error says why an
	// approved call did not complete.
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Code classes Error: "tool_changed" (the tool's definition changed
	// since it was pinned: the call did not run) or "interrupted" (the
	// process running it stopped: it may have run, and is not run again).
	Code string `json:"code,omitempty"`
	// StartedAt is when the approved call started.
	StartedAt *time.Time `json:"startedAt,omitempty"`
}

// ApprovalResponse is the 202 answer of a call that waits for approval,
// and the answer of POST .../approvals/{id}.
type ApprovalResponse struct {
	Approval Approval `json:"approval"`
}

// ApprovalsResponse is the answer of GET .../approvals: pending ones
// first (oldest first), then the others, most recent first.
type ApprovalsResponse struct {
	Approvals []Approval `json:"approvals"`
}

// AnswerApprovalRequest is the body of POST .../approvals/{id}.
type AnswerApprovalRequest struct {
	Decision string `json:"decision"` // approve or deny
	// Remember, with approve, adds a rule allowing the tool from now on.
	Remember bool `json:"remember,omitempty"`
	// Reason, with deny, is told to the caller (a model reads it).
	Reason string `json:"reason,omitempty"`
	// By, optional, names who answers (Approval.DecidedBy, and the audit
	// record's decidedBy): at most 128 printable characters, no control
	// characters, no spaces at either end. It is a label the request
	// states: with the server's token shared by several people it tells
	// them apart only as far as they say who they are.
	By string `json:"by,omitempty"`
}
