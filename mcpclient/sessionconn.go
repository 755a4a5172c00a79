package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentmcp/agentmcp/mcpclient/internal/inbound"
	"github.com/agentmcp/agentmcp/mcpclient/internal/inflight"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionTransport wraps a session's transport so that the Manager sees
// every message of the session as it crosses the connection (sessionConn).
//
// It routes notifications/progress to the callbacks of the calls in
// flight, as they are read. go-sdk hands notifications to a queue
// that may run after the response has been delivered; reading them here,
// in wire order, means a call's progress callbacks have all run when the
// call returns.
//
// It admits the server's requests through the request gate (package
// inbound), and notes the multi round-trip retries of calls (Write).
//
// It also records the connection on the session, so that closing a session
// can close its transport first: go-sdk's ClientSession.Close waits for
// calls in flight, which a hostile or hung server may never answer; and
// the transport's own connection, for its optional interfaces
// (transport.SessionKeeper, transport.VersionSetter).
type sessionTransport struct {
	mcp.Transport
	c *server
	s *session
}

func (t sessionTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc := &sessionConn{Connection: conn, c: t.c, s: t.s, gate: inbound.NewGate(t.c.m.limits(), t.c.m.logger, t.c.ID), idBase: t.s.idBase}
	t.s.conn, t.s.raw = pc, conn
	return pc, nil
}

type sessionConn struct {
	mcp.Connection
	c      *server
	s      *session
	gate   *inbound.Gate // admits the server's requests
	idBase int64         // the session's idBase: go-sdk's integer ids are shifted by it on the wire
}

func (p *sessionConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := p.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if res, ok := msg.(*jsonrpc.Response); ok && p.idBase != 0 {
			if n, ok := res.ID.Raw().(int64); ok && n > p.idBase {
				res.ID, _ = jsonrpc.MakeID(float64(n - p.idBase))
			}
		}
		req, ok := msg.(*jsonrpc.Request)
		if ok && req.IsCall() {
			refuse, drop := p.gate.Admit(req)
			switch {
			case drop:
				continue
			case refuse != nil:
				if err := p.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: refuse}); err != nil {
					p.c.m.logger.Debug("cannot refuse a server request", "server", p.c.ID(), "error", err)
				}
				continue
			case p.receive(req): // tasks (taskrecv.go)
				continue
			}
			return msg, nil
		}
		if !ok {
			if resp, isResp := msg.(*jsonrpc.Response); isResp && p.s.tasks.taps.Load() != 0 {
				p.s.tasks.read(resp) // an initialize or a tools/list (taskwire.go)
			}
			return msg, nil
		}
		switch {
		case req.Method == "notifications/tasks/status", req.Method == "notifications/tasks": // tasklisten.go
			p.c.routeTaskStatus(req.Params)
			continue
		case req.Method == "notifications/subscriptions/acknowledged" && taskAck(req.Params):
			continue
		}
		if req.Method != "notifications/progress" {
			return msg, nil
		}
		var params mcp.ProgressNotificationParams
		if json.Unmarshal(req.Params, &params) != nil {
			return msg, nil // let go-sdk report it
		}
		p.c.routeProgress(&params)
	}
}

// routeProgress calls the progress callback of the call params belong to,
// if it is still in flight.
func (c *server) routeProgress(params *mcp.ProgressNotificationParams) {
	if fn, ok := c.progress.Load(fmt.Sprint(params.ProgressToken)); ok {
		fn.(func(*mcp.ProgressNotificationParams))(params)
	}
}

// Write notes the multi round-trip retries of a call: requests that carry
// inputResponses or a requestState. It records the JSON-RPC id of a call's
// request on its span.
//
// It also tells the request gate (package inbound) what the client
// writes: the handshake, and the answers to the server's requests.
func (p *sessionConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		switch req.Method {
		case methodTaskCall:
			// A task-augmented tools/call (taskwire.go).
			cp := *req
			cp.Method = "tools/call"
			msg = &cp
		case "initialize", "tools/list":
			req = p.withTaskCaps(req)
			p.s.tasks.tap(req)
			msg = req
		}
	}
	if p.idBase != 0 {
		msg = p.shift(msg)
	}
	if cl, ok := inflight.FromContext(ctx); ok {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			p.c.m.tel.NoteRequestID(ctx, req)
			cl.NoteRound(req.Params)
		}
	}
	p.gate.Written(msg)
	if res, ok := msg.(*jsonrpc.Response); ok {
		// The request's handler is done: its slot is free before the
		// answer goes out, so that a server that has read the answer
		// never finds the slot still taken.
		p.gate.Answered(res.ID)
	}
	return p.Connection.Write(ctx, msg)
}

// shift moves the integer id of a request of go-sdk's by idBase, as the
// server is to see it (Read moves its answer's back), and the requestId
// of a cancellation. A new message is returned; msg is left as it was.
func (p *sessionConn) shift(msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return msg // an answer to the server's request keeps its id
	}
	if n, ok := req.ID.Raw().(int64); ok {
		r := *req
		r.ID, _ = jsonrpc.MakeID(float64(n + p.idBase)) // exact: below 2^53
		return &r
	}
	if req.Method != "notifications/cancelled" || req.IsCall() {
		return msg
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil {
		return msg
	}
	var n int64
	if json.Unmarshal(params["requestId"], &n) != nil {
		return msg // a string id: directMiddleware's, already counted from idBase
	}
	params["requestId"], _ = json.Marshal(n + p.idBase)
	b, err := json.Marshal(params)
	if err != nil {
		return msg
	}
	r := *req
	r.Params = b
	return &r
}

// callDirect sends req, a request of directMiddleware, through the
// transport's own connection, with what Write notes of a request: its id
// on the call's span, and the request gate's view of the session.
func (p *sessionConn) callDirect(ctx context.Context, dc transport.DirectCaller, req *jsonrpc.Request, result any) error {
	switch req.Method {
	case "initialize", "tools/list":
		req = p.withTaskCaps(req)
		result = &tapResult{into: result, method: req.Method, tasks: &p.s.tasks}
	}
	p.c.m.tel.NoteRequestID(ctx, req)
	p.gate.Written(req)
	return dc.CallDirect(ctx, req, result)
}

// withTaskCaps returns req with the client's tasks capability added to
// an initialize's (taskwire.go).
func (p *sessionConn) withTaskCaps(req *jsonrpc.Request) *jsonrpc.Request {
	if req.Method != "initialize" || p.s.hooks == nil {
		return req
	}
	params := withClientTaskCaps(req.Params, p.s.hooks.caps)
	if len(params) == len(req.Params) {
		return req
	}
	cp := *req
	cp.Params = params
	return &cp
}
