package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
)

func tasksCommand() command {
	return command{
		name:    "tasks",
		summary: "list an agent's tasks (tool calls that run as MCP tasks), show one, cancel one",
		usage: `Usage:
  agentmcp tasks [flags]
  agentmcp tasks [flags] ID
  agentmcp tasks [flags] cancel ID

A tool call that its MCP server runs as a task (MCP tasks) is stored with
the agent, which polls it until it ends, across restarts of agentmcp serve.
agentmcp call prints a task's ID on stderr when its call becomes one.

Without ID, prints a table of the agent's running tasks, then its most
recent ended ones: ID, tool, status, when it started, and its status
message (or, for one that failed, why). With ID, shows that task and, once
it completed, its result (the whole CallToolResult, as JSON, on stdout; a
result with "isError": true exits with status 1, as call does). cancel ID
asks the task's server to cancel it (tasks/cancel); through a running
agentmcp serve only.

An ID is "SERVER:TASK": the agent's server id and that server's id of the
task (what the list shows). Through a running agentmcp serve these are
GET /agents/{class}/{name}/tasks, GET .../tasks/{id} and
POST .../tasks/{id}/cancel; with --db or --postgres the stored tasks are
read without connecting to any server.

Flags:
  --json           print the list (the API's TaskList) or the task (api.Task,
                   with its result) as JSON

` + targetFlagsUsage,
		run: runTasks,
	}
}

// taskBackend is what tasks needs of a backend.
type taskBackend interface {
	tasks(ctx context.Context) (api.TaskList, error)
	task(ctx context.Context, id string) (api.Task, error)
	cancelTask(ctx context.Context, id string) (api.Task, error)
}

var (
	_ taskBackend = (*remote)(nil)
	_ taskBackend = (*direct)(nil)
)

func runTasks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tasks")
	var tf targetFlags
	tf.register(fs)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	cancelIt := len(positional) > 0 && positional[0] == "cancel"
	if cancelIt {
		positional = positional[1:]
		if len(positional) != 1 {
			return usageErrorf("cancel wants one task ID (SERVER:TASK)")
		}
		if tf.db != "" || tf.postgres != "" {
			return usageErrorf("cancel goes through a running agentmcp serve (--server), which polls the task: not --db or --postgres")
		}
	}
	if len(positional) > 1 {
		return usageErrorf("unexpected argument %s: want at most one task ID", quoteArg(positional[1]))
	}
	if len(positional) == 1 {
		if _, _, ok := api.SplitTaskID(positional[0]); !ok {
			return usageErrorf("%s is not a task ID: want SERVER:TASK, as agentmcp tasks lists them", quoteArg(positional[0]))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.mustExist = true
	tf.access = reading // cancel is refused with --db above
	b, err := tf.open(ctx, stderr, dormant)
	if err != nil {
		return err
	}
	defer b.close()
	tb := b.(taskBackend)
	switch {
	case cancelIt:
		t, err := tb.cancelTask(ctx, positional[0])
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(stdout, t)
		}
		if t.Done {
			fmt.Fprintf(stdout, "task %s had ended: %s\n", t.ID, t.Status)
			return nil
		}
		fmt.Fprintf(stdout, "asked %s to cancel task %s\n", t.ServerID, t.ID)
		return nil
	case len(positional) == 1:
		t, err := tb.task(ctx, positional[0])
		if err != nil {
			return err
		}
		return printTask(stdout, t, asJSON)
	}
	list, err := tb.tasks(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, list)
	}
	return printTasks(stdout, list, time.Now())
}

