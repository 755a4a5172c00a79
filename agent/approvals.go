package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// Durable approvals: a call the policy answers "ask" is stored as an
// approval before anything is sent, waits for a person's answer (approve
// or deny), and runs once when approved; its outcome is stored with it.
// The approval outlives the process: after a restart, a hibernation or a
// failover it is listed again and can be answered.

// DefaultApprovalLifetime is how long an approval waits for its answer
// when Options.ApprovalLifetime is zero.
const DefaultApprovalLifetime = 24 * time.Hour

// Errors of approvals.
var (
	// ErrApprovalPending is wrapped by the error of a call that waits for
	// a person's approval when its context ended first: the approval
	// stays pending (an *ApprovalPendingError carries it).
	ErrApprovalPending = errors.New("agent: the call waits for approval")
	// ErrApprovalDenied is wrapped by the error of a call a person denied
	// (an *ApprovalDeniedError carries the reason).
	ErrApprovalDenied = errors.New("agent: the call was denied")
	// ErrApprovalExpired is wrapped by the error of a call whose approval
	// was not answered in time, and by an answer to it.
	ErrApprovalExpired = errors.New("agent: the approval expired")
	// ErrUnknownApproval is wrapped for an approval id the agent does not
	// have.
	ErrUnknownApproval = errors.New("agent: unknown approval")
	// ErrApprovalMismatch is wrapped by the error of a call presented
	// with an approval (WithApproval) of another tool or other arguments:
	// an approval runs its own arguments and no others.
	ErrApprovalMismatch = errors.New("agent: the call does not match its approval")
	// ErrApprovalAnswered is wrapped by an answer to an approval already
	// answered otherwise (an approve of a denied one, a deny of an
	// approved one).
	ErrApprovalAnswered = errors.New("agent: the approval was already answered")
	// ErrApprovalsUnsupported is wrapped by the error of a call the
	// policy asks about when the agent's store cannot keep approvals (it
	// does not implement store.ApprovalStore): the call does not run.
	ErrApprovalsUnsupported = errors.New("the store cannot keep approvals")
	// ErrApprovalInterrupted is wrapped by the error of an approved call
	// whose process stopped while it ran (a crash, a kill): it may have
	// run, and is never run again.
	ErrApprovalInterrupted = errors.New("agent: the approved call was interrupted")
)

// Approval is a call waiting for, or given, a person's answer.
type Approval struct {
	ID       string
	ServerID string
	Tool     string
	// Arguments are the call's, exactly (as canonical JSON).
	Arguments json.RawMessage
	Caller    policy.Caller
	// State is one of the store.Approval* states: pending, approved,
	// denied, expired, done (an approval whose call started, stored as
	// running, is shown approved, with StartedAt).
	State       string
	RequestedAt time.Time
	ExpiresAt   time.Time
	// DecidedAt is when it was answered or expired, zero while pending.
	DecidedAt time.Time
	// Reason is a deny's reason.
	Reason   string
	Remember bool
	// DecidedBy names who answered it, as the answer said (WithDecider):
	// a label, empty when none was given.
	DecidedBy string
	// Result is the tool's result once done (nil before, or when the call
	// did not complete: Error says why).
	Result *mcp.CallToolResult
	Error  string
	// Code classes Error: store.ApprovalToolChanged (the pins refused the
	// approved call, which did not run), store.ApprovalInterrupted (its
	// process stopped while it ran), or empty.
	Code string
	// StartedAt is when the approved call started, zero before.
	StartedAt time.Time
	// correlation is the caller's mark (store.Approval.Correlation).
	correlation string
}

// ApprovalPendingError is a call still waiting for approval.
type ApprovalPendingError struct{ Approval Approval }

func (e *ApprovalPendingError) Error() string {
	return fmt.Sprintf("tool %q of MCP server %q waits for approval %s (until %s)", e.Approval.Tool, e.Approval.ServerID, e.Approval.ID, e.Approval.ExpiresAt.Format(time.RFC3339))
}

