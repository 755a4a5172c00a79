package store

import (
	"context"
	"encoding/json"
	"time"
)

// The states of an Approval.
const (
	ApprovalPending  = "pending"  // waiting for a person's answer
	ApprovalApproved = "approved" // approved; its call not started yet
	ApprovalRunning  = "running"  // approved and its call started (StartedAt): it is never started again
	ApprovalDenied   = "denied"   // denied; the call did not run
	ApprovalExpired  = "expired"  // not answered in time; the call did not run
	ApprovalDone     = "done"     // approved and run (or refused, or interrupted): Result or Error holds the outcome
)

// The codes of an Approval's Error.
const (
	// ApprovalToolChanged: the tool's definition changed since it was
	// pinned (between the ask and the run); the call did not run.
	ApprovalToolChanged = "tool_changed"
	// ApprovalInterrupted: the process running the approved call stopped
	// before its outcome was stored; the call may have run, and is not
	// run again.
	ApprovalInterrupted = "interrupted"
)

// Approval is a tool call that an agent's policy asks a person to approve,
// as stored: stored before anything is sent to the server, so that it
// survives a restart, and answered once (SwapApproval from pending).
type Approval struct {
	// Namespace is the agent; ID the approval's id in it.
	Namespace string `json:"namespace"`
	ID        string `json:"id"`
	// ServerID and Tool name the tool; Arguments are the call's, exactly:
	// an approval runs these and no others.
	ServerID  string          `json:"serverId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Caller is who made the call ("llm", "api", "gateway").
	Caller string `json:"caller"`
	// State is one of the Approval states.
	State       string    `json:"state"`
	RequestedAt time.Time `json:"requestedAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
	// DecidedAt is when it was answered or expired (zero while pending).
	DecidedAt time.Time `json:"decidedAt,omitzero"`
	// Reason is a deny's reason, for the model.
	Reason string `json:"reason,omitempty"`
	// DecidedBy names who answered it, as the answer stated it (a label,
	// not an identity, unless the caller verified it); empty for none.
	DecidedBy string `json:"decidedBy,omitempty"`
	// Remember records that the approval added an allow rule.
	Remember bool `json:"remember,omitempty"`
	// Correlation is the caller's mark (a gateway client's user, hashed),
	// for the callers that follow the approval as a task.
	Correlation string `json:"correlation,omitempty"`
	// StartedAt is when its call started (state running, then done).
	StartedAt time.Time `json:"startedAt,omitzero"`
	// Result is the tool's result (an MCP CallToolResult, as JSON) once
	// done; Error says why a call approved did not complete.
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Code classes Error: one of the ApprovalToolChanged,
	// ApprovalInterrupted codes, or empty.
	Code string `json:"code,omitempty"`
}

// ApprovalStore is implemented by stores that keep agents' approvals
// (store/sqlite and store/postgres do). An approval is stored as its
// state and one readable JSON document (its arguments and result are the
// tool's input and output, which the agent shows to whoever may answer
// it).
type ApprovalStore interface {
	// PutApproval inserts a, or replaces the approval of the same
	// (Namespace, ID).
	PutApproval(ctx context.Context, a Approval) error
	// GetApproval returns one approval; an error wrapping ErrNotFound when
	// there is none.
	GetApproval(ctx context.Context, ns, id string) (Approval, error)
	// ListApprovals returns the approvals of ns in the order they were
	// first stored; an empty slice when there are none.
	ListApprovals(ctx context.Context, ns string) ([]Approval, error)
	// SwapApproval replaces the approval (Namespace, ID) with a if its
	// stored State is from, atomically, and reports whether it did: of two
	// processes that answer the same approval, one wins. Under a Fence of
	// ns it is fenced as the server writes are.
	SwapApproval(ctx context.Context, a Approval, from string) (bool, error)
	// DeleteApprovals deletes the approvals ids of ns that are in one of
	// the final states (denied, expired, done), and reports how many it
	// deleted: an id unknown, or in another state, is skipped. Fenced as
	// SwapApproval is.
	DeleteApprovals(ctx context.Context, ns string, ids []string) (int, error)
}
