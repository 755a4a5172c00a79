package mcptest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// TaskServer is a scripted MCP server of tasks over streamable HTTP (JSON
// responses), in one era: 2025-11-25 (tasks in the core: params.task,
// tasks/get, tasks/result, tasks/list, tasks/cancel) or 2026-07-28 (the
// io.modelcontextprotocol/tasks extension: resultType "task", tasks/get,
// tasks/update, tasks/cancel). go-sdk's server has no tasks, so this one
// speaks JSON-RPC itself. Serve it with ServeHandler; its tasks outlive a
// restart of the HTTPServer.
//
// Its tools:
//   - "work" (taskSupport required): a task that runs until the test
//     finishes it (Finish) with a text result; SetStatus changes its status
//     message.
//   - "ask" (2026-07-28 only): a task that asks for input at once (an
//     elicitation: a form with a "name"), and completes with "hello NAME"
//     once tasks/update answers it.
//   - "plain": no task, "plain result" at once.
//   - "count" (taskSupport required): "work" with an output schema (an
//     object whose "n" is a non-negative integer, required); FinishWith
//     finishes it with structured content.
//   - "count-now": no task, the output schema of "count"; it answers at
//     once with structured content that breaks it ({"n": "three"}).
//
// In 2026-07-28 it serves subscriptions/listen with a filter of taskIds:
// notifications/tasks at every change of those tasks, on an SSE stream
// held until the client closes it.
//
// It records every method it is sent (Methods) and the tasks cancelled
// (Cancelled). Expire forgets a task, as a server does when its TTL ends.
type TaskServer struct {
	modern bool

	// mu guards the fields below.
	mu        sync.Mutex
	seq       int
	tasks     map[string]*serverTask
	methods   []string
	cancelled []string
	listening int           // listen streams open (acknowledged, not yet closed)
	changed   chan struct{} // closed and replaced at every change of a task
}

type serverTask struct {
	id, tool string
	status   string
	message  string
	created  time.Time
	updated  time.Time
	ttlMs    int64
	result   string // the text of the result, when completed
	// structured is the result's structuredContent, if any.
	structured any
	asking     bool // "ask" waits for its answer
}

// NewTaskServer returns a TaskServer speaking 2026-07-28 (modern) or
// 2025-11-25.
func NewTaskServer(modern bool) *TaskServer {
	return &TaskServer{modern: modern, tasks: map[string]*serverTask{}, changed: make(chan struct{})}
}

// Methods returns the methods received, in order.
func (s *TaskServer) Methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.methods)
}

// Cancelled returns the ids of the tasks cancelled with tasks/cancel.
func (s *TaskServer) Cancelled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cancelled)
}

// Listening returns how many listen streams are open: acknowledged, and
// not closed by their client yet.
func (s *TaskServer) Listening() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listening
}

// Tasks returns the ids of the tasks the server knows.
func (s *TaskServer) Tasks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Changed returns a channel closed at the next change: a method received
// or a task changed.
func (s *TaskServer) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *TaskServer) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Finish completes a "work" task with a text result.
func (s *TaskServer) Finish(id, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[id]; t != nil {
		t.status, t.result, t.updated = "completed", text, time.Now()
		s.changedLocked()
	}
}

// FinishWith completes a task with a text result and structured content.
func (s *TaskServer) FinishWith(id, text string, structured any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[id]; t != nil {
		t.status, t.result, t.structured, t.updated = "completed", text, structured, time.Now()
		s.changedLocked()
	}
}

// SetStatus sets a task's status message.
func (s *TaskServer) SetStatus(id, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[id]; t != nil {
		t.message, t.updated = message, time.Now()
		s.changedLocked()
	}
}

// Expire forgets a task: later requests about it fail with -32602.
func (s *TaskServer) Expire(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tasks, id)
	s.changedLocked()
}

type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// ServeHTTP serves one JSON-RPC message per POST, answered as JSON.
func (s *TaskServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req rpcRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.methods = append(s.methods, req.Method)
	s.changedLocked()
	s.mu.Unlock()
	if len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted) // a notification
		return
	}
	if s.modern && req.Method != "server/discover" {
		if got := r.Header.Get("Mcp-Method"); got != req.Method {
			s.reply(w, req.ID, nil, &rpcError{Code: -32020, Message: "Mcp-Method header mismatch"})
			return
		}
	}
	if s.modern && req.Method == "subscriptions/listen" {
		s.listen(w, r, &req)
		return
	}
	result, rerr := s.handle(r, &req)
	s.reply(w, req.ID, result, rerr)
}

