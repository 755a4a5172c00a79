package store

import (
	"context"
	"encoding/json"
	"time"
)

// The decisions of an AuditRecord.
const (
	AuditAllowed       = "allowed"        // the call ran (the policy allowed it, or a person approved it: Approval)
	AuditDenied        = "denied"         // the policy (a rule, its default, its hook, the exposure rules) refused the call
	AuditRateLimited   = "rate_limited"   // the call was over its rule's rate
	AuditToolChanged   = "tool_changed"   // the tool's pin refused the call (changed, new held, rejected)
	AuditAsked         = "asked"          // the policy asked a person: Approval was stored
	AuditApproved      = "approved"       // a person approved Approval (Caller says through what, DecidedBy who)
	AuditRejected      = "rejected"       // a person denied Approval (Reason says why)
	AuditExpired       = "expired"        // Approval was not answered in time
	AuditPinAccepted   = "pin_accepted"   // a person accepted the tool's listed definition
	AuditPinRejected   = "pin_rejected"   // a person rejected it
	AuditPinChanged    = "pin_changed"    // the server lists a definition other than the pinned one (Reason: the reaction)
	AuditPinNew        = "pin_new"        // the tool appeared after the server's first listing (Reason: the reaction)
	AuditPinRemoved    = "pin_removed"    // the server no longer lists the tool
	AuditServerAdded   = "server_added"   // the server was added to the agent
	AuditServerRemoved = "server_removed" // the server was removed from the agent
)

// The outcomes of an AuditRecord of a call that ran.
const (
	AuditOK      = "ok"       // the tool returned a result
	AuditIsError = "is_error" // the tool returned a result with isError
	AuditError   = "error"    // the call did not complete (ErrorClass says why)
)

// AuditRecord is one record of an agent's audit log: a tool call and the
// decision on it, or a decision on an approval, a pin or a server.
type AuditRecord struct {
	// Namespace is the agent. Seq is the record's place in the agent's
	// log, given by the store when it appends it: increasing in the order
	// of appends (across the processes that share the store), never given
	// twice, not necessarily contiguous. It is the cursor of AuditQuery:
	// a store never makes a record visible below a seq it has already
	// shown of the same log (a reader that sees a record sees every
	// lower one that will ever be there), so that a follower going on
	// from the last seq it saw misses none.
	Namespace string `json:"namespace"`
	Seq       int64  `json:"seq"`
	// Time is when the event ended (a call's end, an answer), as the
	// recording agent's clock read it.
	Time time.Time `json:"time"`
	// ServerID and ServerName name the server; Tool the tool (empty for a
	// server's records).
	ServerID   string `json:"serverId,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	Tool       string `json:"tool,omitempty"`
	// Caller is who made the call ("llm", "api", "gateway"), or who
	// answered an approval or decided on a pin. DecidedBy, for an answer
	// to an approval, names the person who answered as the answer stated
	// it (store.Approval.DecidedBy): a label, empty when none was given.
	Caller    string `json:"caller,omitempty"`
	DecidedBy string `json:"decidedBy,omitempty"`
	// Decision is one of the Audit decisions.
	Decision string `json:"decision"`
	// Outcome is one of the Audit outcomes for a call that ran (decision
	// allowed), empty otherwise; ErrorClass classifies an AuditError
	// ("timeout", "unauthorized", ...).
	Outcome    string `json:"outcome,omitempty"`
	ErrorClass string `json:"errorClass,omitempty"`
	// Reason says why a call was refused or a person denied it, or the
	// reaction to a pin's change.
	Reason string `json:"reason,omitempty"`
	// Approval is the approval the record is about, if any.
	Approval string `json:"approval,omitempty"`
	// Duration is how long the call took, from the decision to its end.
	Duration time.Duration `json:"duration,omitempty"`
	// ArgumentsHash is the hex SHA-256 of the call's arguments as
	// canonical JSON (keys sorted); Arguments, when the agent's policy
	// keeps them, the arguments themselves: the store seals them with its
	// cipher, and keeps none when it has no key.
	ArgumentsHash string          `json:"argumentsHash,omitempty"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
}

// AuditQuery selects records of one agent's audit log. Every field is
// optional.
type AuditQuery struct {
	// Since and Until bound the records' Time: Since <= Time < Until.
	// Zero means no bound.
	Since, Until time.Time
	// ServerID, Tool and Decision select records with those values;
	// empty means any.
	ServerID, Tool, Decision string
	// Cursor continues a listing: records after it (Seq > Cursor) oldest
	// first, or before it (Seq < Cursor) with NewestFirst. Zero starts at
	// the beginning (the end with NewestFirst).
	Cursor int64
	// NewestFirst lists the newest records first; false lists the oldest
	// first.
	NewestFirst bool
	// Limit is the most records returned; zero or less means
	// DefaultAuditLimit, and at most MaxAuditLimit are returned.
	Limit int
}

// Limits of an AuditQuery.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// AuditStore is implemented by stores that keep agents' audit logs
// (store/sqlite and store/postgres do). Records are never fenced: each
// process appends the records of the calls it made, and every process
// reads them all. It is safe for concurrent use.
type AuditStore interface {
	// AppendAudit appends records (of any namespaces) in one transaction,
	// in their order, and gives each its Seq (ignoring the one set).
	AppendAudit(ctx context.Context, records []AuditRecord) error
	// QueryAudit returns the records of ns that q selects, in q's order;
	// an empty slice when there are none.
	QueryAudit(ctx context.Context, ns string, q AuditQuery) ([]AuditRecord, error)
	// PruneAudit deletes the records of ns older than before (zero: none
	// for their age) and all but the newest keep (zero or less: none for
	// their number), and returns how many it deleted.
	PruneAudit(ctx context.Context, ns string, keep int, before time.Time) (int64, error)
}
