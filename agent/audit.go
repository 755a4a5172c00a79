package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentmcp/agentmcp/internal/jsonrpcwire"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// The agent's audit log: every tool call made through the agent (by any
// caller), every decision on one (the policy's, a person's on an
// approval, an approval's expiry), every pin decision and every server
// added or removed is one store.AuditRecord. Records are made on the
// call's path without I/O (the time, the decision, the outcome; the
// arguments copied as JSON, so that a caller may change them once the
// call returned: a map of plain values as its canonical JSON, written
// without reflection) and handed to a buffered channel; a flusher
// goroutine sleeps through a batch window (Options.AuditWindow) from the
// first record, then canonicalises the arguments not canonical yet,
// hashes them and appends the records to the store in one transaction. A full buffer drops the record, counts it
// (agentmcp.audit.dropped) and logs once, rather than slow the call down.
// After a write, the flusher prunes the agent's log to
// Options.AuditKeep records (once a tenth of them was written) and
// Options.AuditMaxAge on the agent's clock (once a minute).

// Defaults of the audit log's options.
const (
	DefaultAuditKeep   = 100_000
	DefaultAuditMaxAge = 30 * 24 * time.Hour
	DefaultAuditWindow = 100 * time.Millisecond
)

const (
	auditBuffer     = 8192        // records waiting for the flusher
	auditBatch      = 1000        // the most records in one write
	auditPruneEvery = time.Minute // on the agent's clock, at the least
	auditWriteLimit = 10 * time.Second
)

// ErrAuditUnsupported is wrapped by Audit's error when the agent's store
// keeps no audit log (it does not implement store.AuditStore), or the log
// is off (Options.NoAudit).
var ErrAuditUnsupported = errors.New("the store keeps no audit log")

// AuditRecord is a record of the agent's audit log; see store.AuditRecord
// for its fields and store.Audit* for its decisions and outcomes.
type AuditRecord = store.AuditRecord

// AuditQuery selects records of the agent's audit log (store.AuditQuery).
type AuditQuery = store.AuditQuery

// auditEntry is a record on its way to the store.
type auditEntry struct {
	rec   store.AuditRecord
	canon json.RawMessage // the call's arguments as canonical JSON, or nil
	args  any             // else the call's arguments (JSON, or copied as JSON), canonicalised by the flusher
	call  bool            // a call's record: its arguments are hashed (and kept when full)
	full  bool            // the policy keeps the arguments
}

// auditLog is the agent's recorder. Its methods are safe for concurrent
// use and never block: a nil st (no log) makes them do nothing.
type auditLog struct {
	st     store.AuditStore
	ns     string
	now    func() time.Time
	name   func(serverID string) string // a server's name, "" when gone
	logger *slog.Logger
	window time.Duration
	keep   int
	maxAge time.Duration

	ch      chan auditEntry
	kick    chan struct{} // a record was added (capacity 1)
	full    chan struct{} // a batch is waiting (capacity 1)
	flushes chan chan struct{}
	quit    chan struct{}
	done    chan struct{}
	stop    sync.Once

	dropped    metric.Int64Counter
	droppedLog atomic.Bool // a drop was logged since the last write
	failedLog  bool        // a failed write was logged (flusher only)

	// Owned by the flusher.
	batch      []auditEntry
	recs       []store.AuditRecord // write's, kept for the next batch
	lastPrune  time.Time
	sincePrune int
}

// initAudit starts the agent's recorder, when its store keeps an audit
// log and o does not turn it off.
func (a *Agent) initAudit(o Options) {
	l := &a.audit
	st := a.st
	if fs, ok := st.(*fencedStore); ok {
		st = fs.Store // records are not fenced: each replica writes its own
	}
	as, ok := st.(store.AuditStore)
	if !ok || o.NoAudit {
		return
	}
	l.st, l.ns, l.now, l.logger = as, a.ns, a.now, a.logger
	l.name = func(id string) string {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.rows[id].Name
	}
	l.window = cmpOr(o.AuditWindow, DefaultAuditWindow)
	l.keep = int(cmpOr(int64(o.AuditKeep), DefaultAuditKeep))
	l.maxAge = cmpOr(o.AuditMaxAge, DefaultAuditMaxAge)
	l.ch = make(chan auditEntry, auditBuffer)
	l.kick = make(chan struct{}, 1)
	l.full = make(chan struct{}, 1)
	l.flushes = make(chan chan struct{})
	l.quit = make(chan struct{})
	l.done = make(chan struct{})
	mp := o.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	l.dropped, _ = mp.Meter("github.com/agentmcp/agentmcp/agent").Int64Counter("agentmcp.audit.dropped",
		metric.WithUnit("{record}"), metric.WithDescription("Audit records dropped because the recorder's buffer was full."))
	go l.run()
}

