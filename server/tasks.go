package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server/internal/failure"
	"github.com/agentmcp/agentmcp/store"
)

// The routes of an agent's tasks: tool calls that run as MCP tasks, which
// the agent stores (agent.Agent.Tasks) and polls until they end, across
// restarts. A task's API id is api.TaskID: "{serverId}:{taskId}"; its
// wire form is agent.TaskAPI's.

// taskLookupTimeout bounds reading a task's record once its request is
// over (the 202 of a call whose time ran out).
const taskLookupTimeout = 5 * time.Second

// listTasks is GET /agents/{class}/{name}/tasks: the running tasks and
// the most recent ended ones, most recent first (agent.TaskListAPI).
func (s *Server) listTasks(r *http.Request, a *agent.Agent, _ *noBody) (api.TaskList, error) {
	tasks, err := a.Tasks(r.Context())
	return agent.TaskListAPI(tasks), storeError(err)
}

// storeError is err, as the store's API error where it is one (failure.Store).
func storeError(err error) error {
	if aerr := failure.Store(err); aerr != nil {
		return aerr
	}
	return err
}

// pathTask returns the stored task the path's {id} names.
func pathTask(r *http.Request, a *agent.Agent) (store.Task, error) {
	id := r.PathValue("id")
	serverID, taskID, ok := api.SplitTaskID(id)
	if !ok {
		return store.Task{}, apiErrorf(http.StatusNotFound, api.CodeUnknownTask, "%q is not a task id: want {serverId}:{taskId}, as GET .../tasks lists them", id)
	}
	t, err := a.Task(r.Context(), serverID, taskID)
	if errors.Is(err, agent.ErrUnknownTask) {
		aerr := apiErrorf(http.StatusNotFound, api.CodeUnknownTask, "agent %s has no task %q", a.Namespace(), id)
		aerr.ServerID = serverID
		return t, aerr
	}
	return t, storeError(err)
}

// getTask is GET /agents/{class}/{name}/tasks/{id}: one task, with its
// result once it completed.
func (s *Server) getTask(r *http.Request, a *agent.Agent, _ *noBody) (api.Task, error) {
	t, err := pathTask(r, a)
	return agent.TaskAPI(t, true), err
}

// cancelTask is POST /agents/{class}/{name}/tasks/{id}/cancel: the agent
// asks the task's server to cancel it (tasks/cancel) and answers with the
// task as stored; its status becomes cancelled once the agent's wait for
// it hears so from the server. Cancelling an ended task changes nothing.
func (s *Server) cancelTask(r *http.Request, a *agent.Agent, _ *noBody) (api.Task, error) {
	t, err := pathTask(r, a)
	if err == nil && !t.Done {
		if err := a.CancelTask(r.Context(), t.ServerID, t.TaskID); err != nil {
			return api.Task{}, failure.Call(a, t.ServerID, fmt.Sprintf("tasks/cancel %q", t.TaskID), err)
		}
		if nt, err := a.Task(r.Context(), t.ServerID, t.TaskID); err == nil {
			t = nt
		}
	}
	return agent.TaskAPI(t, false), err
}

// pendingTask returns the API's view of the task of h, which runs on: its
// stored record, or the handle's when it cannot be read.
func pendingTask(r *http.Request, a *agent.Agent, h *mcpclient.TaskHandle) api.Task {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), taskLookupTimeout)
	defer cancel()
	if t, err := a.Task(ctx, h.ServerID, h.TaskID); err == nil {
		return agent.TaskAPI(t, false)
	}
	return agent.HandleTaskAPI(h)
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
