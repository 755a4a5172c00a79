package policy

import "fmt"

// AuditArguments says what an agent's audit log keeps of a call's
// arguments.
type AuditArguments string

// What the audit log keeps of arguments. The zero AuditArguments means
// ArgumentsHash.
const (
	ArgumentsHash AuditArguments = "hash" // the SHA-256 of their canonical JSON only
	ArgumentsFull AuditArguments = "full" // the hash and the arguments, sealed by the store's cipher
)

// Audit says what the agent's audit log keeps, in the policy's "audit"
// field:
//
//	"audit": {"arguments": "full"}
//
// Every call, decision, pin decision and server change is recorded
// whatever it says; it only adds to the records.
type Audit struct {
	// Arguments is what each call's record keeps of its arguments; ""
	// means ArgumentsHash.
	Arguments AuditArguments `json:"arguments,omitempty"`
}

// FullArguments reports whether a's records keep the arguments
// themselves. A nil Audit keeps their hash only.
func (a *Audit) FullArguments() bool { return a != nil && a.Arguments == ArgumentsFull }

func (a *Audit) validate() error {
	if a == nil {
		return nil
	}
	switch a.Arguments {
	case "", ArgumentsHash, ArgumentsFull:
		return nil
	}
	return &Error{Rule: -1, Field: "audit.arguments", Reason: fmt.Sprintf("%q: want hash or full", a.Arguments)}
}

func (a *Audit) clone() *Audit {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}
