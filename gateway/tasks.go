package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// Tasks through the gateway. A 2026-07-28 client that declares the tasks
// extension (io.modelcontextprotocol/tasks, in its request's
// capabilities) gets the upstream server's task as the gateway's own: a
// tools/call the upstream server runs as a task is answered with
// resultType "task" as soon as the task exists, and the agent polls it
// and stores it (agent.Agent.Tasks), so that the client's tasks/get and
// tasks/cancel are answered from the agent, across the agent's restarts.
// The gateway's id of a task is "{serverId}:{taskId}" (as serve's API),
// and only the user who started it (the request's auth.TokenInfo UserID,
// stored as the task's correlation) can read or cancel it. A task's
// request for input (input_required upstream) goes to the agent's own
// handlers, as for a call no client takes: the client sees it working.
// Every other client (2025-11-25 sessions, 2026-07-28 clients without the
// extension) gets a plain call, held until the task's result.

// tasksExtension is the 2026-07-28 extension that carries tasks.
const tasksExtension = "io.modelcontextprotocol/tasks"

// taskPollInterval is the poll interval suggested to clients for a task
// whose upstream server suggested none.
const taskPollInterval = time.Second

// declaresTasks reports whether a 2026-07-28 request's capabilities
// declare the tasks extension.
func declaresTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

// taskOwner is the correlation stored with the tasks a client starts
// through the gateway: its user, hashed (an empty user without
// authentication).
func taskOwner(ctx context.Context) string {
	sum := sha256.Sum256([]byte(subjectOf(ctx)))
	return "mcp:" + hex.EncodeToString(sum[:8])
}

// taskID is the gateway's id of a task, and splitTaskID its inverse.
func taskID(serverID, id string) string { return serverID + ":" + id }

func splitTaskID(id string) (serverID, taskID string, ok bool) {
	for i := 0; i < len(id); i++ {
		if id[i] == ':' {
			return id[:i], id[i+1:], i > 0 && i < len(id)-1
		}
	}
	return "", "", false
}

// offerTasks adds the tasks extension to the capabilities of a
// server/discover result while one of the agent's servers offers tasks:
// a client that declares it sends every call with the extension, which
// costs a plain call a little, so that none pays it for nothing.
func (g *Gateway) offerTasks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		dr, ok := res.(*mcp.DiscoverResult)
		if err != nil || !ok || dr.Capabilities == nil || !(g.upstreamTasks() || g.mayAsk()) {
			return res, err
		}
		// A copy: go-sdk may keep the result, and its capabilities are
		// the server's.
		caps := *dr.Capabilities
		caps.Extensions = maps.Clone(caps.Extensions)
		if caps.Extensions == nil {
			caps.Extensions = map[string]any{}
		}
		caps.Extensions[tasksExtension] = map[string]any{}
		cp := *dr
		cp.Capabilities = &caps
		return &cp, nil
	}
}

// upstreamTasks reports whether one of the agent's servers offers tasks.
func (g *Gateway) upstreamTasks() bool {
	for id := range g.a.MCPServers().Servers {
		if g.a.OffersTasks(id) {
			return true
		}
	}
	return false
}