// listen serves a 2026-07-28 subscriptions/listen for tasks: an SSE
// stream that acknowledges the filter's taskIds the server knows, then
// sends notifications/tasks (the DetailedTask) at every change of one of
// them, until the client goes away.
func (s *TaskServer) listen(w http.ResponseWriter, r *http.Request, req *rpcRequest) {
	var p struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	_ = json.Unmarshal(req.Params, &p)
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	meta := map[string]any{"io.modelcontextprotocol/subscriptionId": req.ID}
	send := func(method string, params map[string]any) bool {
		params["_meta"] = meta
		data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
		if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", data); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	s.mu.Lock()
	var ids []string
	seen := map[string]string{}
	for _, id := range p.Notifications.TaskIDs {
		if t := s.tasks[id]; t != nil {
			ids = append(ids, id)
			seen[id] = t.status + "\x00" + t.message
		}
	}
	s.mu.Unlock()
	if !send("notifications/subscriptions/acknowledged", map[string]any{"notifications": map[string]any{"taskIds": ids}}) {
		return
	}
	s.mu.Lock()
	s.listening++
	s.changedLocked()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.listening--
		s.changedLocked()
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		ch := s.changed
		var out []map[string]any
		for _, id := range ids {
			t := s.tasks[id]
			if t == nil {
				continue
			}
			if now := t.status + "\x00" + t.message; now != seen[id] {
				seen[id] = now
				out = append(out, s.wireLocked(t, true))
			}
		}
		s.mu.Unlock()
		for _, n := range out {
			if !send("notifications/tasks", n) {
				return
			}
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		}
	}
}

func (s *TaskServer) reply(w http.ResponseWriter, id json.RawMessage, result any, rerr *rpcError) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		if m, ok := result.(map[string]any); ok && s.modern {
			if _, ok := m["resultType"]; !ok {
				m["resultType"] = "complete"
			}
		}
		msg["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(msg)
}

