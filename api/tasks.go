package api

import (
	"encoding/json"
	"strings"
	"time"
)

// CodeUnknownTask is the error code of a task the agent does not have
// (404), or of a task id that names none (see TaskID).
const CodeUnknownTask = "unknown_task"

// TaskID returns the API's id of the task taskID of the MCP server
// serverID: "{serverId}:{taskId}". A server's task ids are its own, so two
// servers may use the same; a server id never holds ":" (it matches
// ^[a-z][a-z0-9_-]*$), so the first ":" of an API id ends the server id
// and the rest, whatever it holds, is the server's task id. In a URL path
// it is one segment, escaped as such (url.PathEscape).
func TaskID(serverID, taskID string) string { return serverID + ":" + taskID }

// SplitTaskID returns the server id and the server's task id of an API
// task id (TaskID), and false when id is not one.
func SplitTaskID(id string) (serverID, taskID string, ok bool) {
	serverID, taskID, ok = strings.Cut(id, ":")
	return serverID, taskID, ok && serverID != "" && taskID != ""
}

// Task statuses, as MCP names them.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Task is a tool call of an agent that runs as an MCP task: one of
// GET /agents/{class}/{name}/tasks, or GET .../tasks/{id}, which adds its
// result. The agent keeps it in its store from the task's creation, across
// restarts, and polls it until it ends.
type Task struct {
	// ID is the API's id of the task (TaskID); ServerID and TaskID are
	// its parts: the MCP server running it and that server's id of it.
	ID       string `json:"id"`
	ServerID string `json:"serverId"`
	TaskID   string `json:"taskId"`
	// Tool is the tool called.
	Tool string `json:"tool"`
	// Status is the task's status as last polled (TaskWorking, ...), and
	// StatusMessage what the server said with it, sanitised.
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// Done is set once the task ended and its outcome is stored: Result,
	// or Error saying why there is none.
	Done bool `json:"done"`
	// Error says why an ended task has no result, sanitised.
	Error string `json:"error,omitempty"`
	// Result is the MCP CallToolResult of a completed task, in
	// GET .../tasks/{id} only.
	Result json.RawMessage `json:"result,omitempty"`
	// CreatedAt is when the agent stored the task, UpdatedAt when it last
	// stored a change of it; ServerCreatedAt is the server's creation time,
	// when it gave one.
	CreatedAt       time.Time  `json:"createdAt"`
	UpdatedAt       time.Time  `json:"updatedAt"`
	ServerCreatedAt *time.Time `json:"serverCreatedAt,omitempty"`
}

// TaskList is the answer of GET /agents/{class}/{name}/tasks: the running
// tasks and the most recent ended ones (at most MaxTasksListed in all),
// most recent first.
type TaskList struct {
	Tasks []Task `json:"tasks"`
	// More is set when ended tasks were left out.
	More bool `json:"more,omitempty"`
}

// MaxTasksListed bounds the tasks GET .../tasks lists; running tasks are
// always listed, ended ones fill what is left.
const MaxTasksListed = 100

// The events of a streamed tool call (see CallEventStart) that concern its
// task, when the call runs as one.
const (
	// CallEventTask says that the server runs the call as a task:
	// {"type":"task","task":Task}. The call goes on; the task's status
	// messages come as progress events.
	CallEventTask = "task"
	// CallEventTaskRunning ends the stream when the call's time ran out
	// while its task runs on, which the agent keeps polling:
	// {"type":"task_running","status":202,"task":Task}. GET .../tasks/{id}
	// fetches it later.
	CallEventTaskRunning = "task_running"
)
