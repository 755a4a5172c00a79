package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDeciderLen is the most characters of a decider label (WithDecider).
const MaxDeciderLen = 128

// ErrInvalidDecider is wrapped by the error of an answer to an approval
// whose decider label (WithDecider) is not a valid one (CheckDecider).
var ErrInvalidDecider = errors.New("agent: invalid decider")

type deciderKey struct{}

// WithDecider returns ctx carrying who decides an approval answered with
// it (Approve, Deny): a short name, stored with the approval
// (Approval.DecidedBy) and in its audit record (AuditRecord.DecidedBy);
// or a pin decided with it (DecidePin), named in that decision's record.
// It is a label: the agent records what it is told. Only the name a
// caller sets from something it verified (the gateway, from an OAuth
// access token's subject) says who decided; a name a person typed, or
// sent over the API with a token shared by several people, is what they
// said. Approve, Deny and DecidePin refuse a label CheckDecider refuses.
func WithDecider(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, deciderKey{}, name)
}

// DeciderOf returns the decider ctx carries (WithDecider), "" for none.
func DeciderOf(ctx context.Context) string {
	s, _ := ctx.Value(deciderKey{}).(string)
	return s
}

// CheckDecider checks a decider label: at most MaxDeciderLen characters
// of valid UTF-8, printable (spaces allowed, but not at either end), no
// control characters. The empty label (no decider) is valid.
func CheckDecider(name string) error {
	switch {
	case name == "":
		return nil
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidDecider)
	case utf8.RuneCountInString(name) > MaxDeciderLen:
		return fmt.Errorf("%w: longer than %d characters", ErrInvalidDecider, MaxDeciderLen)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%w: spaces at an end", ErrInvalidDecider)
	}
	for _, r := range name {
		if r != ' ' && !unicode.IsPrint(r) {
			return fmt.Errorf("%w: character %U is not printable", ErrInvalidDecider, r)
		}
	}
	return nil
}
