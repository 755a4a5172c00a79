package agent

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/store"
)

// The life of approvals past their answer: the caller's own answer
// (ApprovalAsker), the approved calls a stopped process left (resumed or
// marked interrupted when the agent opens), and the pruning of old ones.

// Defaults of the approvals' retention (Options.ApprovalRetention and
// MaxApprovals).
const (
	DefaultApprovalRetention = 30 * 24 * time.Hour
	DefaultMaxApprovals      = 1000
)

// pruneEvery is how often (on the agent's clock) reading the approvals
// prunes them; asking and opening always do.
const pruneEvery = time.Hour

// ApprovalAnswer is a caller's answer to the approval of its own call
// (an ApprovalAsker's).
type ApprovalAnswer struct {
	// Approve approves the call (Remember as Approve's remember); false
	// denies it with Reason.
	Approve  bool
	Remember bool
	Reason   string
}

// ApprovalAsker asks the caller of a call the policy asks about for the
// answer (the gateway asks its client through an elicitation form). The
// agent calls it once the approval is stored, in a goroutine of its own,
// with a context that ends when the call stops waiting (the approval was
// answered otherwise, or the caller's context ended); its answer is
// applied as Approve or Deny would, unless the approval was answered
// meanwhile. ok false (the caller declined, or cannot answer) leaves the
// approval pending for a person.
type ApprovalAsker func(ctx context.Context, ap Approval) (ans ApprovalAnswer, ok bool)

type askerKey struct{}

// WithApprovalAsker returns ctx whose calls that the policy asks about
// ask asker too (see ApprovalAsker), besides waiting for a person.
func WithApprovalAsker(ctx context.Context, asker ApprovalAsker) context.Context {
	return context.WithValue(ctx, askerKey{}, asker)
}

// Correlation is the mark of the caller that asked (the correlation of
// WithTaskCorrelation), empty when none.
func (ap Approval) Correlation() string { return ap.correlation }

// taskCorrelation returns the correlation ctx carries (WithTaskCorrelation).
func taskCorrelation(ctx context.Context) string {
	c, _ := ctx.Value(correlationKey{}).(string)
	return c
}

// awaitAsking is awaitApproval while asker asks the caller.
func (a *Agent) awaitAsking(ctx context.Context, asker ApprovalAsker, row store.Approval) (*mcp.CallToolResult, error) {
	actx, cancel := context.WithCancel(ctx)
	asked := make(chan struct{})
	go func() {
		defer close(asked)
		ans, ok := asker(actx, approvalOf(row))
		if !ok {
			return
		}
		// The answer is the approval's, even when the caller stopped
		// waiting just before it came.
		wctx := context.WithoutCancel(actx)
		var err error
		if ans.Approve {
			_, err = a.Approve(wctx, row.ID, ans.Remember)
		} else {
			_, err = a.Deny(wctx, row.ID, ans.Reason)
		}
		if err != nil && !errors.Is(err, ErrApprovalAnswered) && !errors.Is(err, ErrApprovalExpired) {
			a.logger.Warn("cannot apply the caller's answer to an approval", "approval", row.ID, "error", err)
		}
	}()
	res, err := a.awaitApproval(ctx, row.ID)
	cancel()
	<-asked
	return res, err
}

// interruptedReason is the Error of an approved call found running when
// the agent opened.
const interruptedReason = "the process running the approved call stopped before its outcome was stored: it may have run, and is not run again"

// resumeApprovals settles, when the agent opens, the approved calls that
// a stopped process left: one approved but never started runs now (once:
// runApproved marks it running first, and of two processes one wins);
// one started (running) may have run, and is marked done with code
// interrupted, never run again. Then the old approvals are pruned.
func (a *Agent) resumeApprovals(ctx context.Context) error {
	as, ok := a.st.(store.ApprovalStore)
	if !ok {
		return nil
	}
	rows, err := as.ListApprovals(ctx, a.ns)
	if err != nil {
		return err
	}
	for _, row := range rows {
		switch row.State {
		case store.ApprovalRunning:
			done := row
			done.State, done.Code, done.Error = store.ApprovalDone, store.ApprovalInterrupted, interruptedReason
			if _, err := as.SwapApproval(ctx, done, store.ApprovalRunning); err != nil {
				a.logger.Warn("cannot mark an interrupted approved call", "approval", row.ID, "error", err)
				continue
			}
			a.logger.Warn("an approved call was interrupted by a stop; it is not run again", "approval", row.ID, "server", row.ServerID, "tool", row.Tool)
		case store.ApprovalApproved:
			a.apr.wg.Add(1)
			release := a.hold()
			go func() {
				defer a.apr.wg.Done()
				defer release()
				a.runApproved(row)
			}()
		}
	}
	a.pruneApprovals(ctx, as, rows)
	return nil
}

// maybePruneApprovals prunes the approvals when force, or when the last
// prune is pruneEvery old on the agent's clock.
func (a *Agent) maybePruneApprovals(ctx context.Context, as store.ApprovalStore, force bool) {
	now := a.now()
	a.apr.mu.Lock()
	due := force || a.apr.pruned.IsZero() || now.Sub(a.apr.pruned) >= pruneEvery
	if due {
		a.apr.pruned = now
	}
	a.apr.mu.Unlock()
	if !due {
		return
	}
	rows, err := as.ListApprovals(ctx, a.ns)
	if err != nil {
		a.logger.Warn("cannot list the approvals to prune", "error", err)
		return
	}
	a.pruneApprovals(ctx, as, rows)
}

// pruneApprovals deletes, of rows, the approvals that ended (denied,
// expired, done) longer than the retention ago on the agent's clock, and
// those past the MaxApprovals most recent that ended. Pending, approved
// and running ones are kept.
func (a *Agent) pruneApprovals(ctx context.Context, as store.ApprovalStore, rows []store.Approval) {
	a.apr.mu.Lock()
	a.apr.pruned = a.now()
	a.apr.mu.Unlock()
	ended := func(r store.Approval) time.Time {
		if !r.DecidedAt.IsZero() {
			return r.DecidedAt
		}
		return r.RequestedAt
	}
	var final []store.Approval
	for _, r := range rows {
		switch r.State {
		case store.ApprovalDenied, store.ApprovalExpired, store.ApprovalDone:
			final = append(final, r)
		}
	}
	slices.SortStableFunc(final, func(x, y store.Approval) int { return ended(y).Compare(ended(x)) }) // newest first
	cutoff := a.now().Add(-a.apr.retention)
	var ids []string
	for i, r := range final {
		if i >= a.apr.max || ended(r).Before(cutoff) {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	n, err := as.DeleteApprovals(ctx, a.ns, ids)
	if err != nil {
		a.logger.Warn("cannot prune old approvals", "error", err)
		return
	}
	a.logger.Info("old approvals pruned", "count", n)
	a.apr.signal()
}

// retentionOf returns the retention and the count kept of o.
func retentionOf(o Options) (time.Duration, int) {
	return cmp.Or(max(o.ApprovalRetention, 0), DefaultApprovalRetention), cmp.Or(max(o.MaxApprovals, 0), DefaultMaxApprovals)
}