func (e *ApprovalPendingError) Unwrap() error { return ErrApprovalPending }

// ApprovalDeniedError is a call a person denied, with their reason.
type ApprovalDeniedError struct{ Approval Approval }

func (e *ApprovalDeniedError) Error() string {
	msg := fmt.Sprintf("the call of tool %q of MCP server %q was denied by a person", e.Approval.Tool, e.Approval.ServerID)
	if e.Approval.Reason != "" {
		msg += ": " + e.Approval.Reason
	}
	return msg
}

func (e *ApprovalDeniedError) Unwrap() error { return ErrApprovalDenied }

type approvalKey struct{}

// WithApproval returns ctx presenting approval id with the calls made
// with it: such a call runs nothing, but waits for the approval's outcome
// and returns it, when its tool and arguments are the approval's (else an
// error wrapping ErrApprovalMismatch). It is how a caller that was told
// to wait (ErrApprovalPending, or the API's 202) gets the result.
func WithApproval(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, approvalKey{}, id)
}

// agentApprovals is what the agent keeps for its approvals.
type agentApprovals struct {
	lifetime  time.Duration
	retention time.Duration // approvals that ended are kept this long (approvalrun.go)
	max       int           // and at most this many

	// mu guards changed and pruned.
	mu      sync.Mutex
	changed chan struct{} // closed and replaced when an approval changes here
	pruned  time.Time     // when the approvals were last pruned

	// ctx, cancel and wg own the approved calls running.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	requested, answered, expired metric.Int64Counter
	decision                     metric.Float64Histogram
}

func (ap *agentApprovals) init(o Options) {
	ap.lifetime = o.ApprovalLifetime
	if ap.lifetime <= 0 {
		ap.lifetime = DefaultApprovalLifetime
	}
	ap.retention, ap.max = retentionOf(o)
	ap.changed = make(chan struct{})
	ap.ctx, ap.cancel = context.WithCancel(context.Background())
	mp := o.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter("github.com/agentmcp/agentmcp/agent")
	ap.requested, _ = meter.Int64Counter("agentmcp.approvals.requested", metric.WithUnit("{approval}"),
		metric.WithDescription("Tool calls the agents' policies asked a person to approve."))
	ap.answered, _ = meter.Int64Counter("agentmcp.approvals.answered", metric.WithUnit("{approval}"),
		metric.WithDescription("Approvals answered, by decision (approve, deny)."))
	ap.expired, _ = meter.Int64Counter("agentmcp.approvals.expired", metric.WithUnit("{approval}"),
		metric.WithDescription("Approvals not answered before they expired."))
	ap.decision, _ = meter.Float64Histogram("agentmcp.approvals.decision_time", metric.WithUnit("s"),
		metric.WithDescription("Time from an approval's request to its answer."))
}

// watch returns a channel closed at the next change.
func (ap *agentApprovals) watch() <-chan struct{} {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return ap.changed
}

// signal wakes the watchers.
func (ap *agentApprovals) signal() {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	close(ap.changed)
	ap.changed = make(chan struct{})
}

func (a *Agent) approvalStore() (store.ApprovalStore, error) {
	as, ok := a.st.(store.ApprovalStore)
	if !ok {
		return nil, fmt.Errorf("agent %s: %w", a.ns, ErrApprovalsUnsupported)
	}
	return as, nil
}

