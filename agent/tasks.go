package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
)

// Durable tasks: a tool call that runs as an MCP task (see mcpclient's
// Tasks) is stored with the agent, when its store keeps tasks
// (store.TaskStore), before its first poll; its status as it changes; and
// its result or error when it ends. An agent opened on a store with
// running tasks resumes polling them, once their server is restored, and
// stores their outcome: TaskResult waits for it, Tasks lists them.

// ErrUnknownTask is returned for a task the agent does not have.
var ErrUnknownTask = errors.New("agent: unknown task")

// taskWrites bounds one write of a task's record.
const taskWriteTimeout = 5 * time.Second

type correlationKey struct{}

// WithTaskCorrelation returns a context whose tool calls, when they run
// as tasks, are stored with the caller's reference id (store.Task's
// Correlation): what an API request or a conversation turn uses to find
// its task again after a restart.
func WithTaskCorrelation(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, correlationKey{}, id)
}

type taskKey struct{ serverID, taskID string }

// agentTasks is the agent's part in its tasks.
type agentTasks struct {
	ctx    context.Context // ends with the agent: resumed polls
	cancel context.CancelFunc
	wg     sync.WaitGroup // resumed polls, and calls that may outlive their request (taskcall.go)

	// mu guards the fields below. It is a leaf lock.
	mu      sync.Mutex
	done    map[taskKey]chan struct{} // closed when the task's outcome is stored
	running map[taskKey]time.Duration // tasks polled here, not ended: their poll interval
	polled  []chan struct{}           // resumed tasks: closed after their first poll
	repolls map[taskKey]int           // outcomes the store refused, by task
}

// taskStore returns the agent's store as a TaskStore, if it is one.
func (a *Agent) taskStore() (store.TaskStore, bool) {
	if fs, ok := a.st.(*fencedStore); ok {
		return fs.taskStore()
	}
	ts, ok := a.st.(store.TaskStore)
	return ts, ok
}

// doneChan returns the channel closed when the outcome of task k is
// stored.
func (a *Agent) doneChan(k taskKey) chan struct{} {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	if a.tasks.done == nil {
		a.tasks.done = make(map[taskKey]chan struct{})
	}
	ch, ok := a.tasks.done[k]
	if !ok {
		ch = make(chan struct{})
		a.tasks.done[k] = ch
	}
	return ch
}

// taskCall is the record of one call's task, kept while the call runs.
type taskCall struct {
	a   *Agent
	mu  sync.Mutex
	rec *store.Task // nil until the server created the task
}

// taskOptions returns opts with the hooks that store the call's task,
// when the call may become one: the server offered tasks and the store
// keeps them. Other calls get opts as they are, at no cost.
func (a *Agent) taskOptions(ctx context.Context, serverID string, opts *mcpclient.CallOptions) (*mcpclient.CallOptions, *taskCall) {
	if !a.m.OffersTasks(serverID) {
		return opts, nil
	}
	if _, ok := a.taskStore(); !ok {
		return opts, nil
	}
	var o mcpclient.CallOptions
	if opts != nil {
		o = *opts
	}
	tc := &taskCall{a: a}
	correlation, _ := ctx.Value(correlationKey{}).(string)
	started, status := o.TaskStarted, o.TaskStatus
	o.TaskStarted = func(h *mcpclient.TaskHandle) {
		rec := recordOf(a.ns, h)
		rec.Correlation = correlation
		tc.mu.Lock()
		tc.rec = &rec
		tc.mu.Unlock()
		a.doneChan(taskKey{h.ServerID, h.TaskID})
		a.noteRunning(taskKey{h.ServerID, h.TaskID}, h.PollInterval)
		a.putTask(rec) // before the first poll
		if started != nil {
			started(h)
		}
	}
	o.TaskStatus = func(t *mcpclient.Task) {
		tc.mu.Lock()
		var rec store.Task
		if tc.rec != nil {
			tc.rec.Status, tc.rec.StatusMessage = string(t.Status), t.StatusMessage
			rec = *tc.rec
		}
		tc.mu.Unlock()
		if rec.TaskID != "" && !t.Status.Terminal() {
			a.putTask(rec)
		}
		if status != nil {
			status(t)
		}
	}
	return &o, tc
}

