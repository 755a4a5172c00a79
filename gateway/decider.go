package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/agentmcp/agentmcp/agent"
)

// withDecider returns ctx naming, as who decides the approvals its
// client answers (agent.WithDecider: an ask answered through elicitation,
// a task cancelled), the subject of the client's OAuth access token,
// which the server verified ("sub:...", "client:...", "token:..."; see
// oauth/resource.Subject). A subject that is not a valid label (too long)
// is named by its hash. A client of the server's own token has no
// subject, and ctx names nobody: that token names no person.
func withDecider(ctx context.Context, subject string) context.Context {
	if subject == "" || agent.DeciderOf(ctx) != "" {
		return ctx
	}
	if agent.CheckDecider(subject) != nil {
		sum := sha256.Sum256([]byte(subject))
		subject = "subject-sha256:" + hex.EncodeToString(sum[:16])
	}
	return agent.WithDecider(ctx, subject)
}