// printTasks writes the table of tasks.
func printTasks(w io.Writer, list api.TaskList, now time.Time) error {
	if len(list.Tasks) == 0 {
		_, err := fmt.Fprintln(w, "no tasks")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTOOL\tSTATUS\tSTARTED\tMESSAGE")
	for _, t := range list.Tasks {
		msg := t.StatusMessage
		if t.Error != "" && t.Status != api.TaskCompleted {
			msg = t.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", oneLine(t.ID), oneLine(t.Tool), t.Status, ago(now, t.CreatedAt), oneLine(msg))
	}
	if list.More {
		fmt.Fprintln(tw, "(older ended tasks are not shown)")
	}
	return tw.Flush()
}

// ago says how long before now t was, in a few characters.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String() + " ago"
}

// printTask shows one task: its fields on stderr-free lines, then its
// result as JSON, or all of it as JSON with asJSON.
func printTask(w io.Writer, t api.Task, asJSON bool) error {
	if asJSON {
		return writeJSON(w, t)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task %s\n", oneLine(t.ID))
	fmt.Fprintf(&b, "  tool:     %s on server %s\n", oneLine(t.Tool), oneLine(t.ServerID))
	fmt.Fprintf(&b, "  status:   %s\n", t.Status)
	if t.StatusMessage != "" {
		fmt.Fprintf(&b, "  message:  %s\n", oneLine(t.StatusMessage))
	}
	if t.Error != "" {
		fmt.Fprintf(&b, "  error:    %s\n", oneLine(t.Error))
	}
	fmt.Fprintf(&b, "  started:  %s\n", t.CreatedAt.Local().Format(time.RFC3339))
	fmt.Fprintf(&b, "  updated:  %s\n", t.UpdatedAt.Local().Format(time.RFC3339))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(t.Result) == 0 {
		return nil
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(t.Result, &res)
	if err := writeJSON(w, t.Result); err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("task %s: tool %q returned an error (isError); its result is on stdout", t.ID, t.Tool)
	}
	return nil
}

func (r *remote) tasks(ctx context.Context) (api.TaskList, error) {
	tasks, more, err := r.c.Tasks(ctx)
	if err != nil {
		return api.TaskList{}, r.explain(err)
	}
	return api.TaskList{Tasks: tasks, More: more}, nil
}

func (r *remote) task(ctx context.Context, id string) (api.Task, error) {
	t, err := r.c.Task(ctx, id)
	return t, r.explain(err)
}

func (r *remote) cancelTask(ctx context.Context, id string) (api.Task, error) {
	t, err := r.c.CancelTask(ctx, id)
	return t, r.explain(err)
}

func (d *direct) tasks(ctx context.Context) (api.TaskList, error) {
	tasks, err := d.a.Tasks(ctx)
	if err != nil {
		return api.TaskList{}, err
	}
	return agent.TaskListAPI(tasks), nil
}

func (d *direct) task(ctx context.Context, id string) (api.Task, error) {
	serverID, taskID, _ := api.SplitTaskID(id)
	t, err := d.a.Task(ctx, serverID, taskID)
	if errors.Is(err, agent.ErrUnknownTask) {
		return api.Task{}, fmt.Errorf("%s has no task %s", d.where(), id)
	}
	if err != nil {
		return api.Task{}, err
	}
	return agent.TaskAPI(t, true), nil
}

func (d *direct) cancelTask(ctx context.Context, id string) (api.Task, error) {
	return api.Task{}, errors.New("cancel goes through a running agentmcp serve")
}

// task notes that the call became a task (through a running agentmcp
// serve): its id on stderr, a JSON line when stderr is not a terminal,
// so that agentmcp tasks ID fetches it later.
func (t *terminal) task(task api.Task) {
	t.outMu.Lock()
	defer t.outMu.Unlock()
	t.taskID = task.ID
	if t.errTTY == nil {
		b, err := json.Marshal(struct {
			Type string `json:"type"`
			Tool string `json:"tool"`
			ID   string `json:"id"`
		}{"task", t.tool, task.ID})
		if err == nil {
			t.stderr.Write(append(b, '\n'))
		}
		return
	}
	t.clearLineLocked()
	fmt.Fprintf(t.errTTY, "%s: runs as task %s (agentmcp tasks %s shows it)\n", t.tool, oneLine(task.ID), oneLine(task.ID))
}

// taskRunsOn returns err, the end of a call that may have become a task,
// with what to do about the task, which runs on, when it did.
func (t *terminal) taskRunsOn(err error) error {
	var tre *client.TaskRunningError
	if errors.As(err, &tre) {
		return fmt.Errorf("tool %q runs on as task %s, past the call's time: agentmcp tasks %s fetches its result", t.tool, tre.Task.ID, tre.Task.ID)
	}
	t.outMu.Lock()
	id := t.taskID
	t.outMu.Unlock()
	if id == "" {
		return err
	}
	return fmt.Errorf("%w; its task %s runs on: agentmcp tasks %s fetches its result, agentmcp tasks cancel %s cancels it", err, id, id, id)
}
