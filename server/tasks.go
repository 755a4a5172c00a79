package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/server/internal/failure"
	"github.com/agentmcp/agentmcp/store"
)

// The routes of an agent's tasks: tool calls that run as MCP tasks, which
// the agent stores (agent.Agent.Tasks) and polls until they end, across
// restarts. A task's API id is api.TaskID: "{serverId}:{taskId}".

// taskLookupTimeout bounds reading a task's record once its request is
// over (the 202 of a call whose time ran out).
const taskLookupTimeout = 5 * time.Second

// TaskOf returns the API's view of a stored task (GET .../tasks); its
// result only when withResult (GET .../tasks/{id}). Messages are
// sanitised: they reach browsers.
func TaskOf(t store.Task, withResult bool) api.Task {
	out := api.Task{
		ID: api.TaskID(t.ServerID, t.TaskID), ServerID: t.ServerID, TaskID: t.TaskID, Tool: t.Tool,
		Status: t.Status, StatusMessage: netguard.Sanitize(t.StatusMessage), Done: t.Done,
		Error: netguard.Sanitize(t.Error), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
	if !t.ServerCreatedAt.IsZero() {
		sc := t.ServerCreatedAt
		out.ServerCreatedAt = &sc
	}
	if withResult && t.Done && len(t.Result) > 0 {
		out.Result = t.Result
	}
	return out
}

// listTasks is GET /agents/{class}/{name}/tasks: the running tasks and
// the most recent ended ones, most recent first.
func (s *Server) listTasks(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	tasks, err := a.Tasks(r.Context())
	if err != nil {
		writeError(w, s.taskStoreError(r.Context(), err))
		return
	}
	writeJSON(w, http.StatusOK, TaskListOf(tasks))
}

// TaskListOf returns the list GET .../tasks answers for an agent's stored
// tasks: the running ones, then the ended ones, each most recent first,
// the ended ones cut at api.MaxTasksListed in all.
func TaskListOf(tasks []store.Task) api.TaskList {
	tasks = slices.Clone(tasks)
	slices.SortStableFunc(tasks, func(x, y store.Task) int {
		if x.Done != y.Done {
			if x.Done {
				return 1
			}
			return -1
		}
		return cmp.Compare(y.CreatedAt.UnixNano(), x.CreatedAt.UnixNano())
	})
	list := api.TaskList{Tasks: []api.Task{}}
	for _, t := range tasks {
		if t.Done && len(list.Tasks) >= api.MaxTasksListed {
			list.More = true
			break
		}
		list.Tasks = append(list.Tasks, TaskOf(t, false))
	}
	return list
}

// taskStoreError maps an error reading the agent's tasks.
func (s *Server) taskStoreError(ctx context.Context, err error) *api.APIError {
	if aerr := failure.Store(err); aerr != nil {
		return aerr
	}
	return s.unavailableOr(ctx, apiErrorf(http.StatusInternalServerError, api.CodeInternal, "%v", err))
}

// pathTask returns the stored task the path's {id} names.
func (s *Server) pathTask(r *http.Request, a *agent.Agent) (store.Task, *api.APIError) {
	id := r.PathValue("id")
	serverID, taskID, ok := api.SplitTaskID(id)
	if !ok {
		return store.Task{}, apiErrorf(http.StatusNotFound, api.CodeUnknownTask, "%q is not a task id: want {serverId}:{taskId}, as GET .../tasks lists them", id)
	}
	t, err := a.Task(r.Context(), serverID, taskID)
	switch {
	case errors.Is(err, agent.ErrUnknownTask):
		aerr := apiErrorf(http.StatusNotFound, api.CodeUnknownTask, "agent %s has no task %q", a.Namespace(), id)
		aerr.ServerID = serverID
		return store.Task{}, aerr
	case err != nil:
		return store.Task{}, s.taskStoreError(r.Context(), err)
	}
	return t, nil
}

// getTask is GET /agents/{class}/{name}/tasks/{id}: one task, with its
// result once it completed.
func (s *Server) getTask(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	t, aerr := s.pathTask(r, a)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, TaskOf(t, true))
}

// cancelTask is POST /agents/{class}/{name}/tasks/{id}/cancel: the agent
// asks the task's server to cancel it (tasks/cancel) and answers with the
// task as stored; its status becomes cancelled once the agent's wait for
// it hears so from the server. Cancelling an ended task changes nothing.
func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	t, aerr := s.pathTask(r, a)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if !t.Done {
		if err := a.CancelTask(r.Context(), t.ServerID, t.TaskID); err != nil {
			writeError(w, failure.Call(a, t.ServerID, fmt.Sprintf("tasks/cancel %q", t.TaskID), err))
			return
		}
		if nt, err := a.Task(r.Context(), t.ServerID, t.TaskID); err == nil {
			t = nt
		}
	}
	writeJSON(w, http.StatusOK, TaskOf(t, false))
}

// pendingTask returns the API's view of the task of h, which runs on: its
// stored record, or the handle's when it cannot be read.
func pendingTask(r *http.Request, a *agent.Agent, h *mcpclient.TaskHandle) api.Task {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), taskLookupTimeout)
	defer cancel()
	if t, err := a.Task(ctx, h.ServerID, h.TaskID); err == nil {
		return TaskOf(t, false)
	}
	t := api.Task{ID: api.TaskID(h.ServerID, h.TaskID), ServerID: h.ServerID, TaskID: h.TaskID, Tool: h.Tool, Status: api.TaskWorking}
	if !h.CreatedAt.IsZero() {
		sc := h.CreatedAt
		t.ServerCreatedAt = &sc
	}
	return t
}

// taskURL is the URL path of a task of the agent of r.
func taskURL(r *http.Request, id string) string {
	return "/agents/" + url.PathEscape(r.PathValue("class")) + "/" + url.PathEscape(r.PathValue("name")) + "/tasks/" + url.PathEscape(id)
}

// answerToolCall makes the tool call of POST .../tools/call (JSON): the
// result when the call ends within ctx (the request's timeout), or, when
// the call became a task that runs on, 202 with the task and its URL in
// Location.
func (s *Server) answerToolCall(ctx context.Context, w http.ResponseWriter, r *http.Request, a *agent.Agent, id, tool string, args json.RawMessage, limit time.Duration) {
	c := a.StartTaskCall(ctx, id, tool, args, nil)
	select {
	case <-c.Done():
	case <-ctx.Done():
		if h := c.Release(context.Cause(ctx)); h != nil {
			select {
			case <-c.Done(): // it ended meanwhile: its outcome is the answer
			default:
				t := pendingTask(r, a, h)
				w.Header().Set("Location", taskURL(r, t.ID))
				writeJSON(w, http.StatusAccepted, t)
				return
			}
		}
	}
	res, err := c.Result()
	if approvalAccepted(w, err) { // 202: it waits for approval (policy.go)
		return
	}
	if err != nil {
		writeError(w, s.callFailed(ctx, r, a, id, fmt.Sprintf("tools/call %q", tool), limit, err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}
