package store

import (
	"context"
	"encoding/json"
	"time"
)

// Task is a tool call of an agent that runs as an MCP task on one of its
// servers, as stored: its handle (what it takes to poll it again after a
// restart), the state last polled, and its outcome once it ended. It is
// stored before its first poll, so that a process that dies while the
// task runs finds it on restart.
type Task struct {
	// Namespace is the agent, ServerID the server that runs the task and
	// TaskID the server's id of it: together, the row's key.
	Namespace string
	ServerID  string
	TaskID    string
	// Tool is the tool called; Protocol the protocol version of the
	// session that created the task.
	Tool     string
	Protocol string
	// ArgumentsHash is the hex SHA-256 of the call's arguments.
	ArgumentsHash string
	// Correlation is the caller's own reference for the call, "" for none.
	Correlation string
	// Status and StatusMessage are the task's, as last polled.
	Status        string
	StatusMessage string
	// TTLMS and PollIntervalMS are the server's, from the task's creation.
	TTLMS          int64
	PollIntervalMS int64
	// ServerCreatedAt is when the server created the task.
	ServerCreatedAt time.Time
	// Result is the tool's result (an MCP CallToolResult, as JSON) once the
	// task completed, nil before.
	Result json.RawMessage
	// Error says why the task ended without a result ("" otherwise).
	Error string
	// Done marks a task that ended (with Result or Error): one not to poll
	// again.
	Done bool
	// CreatedAt and UpdatedAt are set by the store, as for Server.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TaskStore is implemented by stores that keep agents' tasks
// (store/sqlite and store/postgres do). The task's fields other than its
// key are stored as one JSON document, readable (a task's result is the
// tool's output, which the agent shows to whoever may call the tool).
type TaskStore interface {
	// PutTask inserts t, or replaces the row of the same (Namespace,
	// ServerID, TaskID), keeping its CreatedAt.
	PutTask(ctx context.Context, t Task) error
	// ListTasks returns the tasks of namespace ns in the order they were
	// first stored; an empty slice when there are none.
	ListTasks(ctx context.Context, ns string) ([]Task, error)
	// DeleteTask deletes one task; an unknown one is not an error.
	DeleteTask(ctx context.Context, ns, serverID, taskID string) error
}

// RunningTaskLister is implemented by task stores that list the agents
// with tasks that have not ended (store/sqlite and store/postgres do): the
// agents a host wakes when the program starts, to resume polling them.
type RunningTaskLister interface {
	// ListRunningTaskAgents returns the namespaces with at least one task
	// not Done, sorted; an empty slice when there are none.
	ListRunningTaskAgents(ctx context.Context) ([]string, error)
}