// canonicalArgs returns args as canonical JSON (keys sorted, numbers as
// written): the form arguments are bound and compared in.
func canonicalArgs(args any) (json.RawMessage, error) {
	var raw []byte
	switch v := args.(type) {
	case nil:
		return json.RawMessage(`{}`), nil
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return json.RawMessage(`{}`), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	out, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return out, nil
}

// ask stores the approval of a call and waits for its outcome.
func (a *Agent) ask(ctx context.Context, serverID, tool string, args any) (*mcp.CallToolResult, error) {
	as, err := a.approvalStore()
	if err != nil {
		return nil, err
	}
	canon, err := canonicalArgs(args)
	if err != nil {
		return nil, fmt.Errorf("agent %s: approval of %q on server %q: %w", a.ns, tool, serverID, err)
	}
	now := a.now().UTC()
	row := store.Approval{Namespace: a.ns, ID: "ap_" + rand.Text()[:20], ServerID: serverID, Tool: tool,
		Arguments: canon, Caller: string(CallerOf(ctx)), State: store.ApprovalPending,
		RequestedAt: now, ExpiresAt: now.Add(a.apr.lifetime), Correlation: taskCorrelation(ctx)}
	// Stored whatever is left of ctx (the store bounds its own writes): a
	// caller about to give up still leaves an approval to answer.
	if err := as.PutApproval(context.WithoutCancel(ctx), row); err != nil {
		return nil, fmt.Errorf("agent %s: store approval: %w: %w", a.ns, ErrStorage, err)
	}
	a.apr.requested.Add(context.Background(), 1)
	a.auditAsked(ctx, row) // audit.go
	a.logger.Info("tool call waits for approval", "approval", row.ID, "server", serverID, "tool", tool)
	a.apr.signal()
	a.updates.stateChanged()
	a.maybePruneApprovals(context.WithoutCancel(ctx), as, true) // approvalrun.go
	if asker, ok := ctx.Value(askerKey{}).(ApprovalAsker); ok {
		return a.awaitAsking(ctx, asker, row)
	}
	return a.awaitApproval(ctx, row.ID)
}

// replay answers a call presented with approval id.
func (a *Agent) replay(ctx context.Context, id, serverID, tool string, args any) (*mcp.CallToolResult, error) {
	ap, err := a.Approval(ctx, id)
	if err != nil {
		return nil, err
	}
	canon, err := canonicalArgs(args)
	if err != nil {
		return nil, err
	}
	if ap.ServerID != serverID || ap.Tool != tool || !bytes.Equal(canon, ap.Arguments) {
		return nil, fmt.Errorf("%w: approval %s is for tool %q of server %q with its own arguments", ErrApprovalMismatch, id, ap.Tool, ap.ServerID)
	}
	return a.awaitApproval(ctx, id)
}

// awaitApproval waits until approval id reaches an end (done, denied,
// expired) and returns the call's outcome, or until ctx ends (an
// *ApprovalPendingError).
func (a *Agent) awaitApproval(ctx context.Context, id string) (*mcp.CallToolResult, error) {
	// The approval is read whatever is left of ctx (the store bounds its
	// reads), so that a caller out of time is told which approval waits.
	rctx := context.WithoutCancel(ctx)
	for {
		changed := a.apr.watch()
		ap, err := a.Approval(rctx, id)
		if err != nil {
			return nil, err
		}
		switch ap.State {
		case store.ApprovalDone:
			switch {
			case ap.Code == store.ApprovalToolChanged:
				return nil, fmt.Errorf("agent %s: approval %s: %w", a.ns, ap.ID, &ToolChangedError{ServerID: ap.ServerID, Tool: ap.Tool, State: store.PinChanged})
			case ap.Code == store.ApprovalInterrupted:
				return nil, fmt.Errorf("agent %s: approved call of %q on server %q: %w: %s", a.ns, ap.Tool, ap.ServerID, ErrApprovalInterrupted, ap.Error)
			case ap.Result == nil:
				return nil, fmt.Errorf("agent %s: approved call of %q on server %q: %s", a.ns, ap.Tool, ap.ServerID, ap.Error)
			}
			return ap.Result, nil
		case store.ApprovalDenied:
			return nil, &ApprovalDeniedError{Approval: ap}
		case store.ApprovalExpired:
			return nil, fmt.Errorf("%w: approval %s of tool %q of server %q was not answered by %s", ErrApprovalExpired, ap.ID, ap.Tool, ap.ServerID, ap.ExpiresAt.Format(time.RFC3339))
		}
		var expiry <-chan time.Time
		var t *time.Timer
		if ap.State == store.ApprovalPending {
			t = time.NewTimer(max(ap.ExpiresAt.Sub(a.now()), 0))
			expiry = t.C
		}
		var stop bool
		select {
		case <-changed:
		case <-expiry:
		case <-ctx.Done():
			stop = true
		case <-a.quit:
			stop = true
		}
		if t != nil {
			t.Stop()
		}
		if stop {
			return nil, &ApprovalPendingError{Approval: ap}
		}
	}
}

// Approvals returns the agent's approvals: pending ones first (oldest
// first), then the others, most recent first. Pending approvals past
// their expiry are marked expired.
func (a *Agent) Approvals(ctx context.Context) ([]Approval, error) {
	as, err := a.approvalStore()
	if err != nil {
		return nil, err
	}
	a.maybePruneApprovals(ctx, as, false) // approvalrun.go
	rows, err := as.ListApprovals(ctx, a.ns)
	if err != nil {
		return nil, fmt.Errorf("agent %s: list approvals: %w: %w", a.ns, ErrStorage, err)
	}
	out := make([]Approval, 0, len(rows))
	for _, row := range rows {
		out = append(out, approvalOf(a.expireDue(ctx, as, row)))
	}
	slices.SortStableFunc(out, func(x, y Approval) int {
		xp, yp := x.State == store.ApprovalPending, y.State == store.ApprovalPending
		switch {
		case xp && yp:
			return x.RequestedAt.Compare(y.RequestedAt)
		case xp:
			return -1
		case yp:
			return 1
		}
		return y.RequestedAt.Compare(x.RequestedAt)
	})
	return out, nil
}

// Approval returns one approval, or an error wrapping ErrUnknownApproval.
func (a *Agent) Approval(ctx context.Context, id string) (Approval, error) {
	as, err := a.approvalStore()
	if err != nil {
		return Approval{}, err
	}
	row, err := as.GetApproval(ctx, a.ns, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Approval{}, fmt.Errorf("%w %q", ErrUnknownApproval, id)
	case err != nil:
		return Approval{}, fmt.Errorf("agent %s: get approval: %w: %w", a.ns, ErrStorage, err)
	}
	return approvalOf(a.expireDue(ctx, as, row)), nil
}

// expireDue marks row expired when it is pending past its expiry.
func (a *Agent) expireDue(ctx context.Context, as store.ApprovalStore, row store.Approval) store.Approval {
	now := a.now().UTC()
	if row.State != store.ApprovalPending || now.Before(row.ExpiresAt) {
		return row
	}
	next := row
	next.State, next.DecidedAt = store.ApprovalExpired, now
	ok, err := as.SwapApproval(ctx, next, store.ApprovalPending)
	switch {
	case err != nil:
		a.logger.Warn("cannot mark an approval expired", "approval", row.ID, "error", err)
		return next // expired all the same: it may no longer be approved
	case !ok:
		if cur, err := as.GetApproval(ctx, a.ns, row.ID); err == nil {
			return cur
		}
		return next
	}
	a.apr.expired.Add(context.Background(), 1)
	a.audit.expired(next) // audit.go
	a.apr.signal()
	return next
}

// Approve approves a pending approval: its call runs once, in the
// background (the agent stays awake while it runs), and its outcome is
// stored with it (state done) and given to the caller waiting for it.
// remember also adds a rule to the policy that allows every call of that
// tool, ahead of the others. Approving an approval already approved (or
// done) changes nothing, and returns it: of two processes that approve it,
// one runs the call. An expired approval gives an error wrapping
// ErrApprovalExpired, a denied one ErrApprovalAnswered. The decider ctx
// carries (WithDecider) is stored with the answer; an invalid one gives
// an error wrapping ErrInvalidDecider.
func (a *Agent) Approve(ctx context.Context, id string, remember bool) (Approval, error) {
	if a.isClosed() {
		return Approval{}, ErrClosed
	}
	if err := CheckDecider(DeciderOf(ctx)); err != nil {
		return Approval{}, err
	}
	as, row, err := a.answerable(ctx, id)
	if err != nil || row.State != store.ApprovalPending {
		if err == nil && row.State == store.ApprovalDenied {
			err = fmt.Errorf("%w: approval %s was denied", ErrApprovalAnswered, id)
		}
		return approvalOf(row), err
	}
	next := row
	next.State, next.DecidedAt, next.Remember = store.ApprovalApproved, a.now().UTC(), remember
	next.DecidedBy = DeciderOf(ctx) // decider.go
	ok, err := as.SwapApproval(ctx, next, store.ApprovalPending)
	if err != nil {
		return Approval{}, fmt.Errorf("agent %s: approve %s: %w: %w", a.ns, id, ErrStorage, err)
	}
	if !ok { // answered meanwhile, here or elsewhere
		_, row, err := a.answerable(ctx, id)
		if err == nil && row.State == store.ApprovalDenied {
			err = fmt.Errorf("%w: approval %s was denied", ErrApprovalAnswered, id)
		}
		return approvalOf(row), err
	}
	a.answered(row, next, "approve")
	a.audit.answered(ctx, next) // audit.go
	if remember {
		if err := a.allowTool(ctx, row.ServerID, row.Tool); err != nil {
			a.logger.Warn("cannot remember an approval", "approval", id, "error", err)
		}
	}
	// Added under a.mu, so that Close (which marks the agent closed under
	// it before it waits) either waits for the call or sees it never start.
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return approvalOf(next), fmt.Errorf("agent %s: approval %s: %w (approved, not run)", a.ns, id, ErrClosed)
	}
	a.apr.wg.Add(1)
	a.mu.Unlock()
	release := a.hold()
	go func() {
		defer a.apr.wg.Done()
		defer release()
		a.runApproved(next)
	}()
	return approvalOf(next), nil
}