func (s *TaskServer) tools() []map[string]any {
	schema := map[string]any{"type": "object"}
	work := map[string]any{"name": "work", "inputSchema": schema}
	ask := map[string]any{"name": "ask", "inputSchema": schema}
	plain := map[string]any{"name": "plain", "inputSchema": schema}
	out := map[string]any{"type": "object", "required": []string{"n"},
		"properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 0}}}
	count := map[string]any{"name": "count", "inputSchema": schema, "outputSchema": out}
	now := map[string]any{"name": "count-now", "inputSchema": schema, "outputSchema": out}
	if !s.modern {
		work["execution"] = map[string]any{"taskSupport": "required"}
		count["execution"] = map[string]any{"taskSupport": "required"}
		return []map[string]any{work, plain, count, now}
	}
	return []map[string]any{work, ask, plain, count, now}
}

func (s *TaskServer) handle(r *http.Request, req *rpcRequest) (any, *rpcError) {
	var p struct {
		Meta      map[string]json.RawMessage `json:"_meta"`
		Name      string                     `json:"name"`
		TaskID    string                     `json:"taskId"`
		Task      *struct{ TTL int64 }       `json:"task"`
		Responses map[string]struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		} `json:"inputResponses"`
	}
	_ = json.Unmarshal(req.Params, &p)
	caps := map[string]any{"tools": map[string]any{}}
	switch req.Method {
	case "initialize":
		if s.modern {
			return nil, &rpcError{Code: -32022, Message: "unsupported protocol version"}
		}
		caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
			"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
		return map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
			"serverInfo": map[string]any{"name": "tasks", "version": "1.0.0"}}, nil
	case "server/discover":
		if !s.modern {
			return nil, &rpcError{Code: -32601, Message: "method not found"}
		}
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
		return map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": caps,
			"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "tasks", "version": "1.0.0"}},
			"ttlMs": 0, "cacheScope": "private"}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": s.tools(), "ttlMs": 0, "cacheScope": "private"}, nil
	case "tools/call":
		return s.call(p.Name, p.Task != nil, p.Meta)
	}
	// tasks/*
	if s.modern && r.Header.Get("Mcp-Name") != p.TaskID {
		return nil, &rpcError{Code: -32020, Message: "Mcp-Name header mismatch"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[p.TaskID]
	if req.Method == "tasks/list" && !s.modern {
		var list []any
		for _, id := range slices.Sorted(maps.Keys(s.tasks)) {
			list = append(list, s.wireLocked(s.tasks[id], false))
		}
		return map[string]any{"tasks": list}, nil
	}
	if t == nil {
		return nil, &rpcError{Code: -32602, Message: "unknown task"}
	}
	switch req.Method {
	case "tasks/get":
		return s.wireLocked(t, s.modern), nil
	case "tasks/cancel":
		if terminal(t.status) {
			return nil, &rpcError{Code: -32602, Message: "task is " + t.status}
		}
		t.status, t.updated = "cancelled", time.Now()
		s.cancelled = append(s.cancelled, t.id)
		s.changedLocked()
		if s.modern {
			return map[string]any{}, nil
		}
		return s.wireLocked(t, false), nil
	case "tasks/update":
		if !s.modern {
			break
		}
		a, ok := p.Responses["name"]
		if !t.asking || !ok || a.Action != "accept" {
			return nil, &rpcError{Code: -32602, Message: "no such input request"}
		}
		t.asking = false
		t.status, t.result, t.updated = "completed", fmt.Sprintf("hello %v", a.Content["name"]), time.Now()
		s.changedLocked()
		return map[string]any{}, nil
	case "tasks/result":
		if s.modern {
			break
		}
		for !terminal(t.status) {
			ch := s.changed
			s.mu.Unlock()
			select {
			case <-ch:
			case <-r.Context().Done():
				s.mu.Lock()
				return nil, &rpcError{Code: -32603, Message: "gone"}
			}
			s.mu.Lock()
		}
		if t.status != "completed" {
			return nil, &rpcError{Code: -32603, Message: "task " + t.status}
		}
		r := textResult(t.result, t.id)
		if t.structured != nil {
			r["structuredContent"] = t.structured
		}
		return r, nil
	}
	return nil, &rpcError{Code: -32601, Message: "method not found"}
}

func (s *TaskServer) call(tool string, legacyTask bool, meta map[string]json.RawMessage) (any, *rpcError) {
	asked := legacyTask
	if s.modern {
		var caps struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		}
		_ = json.Unmarshal(meta["io.modelcontextprotocol/clientCapabilities"], &caps)
		_, asked = caps.Extensions["io.modelcontextprotocol/tasks"]
	}
	switch {
	case tool == "plain":
		return textResult("plain result", ""), nil
	case tool == "count-now":
		r := textResult("three", "")
		r["structuredContent"] = map[string]any{"n": "three"}
		return r, nil
	case tool != "work" && tool != "count" && (tool != "ask" || !s.modern):
		return nil, &rpcError{Code: -32602, Message: "unknown tool"}
	case !asked:
		return nil, &rpcError{Code: -32601, Message: "tool " + tool + " requires task augmentation"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	now := time.Now()
	t := &serverTask{id: "task-" + strconv.Itoa(s.seq), tool: tool, status: "working", created: now, updated: now, ttlMs: 60000}
	if tool == "ask" {
		t.status, t.asking = "input_required", true
	}
	s.tasks[t.id] = t
	s.changedLocked()
	if s.modern {
		w := s.wireLocked(t, false)
		w["resultType"] = "task"
		return w, nil
	}
	return map[string]any{"task": s.wireLocked(t, false)}, nil
}

// wireLocked is t as tasks/get returns it; detailed adds the 2026-07-28
// DetailedTask's fields.
func (s *TaskServer) wireLocked(t *serverTask, detailed bool) map[string]any {
	w := map[string]any{
		"taskId": t.id, "status": t.status,
		"createdAt": t.created.UTC().Format(time.RFC3339Nano), "lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
	}
	if t.message != "" {
		w["statusMessage"] = t.message
	}
	if s.modern {
		w["ttlMs"], w["pollIntervalMs"] = t.ttlMs, 10
	} else {
		w["ttl"], w["pollInterval"] = t.ttlMs, 10
	}
	if !detailed {
		return w
	}
	switch {
	case t.status == "completed":
		r := textResult(t.result, "")
		if t.structured != nil {
			r["structuredContent"] = t.structured
		}
		w["result"] = r
	case t.asking:
		w["inputRequests"] = map[string]any{"name": map[string]any{
			"method": "elicitation/create",
			"params": map[string]any{"mode": "form", "message": "What is your name?", "requestedSchema": map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"},
			}},
		}}
	}
	return w
}

func textResult(text, taskID string) map[string]any {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if taskID != "" {
		r["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": taskID}}
	}
	return r
}

func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}
