package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/agentmcp/agentmcp/api"
)

// TaskRunningError is the error of CallTool and CallToolWatched when the
// call became an MCP task that still runs when the call's time ran out
// (202 Accepted): the agent keeps polling it, and Task (by Task.ID)
// fetches it later, with its result once it completed.
type TaskRunningError struct {
	Task api.Task
}

func (e *TaskRunningError) Error() string {
	return fmt.Sprintf("tools/call %q runs on as task %s (%s)", e.Task.Tool, e.Task.ID, e.Task.Status)
}

// Tasks returns the agent's running tasks and its most recent ended ones,
// most recent first (GET .../tasks); more is set when ended ones were left
// out.
func (c *Client) Tasks(ctx context.Context) (tasks []api.Task, more bool, err error) {
	var list api.TaskList
	if err := c.do(ctx, http.MethodGet, "/tasks", nil, &list); err != nil {
		return nil, false, err
	}
	return list.Tasks, list.More, nil
}

// Task returns one task (its id is api.TaskID's), with its result once it
// completed. An unknown task is an *api.APIError with Code
// api.CodeUnknownTask.
func (c *Client) Task(ctx context.Context, id string) (api.Task, error) {
	var t api.Task
	err := c.do(ctx, http.MethodGet, "/tasks/"+url.PathEscape(id), nil, &t)
	return t, err
}

// CancelTask asks the task's MCP server to cancel it (tasks/cancel) and
// returns the task as the agent has it then; its status becomes cancelled
// once the agent hears so from the server.
func (c *Client) CancelTask(ctx context.Context, id string) (api.Task, error) {
	var t api.Task
	err := c.do(ctx, http.MethodPost, "/tasks/"+url.PathEscape(id)+"/cancel", nil, &t)
	return t, err
}