// ended stores the outcome of the call's task, if it had one. A call cut
// short by the agent's end leaves it running, to be resumed.
func (tc *taskCall) ended(res *mcp.CallToolResult, err error) {
	if tc == nil {
		return
	}
	tc.mu.Lock()
	rec := tc.rec
	tc.mu.Unlock()
	if rec == nil {
		return
	}
	tc.a.finishTask(*rec, res, err)
}

// recordOf returns the record of a task just created.
func recordOf(ns string, h *mcpclient.TaskHandle) store.Task {
	return store.Task{
		Namespace: ns, ServerID: h.ServerID, TaskID: h.TaskID, Tool: h.Tool, Protocol: h.Protocol,
		ArgumentsHash: h.ArgumentsHash, Status: string(mcpclient.TaskWorking),
		TTLMS: h.TTL.Milliseconds(), PollIntervalMS: h.PollInterval.Milliseconds(), ServerCreatedAt: h.CreatedAt,
	}
}

// handleOf returns the handle of a stored task.
func handleOf(t store.Task) *mcpclient.TaskHandle {
	return &mcpclient.TaskHandle{
		ServerID: t.ServerID, Tool: t.Tool, TaskID: t.TaskID, Protocol: t.Protocol, ArgumentsHash: t.ArgumentsHash,
		CreatedAt: t.ServerCreatedAt, TTL: time.Duration(t.TTLMS) * time.Millisecond,
		PollInterval: time.Duration(t.PollIntervalMS) * time.Millisecond,
	}
}

// finishTask stores a task's outcome and tells whoever waits for it;
// an outcome that is only the agent's end stores nothing. When the store
// refuses the outcome, the task stays running, as the store still has
// it: it is polled again later (repoll), as it would be after a restart,
// for the server keeps an ended task's outcome for its ttl.
func (a *Agent) finishTask(rec store.Task, res *mcp.CallToolResult, err error) {
	if err != nil && (errors.Is(err, mcpclient.ErrClosed) || a.tasks.ctx.Err() != nil) {
		return // the agent ends: the task is resumed when it opens again
	}
	if err != nil && !isOutcome(err) {
		// The poll failed, not the task (the server unreachable for now,
		// the lease's gate closed): it may still run there.
		a.logger.Warn("cannot poll a task: polling it again later", "server", rec.ServerID, "task", rec.TaskID, "error", err)
		a.repoll(rec)
		return
	}
	out := outcome(rec, res, err)
	if werr := a.writeTask(out); werr != nil {
		a.logger.Warn("cannot store a task's outcome: polling it again later", "server", rec.ServerID, "task", rec.TaskID, "error", werr)
		a.repoll(rec)
		return
	}
	k := taskKey{rec.ServerID, rec.TaskID}
	a.tasks.mu.Lock()
	delete(a.tasks.running, k)
	delete(a.tasks.repolls, k)
	a.tasks.mu.Unlock()
	close(a.doneChan(k))
}

// repollBase and repollMax bound the wait before a task whose outcome the
// store refused is polled again (doubling from one to the other).
const (
	repollBase = 100 * time.Millisecond
	repollMax  = 30 * time.Second
)