// Deny denies a pending approval: its call does not run, and its caller
// gets an error with reason (a model reads it). Denying one already
// denied changes nothing; an approved one gives an error wrapping
// ErrApprovalAnswered, an expired one ErrApprovalExpired. The decider is
// ctx's, as for Approve.
func (a *Agent) Deny(ctx context.Context, id, reason string) (Approval, error) {
	if err := CheckDecider(DeciderOf(ctx)); err != nil {
		return Approval{}, err
	}
	as, row, err := a.answerable(ctx, id)
	if err != nil || row.State != store.ApprovalPending {
		if err == nil && row.State != store.ApprovalDenied {
			err = fmt.Errorf("%w: approval %s is %s", ErrApprovalAnswered, id, row.State)
		}
		return approvalOf(row), err
	}
	next := row
	next.State, next.DecidedAt, next.Reason = store.ApprovalDenied, a.now().UTC(), reason
	next.DecidedBy = DeciderOf(ctx) // decider.go
	ok, err := as.SwapApproval(ctx, next, store.ApprovalPending)
	if err != nil {
		return Approval{}, fmt.Errorf("agent %s: deny %s: %w: %w", a.ns, id, ErrStorage, err)
	}
	if !ok {
		_, row, _ := a.answerable(ctx, id)
		return approvalOf(row), fmt.Errorf("%w: approval %s is %s", ErrApprovalAnswered, id, row.State)
	}
	a.answered(row, next, "deny")
	a.audit.answered(ctx, next) // audit.go
	return approvalOf(next), nil
}