// cmpOr returns v, or def when v is zero; a negative v means no bound (0).
func cmpOr[T int64 | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Audit returns the records of the agent's audit log that q selects
// (store.AuditQuery: oldest first unless q.NewestFirst, at most q.Limit,
// after or before q.Cursor). The records this process made so far are
// written first, so that it reads its own; other processes' appear once
// their batch is written. An error wraps ErrAuditUnsupported when the
// store keeps no log, ErrStorage when it fails.
func (a *Agent) Audit(ctx context.Context, q AuditQuery) ([]AuditRecord, error) {
	l := &a.audit
	if l.st == nil {
		return nil, fmt.Errorf("agent %s: %w", a.ns, ErrAuditUnsupported)
	}
	l.flush(ctx)
	recs, err := l.st.QueryAudit(ctx, a.ns, q)
	if err != nil {
		return nil, fmt.Errorf("agent %s: audit log: %w: %w", a.ns, ErrStorage, err)
	}
	return recs, nil
}

// AuditEnabled reports whether the agent keeps an audit log.
func (a *Agent) AuditEnabled() bool { return a.audit.st != nil }

// add hands e to the flusher, or drops it when the buffer is full.
func (l *auditLog) add(e auditEntry) {
	if l.st == nil {
		return
	}
	e.rec.Namespace = l.ns
	if e.rec.Time.IsZero() {
		e.rec.Time = l.now()
	}
	select {
	case l.ch <- e:
		select {
		case l.kick <- struct{}{}:
		default:
		}
		if len(l.ch) >= auditBatch {
			select {
			case l.full <- struct{}{}:
			default:
			}
		}
	default:
		l.dropped.Add(context.Background(), 1)
		if !l.droppedLog.Swap(true) {
			l.logger.Warn("audit records dropped: the recorder's buffer is full (the store is slower than the calls)", "buffer", auditBuffer)
		}
	}
}

// setArgs keeps what e needs of a call's arguments, a copy (the caller
// may change them once the call returned): a map of plain JSON values as
// its canonical JSON, written without reflection; JSON as given as is,
// and anything else marshalled, for the flusher to canonicalise. The
// flusher hashes them.
func (e *auditEntry) setArgs(args any) {
	switch v := args.(type) {
	case nil, json.RawMessage, []byte:
		e.args = v
		return
	case map[string]any:
		if canon, ok := canonicalMap(v); ok {
			e.canon = canon
			return
		}
	}
	if b, err := json.Marshal(args); err == nil {
		e.args = json.RawMessage(b)
	}
}

// argsBuffers are the buffers canonicalMap encodes into.
var argsBuffers = sync.Pool{New: func() any { return new([]byte) }}

// canonicalMap returns m's canonical JSON, what canonicalArgs makes of it
// (TestAuditArgsCanonical), when m holds only plain JSON values (maps,
// slices, strings, booleans, nil, numbers: Go's or json.Number), whose
// json.Marshal form (keys sorted at every level) is canonical already;
// ok is false for any other value (a struct's fields in their order, the
// keys of json.RawMessage in theirs), a value that does not marshal, and
// invalid UTF-8 (json.Marshal writes \ufffd, canonicalArgs the
// character).
func canonicalMap(m map[string]any) (canon json.RawMessage, ok bool) {
	if len(m) == 0 {
		return json.RawMessage(`{}`), true
	}
	p := argsBuffers.Get().(*[]byte)
	defer func() {
		if cap(*p) <= 16<<10 {
			argsBuffers.Put(p)
		}
	}()
	b, ok := jsonrpcwire.AppendPlain((*p)[:0], m)
	*p = b
	if !ok || bytes.Contains(b, []byte(`\ufffd`)) {
		return nil, false
	}
	if bytes.ContainsAny(b, "<>&") { // json.Marshal escapes them, AppendJSON does not
		return escapeHTML(b), true
	}
	return bytes.Clone(b), true
}

// escapeHTML returns JSON b with <, > and & escaped as json.Marshal
// escapes them (\u003c, \u003e, \u0026): outside strings, valid JSON
// holds none of them.
func escapeHTML(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for _, c := range b {
		switch c {
		case '<':
			out = append(out, `\u003c`...)
		case '>':
			out = append(out, `\u003e`...)
		case '&':
			out = append(out, `\u0026`...)
		default:
			out = append(out, c)
		}
	}
	return out
}

// hash returns the hash of a call's arguments, and the arguments when
// e.full: their canonical JSON, as setArgs kept it or canonicalised now.
func (e *auditEntry) hash() (string, json.RawMessage) {
	canon := e.canon
	if canon == nil {
		if c, err := canonicalArgs(e.args); err == nil {
			canon = c
		}
	}
	if !e.full {
		return hashArgs(canon), nil
	}
	return hashArgs(canon), canon
}

// callEntry is the record of a call of tool of serverID.
func (a *Agent) callEntry(ctx context.Context, serverID, tool string, args any, decision string) auditEntry {
	e := auditEntry{rec: store.AuditRecord{ServerID: serverID, Tool: tool, Caller: string(CallerOf(ctx)), Decision: decision},
		call: true, full: a.pol.cur.Load().Audit.FullArguments()}
	e.setArgs(args)
	return e
}

// auditCalled records a call that ran (callTool): its outcome and duration.
func (a *Agent) auditCalled(ctx context.Context, serverID, tool string, args any, start time.Time, res *mcp.CallToolResult, err error) {
	l := &a.audit
	if l.st == nil {
		return
	}
	e := a.callEntry(ctx, serverID, tool, args, store.AuditAllowed)
	e.rec.Duration = time.Since(start)
	if id, ok := ctx.Value(auditApprovalKey{}).(string); ok {
		e.rec.Approval = id
	}
	switch {
	case err != nil:
		e.rec.Outcome, e.rec.ErrorClass = store.AuditError, errorClass(err)
	case res != nil && res.IsError:
		e.rec.Outcome = store.AuditIsError
	default:
		e.rec.Outcome = store.AuditOK
	}
	l.add(e)
}

// auditRefused records a call the agent refused before it ran (admit's error).
func (a *Agent) auditRefused(ctx context.Context, serverID, tool string, args any, err error) {
	l := &a.audit
	if l.st == nil {
		return
	}
	e := a.callEntry(ctx, serverID, tool, args, store.AuditDenied)
	var denied *ToolDeniedError
	switch {
	case errors.As(err, &denied):
		e.rec.Reason = denied.Reason
	case errors.Is(err, ErrRateLimited):
		e.rec.Decision = store.AuditRateLimited
	case errors.Is(err, ErrToolChanged):
		e.rec.Decision = store.AuditToolChanged
	default:
		e.rec.Outcome, e.rec.ErrorClass = store.AuditError, errorClass(err)
	}
	l.add(e)
}

// DeniedError returns the error of a call of tool of serverID by caller
// that decision d denies, with its reason.
func DeniedError(serverID, tool string, caller policy.Caller, d policy.Decision) *ToolDeniedError {
	reason := d.Reason
	if reason == "" {
		reason = "the policy's default"
		if d.Rule >= 0 {
			reason = fmt.Sprintf("the policy's rule %d", d.Rule)
		}
	}
	return &ToolDeniedError{ServerID: serverID, Tool: tool, Caller: caller, Rule: d.Rule, Reason: reason}
}

// AuditRefused records in the audit log a call of tool of serverID that
// was refused before it reached CallTool, with the agent's error (an API
// that checks the policy and the pins first, to answer 403 or 409 rather
// than "unknown tool": a *ToolDeniedError from DeniedError, CheckPin's
// error). The caller is ctx's.
func (a *Agent) AuditRefused(ctx context.Context, serverID, tool string, args any, err error) {
	a.auditRefused(ctx, serverID, tool, args, err)
}

// auditAsked records an approval requested.
func (a *Agent) auditAsked(ctx context.Context, ap store.Approval) {
	l := &a.audit
	if l.st == nil {
		return
	}
	e := a.callEntry(ctx, ap.ServerID, ap.Tool, ap.Arguments, store.AuditAsked)
	e.rec.Approval, e.rec.Time = ap.ID, ap.RequestedAt
	l.add(e)
}

// answered records a person's answer to an approval (ap as answered),
// by the caller ctx carries.
func (l *auditLog) answered(ctx context.Context, ap store.Approval) {
	if l.st == nil {
		return
	}
	decision := store.AuditApproved
	if ap.State == store.ApprovalDenied {
		decision = store.AuditRejected
	}
	l.approval(ap, decision, string(CallerOf(ctx)))
}

// expired records an approval that expired.
func (l *auditLog) expired(ap store.Approval) {
	if l.st == nil {
		return
	}
	l.approval(ap, store.AuditExpired, "")
}

func (l *auditLog) approval(ap store.Approval, decision, caller string) {
	l.add(auditEntry{rec: store.AuditRecord{Time: ap.DecidedAt, ServerID: ap.ServerID, Tool: ap.Tool, Caller: caller,
		DecidedBy: ap.DecidedBy, Decision: decision, Approval: ap.ID, Reason: ap.Reason, ArgumentsHash: hashArgs(ap.Arguments)}})
}

type auditApprovalKey struct{}

// approvedCtx returns ctx for the run of approved call ap: its caller is
// the call's, and its record names the approval.
func approvedCtx(ctx context.Context, ap store.Approval) context.Context {
	return context.WithValue(WithCaller(ctx, policy.Caller(ap.Caller)), auditApprovalKey{}, ap.ID)
}

// pinDecision records a pin decision on tool of serverID: the agent's
// reaction to a listing (state changed, new or removed, with the
// reaction; no caller) or a person's (accept, reject, by caller).
func (l *auditLog) pinDecision(caller, decidedBy, serverID, tool, decision, reaction string) {
	if l.st == nil {
		return
	}
	switch decision {
	case PinAccept:
		decision = store.AuditPinAccepted
	case PinReject:
		decision = store.AuditPinRejected
	case store.PinChanged:
		decision = store.AuditPinChanged
	case store.PinNew:
		decision = store.AuditPinNew
	case store.PinRemoved:
		decision = store.AuditPinRemoved
	}
	l.add(auditEntry{rec: store.AuditRecord{ServerID: serverID, Tool: tool, Caller: caller, DecidedBy: decidedBy, Decision: decision, Reason: reaction}})
}

// server records a server added or removed (decision); a zero row (an
// unknown server removed) records nothing.
func (l *auditLog) server(ctx context.Context, decision string, row store.Server) {
	if l.st == nil || row.ID == "" {
		return
	}
	l.add(auditEntry{rec: store.AuditRecord{ServerID: row.ID, ServerName: row.Name, Caller: string(CallerOf(ctx)), Decision: decision}})
}

// errorClass classifies the error of a call that did not complete.
func errorClass(err error) string {
	var ierr *mcpclient.InterruptedCallError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, mcpclient.ErrClosed), errors.Is(err, ErrClosed):
		return "closed"
	case errors.Is(err, mcpclient.ErrNotRegistered), errors.Is(err, mcpclient.ErrNotConnected):
		return "not_connected"
	case errors.Is(err, mcpclient.ErrUnauthorized):
		return "unauthorized"
	case errors.As(err, &ierr), errors.Is(err, mcpclient.ErrCallInterrupted):
		return "interrupted"
	case errors.Is(err, mcpclient.ErrGateClosed):
		return "unavailable"
	case errors.Is(err, mcpclient.ErrProtocol):
		return "protocol"
	case errors.Is(err, ErrStorage), errors.Is(err, ErrApprovalsUnsupported):
		return "storage"
	}
	return "mcp_error"
}