// serveStatelessTasks answers a 2026-07-28 POST about tasks: a tools/call
// of a client that declares the tasks extension, tasks/get, tasks/cancel
// or tasks/update; it reports whether it did. body is the request's body.
func (g *Gateway) serveStatelessTasks(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if r.Header.Get(protocolVersionHeader) != firstStateless || !g.httpChecked(r) || r.Header.Get(sessionIDHeader) != "" {
		return false
	}
	m, ok := decodeMessage(body)
	if !ok || m.id == nil || r.Header.Get("Mcp-Method") != m.method {
		return false
	}
	switch m.method {
	case "tools/call":
		p, meta, ok := callParams(m)
		if !ok || p.RequestState != "" || r.Header.Get("Mcp-Name") != p.Name {
			return false
		}
		caps := new(mcp.ClientCapabilities)
		if v, ok := meta[mcp.MetaKeyClientCapabilities]; !ok || json.Unmarshal(v, caps) != nil || !declaresTasks(caps) {
			return false
		}
		t, ok := g.fastTool(p.Name)
		if !ok || !(g.a.OffersTasks(t.serverID) || g.asksAbout(t.serverID, t.name)) { // approvals.go
			return false // a plain call: the fast path's
		}
		g.serveTaskCall(w, r, m.id, p, t.serverID, t.name)
		return true
	case "tasks/get", "tasks/cancel", "tasks/update":
	default:
		return false
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if raw, ok := m.params["taskId"]; !ok || json.Unmarshal(raw, &p.TaskID) != nil {
		writeTaskResponse(w, m.id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is required"})
		return true
	}
	if serverID, tid, ok := splitTaskID(p.TaskID); ok && strings.HasPrefix(tid, approvalIDPrefix) {
		g.serveApprovalTask(w, r, m.id, m.method, p.TaskID, serverID, tid) // approvals.go
		return true
	}
	t, jerr := g.ownTask(r, p.TaskID)
	if jerr != nil {
		writeTaskResponse(w, m.id, nil, jerr)
		return true
	}
	switch m.method {
	case "tasks/update":
		writeTaskResponse(w, m.id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task " + p.TaskID + " waits for no input from the client"})
	case "tasks/cancel":
		if t.Done {
			writeTaskResponse(w, m.id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task " + p.TaskID + " is " + t.Status})
			return true
		}
		if err := g.a.CancelTask(r.Context(), t.ServerID, t.TaskID); err != nil {
			writeTaskResponse(w, m.id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("cancelling task %s: %v", p.TaskID, err)})
			return true
		}
		writeTaskResponse(w, m.id, map[string]any{}, nil)
	default:
		writeTaskResponse(w, m.id, g.wireTask(t, true), nil)
	}
	return true
}

// ownTask returns the stored task id names, when the request's user
// started it through the gateway and its tool is still exposed.
func (g *Gateway) ownTask(r *http.Request, id string) (store.Task, *jsonrpc.Error) {
	unknown := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task " + id}
	serverID, tid, ok := splitTaskID(id)
	if !ok {
		return store.Task{}, unknown
	}
	t, err := g.a.Task(r.Context(), serverID, tid)
	switch {
	case errors.Is(err, agent.ErrUnknownTask):
		return store.Task{}, unknown
	case err != nil:
		return store.Task{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "reading task " + id + ": " + err.Error()}
	case t.Correlation != taskOwner(r.Context()) || !g.exposed(t.ServerID, t.Tool):
		return store.Task{}, unknown
	}
	return t, nil
}

// serveTaskCall makes a tools/call of a client that declares tasks: the
// result when the call ends before the upstream server makes it a task,
// else the task (resultType "task"), which the agent keeps polling.
func (g *Gateway) serveTaskCall(w http.ResponseWriter, r *http.Request, id any, p *mcp.CallToolParamsRaw, serverID, name string) {
	if !g.exposed(serverID, name) {
		res, err := g.statelessResult(toolError(fmt.Sprintf("tool %q of MCP server %q is not exposed", name, serverID)))
		writeResponse(w, id, res, err)
		return
	}
	g.fastCalls.Add(1)
	var args any
	if raw := p.Arguments; len(raw) > 0 && string(raw) != "null" {
		args = raw
	}
	ctx, cancel := context.WithCancel(agent.WithTaskCorrelation(r.Context(), taskOwner(r.Context())))
	defer cancel()
	defer context.AfterFunc(g.ctx, cancel)()
	// A call the policy asks about is the approval's task (approvals.go).
	asked := make(chan agent.Approval, 1)
	ctx = agent.WithApprovalAsker(agent.WithCaller(ctx, policy.Gateway), func(_ context.Context, ap agent.Approval) (agent.ApprovalAnswer, bool) {
		asked <- ap
		return agent.ApprovalAnswer{}, false
	})
	c := g.a.StartTaskCall(ctx, serverID, name, args, nil)
	select {
	case <-c.Done():
	case <-c.Started():
	case ap := <-asked:
		c.Release(context.Canceled) // the approval stays pending: its task follows it
		<-c.Done()
		approvalTask(w, id, ap)
		return
	case <-ctx.Done():
	}
	if h := c.Release(context.Canceled); h != nil {
		select {
		case <-c.Done(): // ended meanwhile: the result is the answer
		default:
			t := store.Task{ServerID: h.ServerID, TaskID: h.TaskID, Tool: h.Tool, Status: "working",
				TTLMS: h.TTL.Milliseconds(), PollIntervalMS: h.PollInterval.Milliseconds(), ServerCreatedAt: h.CreatedAt}
			if stored, err := g.a.Task(context.WithoutCancel(ctx), h.ServerID, h.TaskID); err == nil {
				t = stored
			}
			wt := g.wireTask(t, false)
			wt["resultType"] = "task"
			writeTaskResponse(w, id, wt, nil)
			return
		}
	}
	res, err := c.Result()
	switch {
	case err == nil:
		res = ownResult(res)
	case ctx.Err() != nil:
		writeResponse(w, id, nil, ctx.Err())
		return
	default:
		res = toolError(fmt.Sprintf("calling tool %q on MCP server %q failed: %v", name, serverID, err))
	}
	res, err = g.statelessResult(res)
	writeResponse(w, id, res, err)
}

// wireTask is a stored task as the tasks extension sends it; detailed
// adds the result of a completed task and the error of a failed one.
func (g *Gateway) wireTask(t store.Task, detailed bool) map[string]any {
	status := t.Status
	if status == "input_required" {
		status = "working" // the agent's handlers answer it, not the client
	}
	created := t.ServerCreatedAt
	if created.IsZero() {
		created = t.CreatedAt
	}
	updated := t.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	poll := time.Duration(t.PollIntervalMS) * time.Millisecond
	if poll <= 0 {
		poll = taskPollInterval
	}
	w := map[string]any{
		"taskId": taskID(t.ServerID, t.TaskID), "status": status,
		"createdAt": created.UTC().Format(time.RFC3339Nano), "lastUpdatedAt": updated.UTC().Format(time.RFC3339Nano),
		"pollIntervalMs": poll.Milliseconds(),
	}
	if t.StatusMessage != "" {
		w["statusMessage"] = t.StatusMessage
	}
	if t.TTLMS > 0 {
		w["ttlMs"] = t.TTLMS
	}
	if !detailed || !t.Done {
		return w
	}
	switch {
	case t.Status == "completed" && len(t.Result) > 0:
		res := &mcp.CallToolResult{}
		if err := res.UnmarshalJSON(t.Result); err != nil {
			w["status"], w["error"] = "failed", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the stored result cannot be read"}
			return w
		}
		w["result"] = ownResult(res)
	case t.Status == "failed":
		w["error"] = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: t.Error}
	}
	return w
}

// writeTaskResponse writes a JSON-RPC response of result or jerr, as
// writeResponse does.
func writeTaskResponse(w http.ResponseWriter, id any, result any, jerr *jsonrpc.Error) {
	msg := wireResponse{VersionTag: "2.0", ID: id, Error: jerr}
	if jerr == nil {
		raw, err := marshal(result)
		if err != nil {
			msg.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encoding the result: " + err.Error()}
		} else {
			msg.Result = raw
		}
	}
	data, err := marshal(&msg)
	if err != nil {
		http.Error(w, "encoding the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "application/json")
	w.Write(data)
}