// answerable reads approval id for an answer: an error for an unknown or
// expired one, or one denied (for an approve: see Approve).
func (a *Agent) answerable(ctx context.Context, id string) (store.ApprovalStore, store.Approval, error) {
	as, err := a.approvalStore()
	if err != nil {
		return nil, store.Approval{}, err
	}
	row, err := as.GetApproval(ctx, a.ns, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, store.Approval{}, fmt.Errorf("%w %q", ErrUnknownApproval, id)
	case err != nil:
		return nil, store.Approval{}, fmt.Errorf("agent %s: get approval: %w: %w", a.ns, ErrStorage, err)
	}
	row = a.expireDue(ctx, as, row)
	if row.State == store.ApprovalExpired {
		return as, row, fmt.Errorf("%w: approval %s expired at %s", ErrApprovalExpired, id, row.ExpiresAt.Format(time.RFC3339))
	}
	return as, row, nil
}

// answered counts an answer and tells the waiters.
func (a *Agent) answered(row, next store.Approval, decision string) {
	a.apr.answered.Add(context.Background(), 1, metric.WithAttributes(attribute.String("decision", decision)))
	a.apr.decision.Record(context.Background(), next.DecidedAt.Sub(row.RequestedAt).Seconds())
	a.logger.Info("approval answered", "approval", row.ID, "decision", decision)
	a.apr.signal()
	a.updates.stateChanged()
}