// repoll polls the task of rec again, after a wait that doubles with each
// failed poll or outcome the store refused, and stores its outcome; a
// task past its ttl is stored expired without a poll. It ends with the
// agent, the task still stored as running: resumed when it opens again.
func (a *Agent) repoll(rec store.Task) {
	k := taskKey{rec.ServerID, rec.TaskID}
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	if a.tasks.ctx.Err() != nil {
		return // the agent ends (Close cancels under mu)
	}
	if a.tasks.repolls == nil {
		a.tasks.repolls = make(map[taskKey]int)
	}
	n := a.tasks.repolls[k]
	a.tasks.repolls[k] = n + 1
	wait := repollMax
	if n < 16 {
		wait = min(repollBase<<n, repollMax)
	}
	a.tasks.wg.Add(1)
	go func() {
		defer a.tasks.wg.Done()
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-a.tasks.ctx.Done():
			return
		}
		if ttl := time.Duration(rec.TTLMS) * time.Millisecond; ttl > 0 && !rec.ServerCreatedAt.IsZero() && a.now().After(rec.ServerCreatedAt.Add(ttl)) {
			// Past its retention: the server has forgotten it by now.
			a.finishTask(rec, nil, &mcpclient.TaskError{ServerID: rec.ServerID, TaskID: rec.TaskID,
				Status: mcpclient.TaskStatus(rec.Status), Kind: mcpclient.ErrTaskExpired})
			return
		}
		res, err := a.m.WaitTask(a.tasks.ctx, handleOf(rec), nil)
		a.finishTask(rec, res, err)
	}()
}

// isOutcome reports whether err, a wait's, is how the task ended: the
// server ended it (a *TaskError: failed, cancelled, expired), the caller
// gave up (and the task was cancelled), the server answered what no poll
// will mend (ErrProtocol), or the agent no longer has the server
// (ErrNotRegistered). Any other error is the poll's.
func isOutcome(err error) bool {
	var te *mcpclient.TaskError
	return errors.As(err, &te) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, mcpclient.ErrProtocol) || errors.Is(err, mcpclient.ErrNotRegistered)
}

// outcome returns rec as stored once the task ended with res or err.
func outcome(rec store.Task, res *mcp.CallToolResult, err error) store.Task {
	rec.Done = true
	switch {
	case err == nil:
		data, merr := json.Marshal(res)
		if merr != nil {
			rec.Error = merr.Error()
		} else {
			rec.Result, rec.Status = data, string(mcpclient.TaskCompleted)
		}
	default:
		rec.Error = err.Error()
		var te *mcpclient.TaskError
		switch {
		case errors.As(err, &te):
			rec.Status = string(te.Status)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			rec.Status = string(mcpclient.TaskCancelled) // the call cancelled it
		default:
			rec.Status = string(mcpclient.TaskFailed)
		}
	}
	return rec
}

// noteRunning records that task k is polled here.
func (a *Agent) noteRunning(k taskKey, interval time.Duration) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	if a.tasks.running == nil {
		a.tasks.running = make(map[taskKey]time.Duration)
	}
	a.tasks.running[k] = interval
}

// runningTasks reports how many tasks the agent polls that have not
// ended, and the shortest poll interval their servers suggested (0 when
// none did): what a Host needs to wake a hibernated agent to poll them.
// It does no I/O.
func (a *Agent) runningTasks() (n int, interval time.Duration) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	for _, d := range a.tasks.running {
		if d > 0 && (interval == 0 || d < interval) {
			interval = d
		}
	}
	return len(a.tasks.running), interval
}

// awaitTaskPolls waits until every task resumed when the agent opened was
// polled once (or ended), or ctx ends.
func (a *Agent) awaitTaskPolls(ctx context.Context) error {
	a.tasks.mu.Lock()
	polled := slices.Clone(a.tasks.polled)
	a.tasks.mu.Unlock()
	for _, ch := range polled {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// putTask writes a task's record; a failure is logged, the next write
// carries the state again.
func (a *Agent) putTask(rec store.Task) {
	if err := a.writeTask(rec); err != nil {
		a.logger.Warn("cannot store a task", "server", rec.ServerID, "task", rec.TaskID, "error", err)
	}
}

// writeTask writes a task's record.
func (a *Agent) writeTask(rec store.Task) error {
	ts, ok := a.taskStore()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), taskWriteTimeout)
	defer cancel()
	return ts.PutTask(ctx, rec)
}

