//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them
package mcpclient

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the wire side of tasks: the messages of both eras, and
// what the Manager learns of them from the handshake and the tool lists,
// which go-sdk's types do not carry (its ServerCapabilities has no tasks,
// its Tool no execution).
//
// go-sdk sends tasks/* as custom methods (mcp.CallCustomMethod). A
// task-augmented tools/call goes as the custom method methodTaskCall, which
// the session's connection renames to tools/call as it writes it
// (sessionConn.Write): go-sdk would decode the answer to a tools/call as a
// CallToolResult and lose the task it carries.

const (
	// methodTaskCall is a task-augmented tools/call on its way through
	// go-sdk; it leaves the client as tools/call.
	methodTaskCall = "agentmcp/tasks/call"

	// tasksExtension is the 2026-07-28 extension that carries tasks.
	tasksExtension = "io.modelcontextprotocol/tasks"
	// metaRelatedTask names, in _meta, the task a message belongs to.
	metaRelatedTask = "io.modelcontextprotocol/related-task"
	// metaClientCapabilities is the 2026-07-28 request _meta key of the
	// client's capabilities.
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// taskMethods are the methods the Manager sends for tasks, through go-sdk.
var taskMethods = []string{methodTaskCall, "tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"}

// registerTaskMethods lets a session's go-sdk client send taskMethods.
func registerTaskMethods(client *mcp.Client) {
	for _, method := range taskMethods {
		// Errors only for a standard method's name, which none is.
		_ = mcp.AddSendingCustomMethod[*taskParams, *rawResult](client, method)
	}
}

// taskParams are the params of every request in taskMethods: those of a
// tools/call (with the legacy task augmentation, or the multi round-trip
// answers of 2026-07-28), or a task id (with the answers of tasks/update).
type taskParams struct {
	mcp.ParamsBase
	Name           string               `json:"name,omitempty"`
	Arguments      any                  `json:"arguments,omitempty"`
	Task           *taskMetadata        `json:"task,omitempty"`
	TaskID         string               `json:"taskId,omitempty"`
	Cursor         string               `json:"cursor,omitempty"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
	RequestState   string               `json:"requestState,omitempty"`
}

// taskMetadata is the task augmentation of a legacy request.
type taskMetadata struct {
	TTL int64 `json:"ttl,omitempty"` // milliseconds
}

// rawResult keeps a result's bytes, for the Manager to decode itself.
type rawResult struct {
	mcp.ResultBase
	Raw json.RawMessage
}

func (r *rawResult) UnmarshalJSON(data []byte) error {
	r.Raw = bytes.Clone(data)
	return nil
}

// wireTask is a task as either era sends it: the legacy Task (ttl,
// pollInterval), or the 2026-07-28 DetailedTask (ttlMs, pollIntervalMs,
// and what its status carries: input requests, the result, the error).
type wireTask struct {
	TaskID         string              `json:"taskId"`
	Status         TaskStatus          `json:"status"`
	StatusMessage  string              `json:"statusMessage,omitempty"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	TTL            *int64              `json:"ttl,omitempty"`
	TTLMs          *int64              `json:"ttlMs,omitempty"`
	PollInterval   *int64              `json:"pollInterval,omitempty"`
	PollIntervalMs *int64              `json:"pollIntervalMs,omitempty"`
	ResultType     string              `json:"resultType,omitempty"`
	InputRequests  mcp.InputRequestMap `json:"inputRequests,omitempty"`
	Result         json.RawMessage     `json:"result,omitempty"`
	Error          *jsonrpc.Error      `json:"error,omitempty"`
}

// task converts w to a Task.
func (w *wireTask) task() *Task {
	t := &Task{ID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage}
	t.CreatedAt, _ = time.Parse(time.RFC3339Nano, w.CreatedAt)
	t.LastUpdatedAt, _ = time.Parse(time.RFC3339Nano, w.LastUpdatedAt)
	if ms := firstOf(w.TTL, w.TTLMs); ms > 0 {
		t.TTL = time.Duration(ms) * time.Millisecond
	}
	if ms := firstOf(w.PollInterval, w.PollIntervalMs); ms > 0 {
		t.PollInterval = time.Duration(ms) * time.Millisecond
	}
	return t
}

func firstOf(a, b *int64) int64 {
	if a != nil {
		return *a
	}
	if b != nil {
		return *b
	}
	return 0
}

// sessionTasks is what a session knows of tasks.
type sessionTasks struct {
	// taps counts the tapped requests awaiting their response, so that
	// reading a response costs one atomic load when there are none.
	taps atomic.Int32

	// mu guards the fields below. It is a leaf lock.
	mu        sync.Mutex
	tapped    map[jsonrpc.ID]string // tapped request id -> method
	toolsCall bool                  // the legacy server takes task-augmented tools/call
	list      bool                  // ... and tasks/list
	cancel    bool                  // ... and tasks/cancel
	support   map[string]TaskSupport

	recv taskReceiver // tasks the server asked the client to run (taskrecv.go)
}

// tap notes that the response to req, an initialize or a tools/list, is
// to be read for what it says of tasks.
func (t *sessionTasks) tap(req *jsonrpc.Request) {
	t.mu.Lock()
	if t.tapped == nil {
		t.tapped = make(map[jsonrpc.ID]string)
	}
	t.tapped[req.ID] = req.Method
	t.mu.Unlock()
	t.taps.Add(1)
}

// tapped reads resp if its request was tapped.
func (t *sessionTasks) read(resp *jsonrpc.Response) {
	t.mu.Lock()
	method, ok := t.tapped[resp.ID]
	if ok {
		delete(t.tapped, resp.ID)
	}
	t.mu.Unlock()
	if !ok {
		return
	}
	t.taps.Add(-1)
	if resp.Error == nil {
		t.note(method, resp.Result)
	}
}

// note reads the result of an initialize or a tools/list.
func (t *sessionTasks) note(method string, result []byte) {
	switch method {
	case "initialize":
		var r struct {
			Capabilities struct {
				Tasks *struct {
					List     json.RawMessage `json:"list"`
					Cancel   json.RawMessage `json:"cancel"`
					Requests struct {
						Tools struct {
							Call json.RawMessage `json:"call"`
						} `json:"tools"`
					} `json:"requests"`
				} `json:"tasks"`
			} `json:"capabilities"`
		}
		if json.Unmarshal(result, &r) != nil || r.Capabilities.Tasks == nil {
			return
		}
		caps := r.Capabilities.Tasks
		t.mu.Lock()
		t.toolsCall = present(caps.Requests.Tools.Call)
		t.list = present(caps.List)
		t.cancel = present(caps.Cancel)
		t.mu.Unlock()
	case "tools/list":
		if !bytes.Contains(result, []byte(`"taskSupport"`)) && !bytes.Contains(result, []byte(`\u`)) {
			// No tool of the list supports tasks (no key is spelt with
			// escapes either): only those noted from an earlier list are
			// to be forgotten; the list is not read again.
			t.mu.Lock()
			empty := len(t.support) == 0
			t.mu.Unlock()
			if empty {
				return
			}
		}
		var r struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution *struct {
					TaskSupport TaskSupport `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		}
		if json.Unmarshal(result, &r) != nil {
			return
		}
		t.mu.Lock()
		for _, tool := range r.Tools {
			if tool.Execution == nil || tool.Execution.TaskSupport == "" || tool.Execution.TaskSupport == TaskForbidden {
				delete(t.support, tool.Name)
				continue
			}
			if t.support == nil {
				t.support = make(map[string]TaskSupport)
			}
			t.support[tool.Name] = tool.Execution.TaskSupport
		}
		t.mu.Unlock()
	}
}

// present reports whether a capability object is present (not absent,
// not null).
func present(v json.RawMessage) bool {
	return len(v) > 0 && !bytes.Equal(v, []byte("null"))
}

// tapResult decodes a direct response (directMiddleware) into into, and
// lets the session's tasks read it too.
type tapResult struct {
	into   any
	method string
	tasks  *sessionTasks
}

func (r *tapResult) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, r.into); err != nil {
		return err
	}
	r.tasks.note(r.method, data)
	return nil
}

// withClientTaskCaps returns the params of a legacy initialize with the
// client's tasks capability added: the requests the client runs as tasks
// when a server asks (elicitation and sampling, as advertised), and
// tasks/list and tasks/cancel for them. Without either, it returns params
// as they are.
func withClientTaskCaps(params json.RawMessage, caps *mcp.ClientCapabilities) json.RawMessage {
	if caps == nil || (caps.Elicitation == nil && caps.Sampling == nil) {
		return params
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	var c map[string]json.RawMessage
	if json.Unmarshal(p["capabilities"], &c) != nil || c == nil {
		c = map[string]json.RawMessage{}
	}
	requests := map[string]any{}
	if caps.Elicitation != nil {
		requests["elicitation"] = map[string]any{"create": struct{}{}}
	}
	if caps.Sampling != nil {
		requests["sampling"] = map[string]any{"createMessage": struct{}{}}
	}
	tasks, err := json.Marshal(map[string]any{"list": struct{}{}, "cancel": struct{}{}, "requests": requests})
	if err != nil {
		return params
	}
	c["tasks"] = tasks
	if p["capabilities"], err = json.Marshal(c); err != nil {
		return params
	}
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}

// modernTaskCaps returns the 2026-07-28 client capabilities of the
// session's requests with the tasks extension declared, for the _meta of
// the requests of the task path (go-sdk adds the session's capabilities,
// without it, to the others).
func modernTaskCaps(caps *mcp.ClientCapabilities) any {
	var cp mcp.ClientCapabilities
	if caps != nil {
		cp = *cloneCaps(caps)
	}
	if cp.Extensions == nil {
		cp.Extensions = map[string]any{}
	}
	cp.Extensions[tasksExtension] = map[string]any{}
	return &initializeCapabilities{ClientCapabilities: cp, Roots: cp.RootsV2}
}