// runApproved runs an approved call and stores its outcome. The call is
// marked running (approved -> running) before anything is sent: of the
// processes that would run it, one does, and a process that finds it
// running after a restart never runs it again (resumeApprovals). The
// pins are checked first: a tool whose definition changed since the ask
// is refused (done, with code tool_changed), not run.
func (a *Agent) runApproved(ap store.Approval) {
	ctx := approvedCtx(a.apr.ctx, ap) // audit.go: the call's caller, and its approval
	as, _ := a.approvalStore()
	// The outcome is stored even when the agent closes meanwhile.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	running := ap
	running.State, running.StartedAt = store.ApprovalRunning, a.now().UTC()
	if ok, err := as.SwapApproval(wctx, running, store.ApprovalApproved); err != nil || !ok {
		if err != nil { // left approved: the next Open runs it
			a.logger.Warn("cannot mark an approved call started; it is not run now", "approval", ap.ID, "error", err)
		}
		return // else another runner has it
	}
	a.apr.signal()
	done := running
	done.State = store.ApprovalDone
	var res *mcp.CallToolResult
	err := a.CheckPin(ctx, ap.ServerID, ap.Tool) // pins.go
	if err == nil {
		res, err = a.callTool(ctx, ap.ServerID, ap.Tool, ap.Arguments, nil)
	} else {
		a.auditRefused(ctx, ap.ServerID, ap.Tool, ap.Arguments, err) // audit.go
	}
	if err == nil {
		done.Result, err = json.Marshal(res)
	}
	if err != nil {
		done.Result, done.Error = nil, err.Error()
		switch {
		case errors.Is(err, ErrToolChanged):
			done.Code = store.ApprovalToolChanged
		case ctx.Err() != nil: // the agent closed while it ran
			done.Code = store.ApprovalInterrupted
		}
	}
	if _, err := as.SwapApproval(wctx, done, store.ApprovalRunning); err != nil {
		a.logger.Warn("cannot store an approved call's outcome", "approval", ap.ID, "error", err)
	}
	a.apr.signal()
	a.updates.stateChanged()
}

// isClosed reports whether Close was called.
func (a *Agent) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// approvalOf returns the Approval of a stored row.
func approvalOf(row store.Approval) Approval {
	ap := Approval{ID: row.ID, ServerID: row.ServerID, Tool: row.Tool, Arguments: row.Arguments,
		Caller: policy.Caller(row.Caller), State: row.State, RequestedAt: row.RequestedAt, ExpiresAt: row.ExpiresAt,
		DecidedAt: row.DecidedAt, DecidedBy: row.DecidedBy, Reason: row.Reason, Remember: row.Remember, Error: row.Error,
		Code: row.Code, StartedAt: row.StartedAt, correlation: row.Correlation}
	if ap.State == store.ApprovalRunning {
		ap.State = store.ApprovalApproved // the API's states: started, not done
	}
	if len(row.Result) > 0 {
		var res mcp.CallToolResult
		if err := json.Unmarshal(row.Result, &res); err == nil {
			ap.Result = &res
		} else if ap.Error == "" {
			ap.Error = "the stored result cannot be read: " + err.Error()
		}
	}
	return ap
}