// resumeTasks resumes polling the stored tasks that had not ended, each
// once its server's first connection attempt settled. Open calls it.
func (a *Agent) resumeTasks(ctx context.Context) error {
	ts, ok := a.taskStore()
	if !ok {
		return nil
	}
	tasks, err := ts.ListTasks(ctx, a.ns)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if t.Done {
			continue
		}
		k := taskKey{t.ServerID, t.TaskID}
		a.doneChan(k)
		a.noteRunning(k, time.Duration(t.PollIntervalMS)*time.Millisecond)
		polled := make(chan struct{})
		var once sync.Once
		firstPoll := func() { once.Do(func() { close(polled) }) }
		a.tasks.mu.Lock()
		a.tasks.polled = append(a.tasks.polled, polled)
		a.tasks.mu.Unlock()
		a.tasks.wg.Add(1)
		go func() {
			defer a.tasks.wg.Done()
			defer firstPoll()
			a.WaitRestored(a.tasks.ctx, t.ServerID)
			rec := t
			res, err := a.m.WaitTask(a.tasks.ctx, handleOf(t), &mcpclient.CallOptions{
				TaskStatus: func(s *mcpclient.Task) {
					rec.Status, rec.StatusMessage = string(s.Status), s.StatusMessage
					if !s.Status.Terminal() {
						a.putTask(rec)
						firstPoll() // a terminal status is first fetched and stored
					}
				},
			})
			a.finishTask(rec, res, err)
		}()
	}
	return nil
}

// Tasks returns the agent's stored tasks, running and ended, in the
// order they started. It fails when the store keeps no tasks.
func (a *Agent) Tasks(ctx context.Context) ([]store.Task, error) {
	ts, ok := a.taskStore()
	if !ok {
		return nil, fmt.Errorf("agent %s: the store keeps no tasks", a.ns)
	}
	return ts.ListTasks(ctx, a.ns)
}

// Task returns one stored task, or an error wrapping ErrUnknownTask.
func (a *Agent) Task(ctx context.Context, serverID, taskID string) (store.Task, error) {
	tasks, err := a.Tasks(ctx)
	if err != nil {
		return store.Task{}, err
	}
	for _, t := range tasks {
		if t.ServerID == serverID && t.TaskID == taskID {
			return t, nil
		}
	}
	return store.Task{}, fmt.Errorf("%w: %q on server %q", ErrUnknownTask, taskID, serverID)
}

// TaskResult waits for a stored task to end (its call, or the agent's
// resumed polling, stores its outcome) and returns its result, or an
// error saying why it has none.
func (a *Agent) TaskResult(ctx context.Context, serverID, taskID string) (*mcp.CallToolResult, error) {
	t, err := a.Task(ctx, serverID, taskID)
	if err != nil {
		return nil, err
	}
	if !t.Done {
		select {
		case <-a.doneChan(taskKey{serverID, taskID}):
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-a.quit:
			return nil, mcpclient.ErrClosed
		}
		if t, err = a.Task(ctx, serverID, taskID); err != nil {
			return nil, err
		}
	}
	if t.Result == nil {
		return nil, fmt.Errorf("task %q on server %q %s: %s", taskID, serverID, t.Status, t.Error)
	}
	res := &mcp.CallToolResult{}
	if err := res.UnmarshalJSON(t.Result); err != nil {
		return nil, fmt.Errorf("task %q on server %q: stored result: %w", taskID, serverID, err)
	}
	return res, nil
}

// CancelTask cancels a stored task on its server (tasks/cancel); its
// wait, in the call or resumed, then stores it cancelled.
func (a *Agent) CancelTask(ctx context.Context, serverID, taskID string) error {
	t, err := a.Task(ctx, serverID, taskID)
	if err != nil {
		return err
	}
	if t.Done {
		return nil
	}
	return a.m.CancelTask(ctx, handleOf(t))
}
