package api

import (
	"encoding/json"
	"time"
)

// Media types and formats of the audit log's export.
const (
	// MediaTypeJSONLines asks GET .../audit for JSON lines (one
	// AuditRecord a line, every record selected) instead of one page of
	// AuditResponse; ?format=jsonl does too.
	MediaTypeJSONLines = "application/x-ndjson"
	FormatJSONLines    = "jsonl"
)

// The orders of GET .../audit (?order=).
const (
	AuditOldestFirst = "oldest" // the default: the log's order; what a follower reads
	AuditNewestFirst = "newest"
)

// AuditRecord is one record of an agent's audit log (GET
// /agents/{class}/{name}/audit): a tool call and the decision on it, a
// person's answer to an approval, a pin decision, or a server added or
// removed.
type AuditRecord struct {
	// Seq is the record's place in the log (increasing in the order the
	// records were written); Time is when the event ended.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Server is the server's id, ServerName its name; Tool is empty for a
	// server's records.
	Server     string `json:"server,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	Tool       string `json:"tool,omitempty"`
	// Caller is who made the call ("llm", "api", "gateway"), or who
	// answered the approval or decided on the pin. DecidedBy, on an
	// approved or rejected record, names who answered as the answer said
	// (Approval.DecidedBy); on a pin_accepted or pin_rejected one, who
	// decided (PinDecisionRequest.By).
	Caller    string `json:"caller,omitempty"`
	DecidedBy string `json:"decidedBy,omitempty"`
	// Decision is allowed, denied, rate_limited, tool_changed, asked,
	// approved, rejected, expired, pin_accepted, pin_rejected,
	// pin_changed, pin_new, pin_removed, server_added or server_removed.
	Decision string `json:"decision"`
	// Outcome is ok, is_error or error for a call that ran; ErrorClass
	// classifies an error (timeout, not_connected, unauthorized, ...).
	Outcome    string `json:"outcome,omitempty"`
	ErrorClass string `json:"errorClass,omitempty"`
	// Reason says why a call was denied or a person rejected it, or the
	// agent's reaction to a pin's change.
	Reason string `json:"reason,omitempty"`
	// Approval is the approval the record is about.
	Approval string `json:"approval,omitempty"`
	// DurationMS is how long the call took, in milliseconds.
	DurationMS float64 `json:"durationMs,omitempty"`
	// ArgumentsHash is the hex SHA-256 of the call's arguments as
	// canonical JSON; Arguments are the arguments, only when the agent's
	// policy keeps them ("audit": {"arguments": "full"}).
	ArgumentsHash string          `json:"argumentsHash,omitempty"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
}

// AuditResponse is one page of an agent's audit log (GET .../audit).
type AuditResponse struct {
	Records []AuditRecord `json:"records"`
	// Cursor continues the listing in the same order (?cursor=): the last
	// record's, or the request's when there was none, so that a follower
	// polls with it for the records written since.
	Cursor string `json:"cursor,omitempty"`
	// More says that the page is full: more records may follow.
	More bool `json:"more"`
}

// PolicyAudit says what the agent's audit log keeps (the policy's
// "audit" field): arguments is "hash" (the default: their SHA-256 only)
// or "full" (the arguments too, sealed by the store's key).
type PolicyAudit struct {
	Arguments string `json:"arguments,omitempty"`
}