// hashArgs returns the hex SHA-256 of canonical JSON arguments.
func hashArgs(canon json.RawMessage) string {
	if len(canon) == 0 {
		canon = json.RawMessage(`{}`)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// run is the flusher. It sleeps until a record comes (kick), gathers
// records for the batch window without waking for each (the channel holds
// them; full ends the window early when a batch is ready), then drains
// the channel and writes, until close.
func (l *auditLog) run() {
	defer close(l.done)
	var waiters []chan struct{}
	for {
		select {
		case <-l.kick:
		case w := <-l.flushes:
			l.drainWrite()
			close(w)
			continue
		case <-l.quit:
			l.drainWrite()
			return
		}
		timer := time.NewTimer(l.window)
		quit := false
		select {
		case <-timer.C:
		case <-l.full:
		case w := <-l.flushes:
			waiters = append(waiters, w)
		case <-l.quit:
			quit = true
		}
		timer.Stop()
		l.drainWrite()
		for _, w := range waiters {
			close(w)
		}
		waiters = waiters[:0]
		if quit {
			return
		}
	}
}

// drainWrite writes the records in the channel, auditBatch at a time.
func (l *auditLog) drainWrite() {
	batch := l.batch[:0]
	for {
		select {
		case e := <-l.ch:
			batch = append(batch, e)
			if len(batch) < auditBatch {
				continue
			}
		default:
		}
		l.write(batch)
		n := len(batch)
		clear(batch) // let the records' strings go
		batch = batch[:0]
		if n < auditBatch {
			l.batch = batch
			return
		}
	}
}

// write appends batch to the store, then prunes when due.
func (l *auditLog) write(batch []auditEntry) {
	if len(batch) == 0 {
		return
	}
	recs := slices.Grow(l.recs[:0], len(batch))[:len(batch)]
	defer func() {
		clear(recs) // let the records' strings go
		l.recs = recs[:0]
	}()
	names := map[string]string{}
	for i, e := range batch {
		r := e.rec
		if e.call {
			r.ArgumentsHash, r.Arguments = e.hash()
		}
		if r.ServerName == "" && r.ServerID != "" {
			n, ok := names[r.ServerID]
			if !ok {
				n = l.name(r.ServerID)
				names[r.ServerID] = n
			}
			r.ServerName = n
		}
		recs[i] = r
	}
	ctx, cancel := context.WithTimeout(context.Background(), auditWriteLimit)
	defer cancel()
	if err := l.st.AppendAudit(ctx, recs); err != nil {
		if !l.failedLog {
			l.failedLog = true
			l.logger.Warn("cannot write audit records", "records", len(recs), "error", err)
		}
		return
	}
	if l.failedLog {
		l.failedLog = false
		l.logger.Info("audit records written again")
	}
	l.droppedLog.Store(false)
	l.sincePrune += len(recs)
	// The count is pruned once a tenth of it was written (a range of
	// seqs), the age every auditPruneEvery (which reads all the agent's
	// records: at is not indexed), each at the first write.
	now := l.now()
	aged := l.lastPrune.IsZero() || now.Sub(l.lastPrune) >= auditPruneEvery
	if aged || l.keep > 0 && l.sincePrune >= max(l.keep/10, 1) {
		var before time.Time
		if aged && l.maxAge > 0 {
			before = now.Add(-l.maxAge)
		}
		if _, err := l.st.PruneAudit(ctx, l.ns, l.keep, before); err != nil {
			l.logger.Warn("cannot prune the audit log", "error", err)
			return
		}
		if aged {
			l.lastPrune = now
		}
		l.sincePrune = 0
	}
}

// flush waits until the records added so far are written (or ctx ends).
func (l *auditLog) flush(ctx context.Context) {
	if l.st == nil {
		return
	}
	w := make(chan struct{})
	select {
	case l.flushes <- w:
	case <-l.done:
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-w:
	case <-ctx.Done():
	}
}

// close writes the records added so far and stops the flusher; records
// added later are dropped. It waits while ctx lasts.
func (l *auditLog) close(ctx context.Context) {
	if l.st == nil {
		return
	}
	l.stop.Do(func() { close(l.quit) })
	select {
	case <-l.done:
	case <-ctx.Done():
	}
}

// AuditStore passes through the fenced store's audit log, unfenced: each
// replica appends the records of its own calls.
var _ store.AuditStore = (*fencedStore)(nil)

func (s *fencedStore) audit() (store.AuditStore, error) {
	as, ok := s.Store.(store.AuditStore)
	if !ok {
		return nil, ErrAuditUnsupported
	}
	return as, nil
}

func (s *fencedStore) AppendAudit(ctx context.Context, records []store.AuditRecord) error {
	as, err := s.audit()
	if err != nil {
		return err
	}
	return as.AppendAudit(ctx, records)
}

func (s *fencedStore) QueryAudit(ctx context.Context, ns string, q store.AuditQuery) ([]store.AuditRecord, error) {
	as, err := s.audit()
	if err != nil {
		return nil, err
	}
	return as.QueryAudit(ctx, ns, q)
}

func (s *fencedStore) PruneAudit(ctx context.Context, ns string, keep int, before time.Time) (int64, error) {
	as, err := s.audit()
	if err != nil {
		return 0, err
	}
	return as.PruneAudit(ctx, ns, keep, before)
}
