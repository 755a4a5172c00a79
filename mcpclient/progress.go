package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressTransport routes notifications/progress to the callbacks of the
// calls in flight, as they are read. go-sdk hands notifications to a queue
// that may run after the response has been delivered; reading them here,
// in wire order, means a call's progress callbacks have all run when the
// call returns.
//
// It also records the connection on the session, so that closing a session
// can close its transport first: go-sdk's ClientSession.Close waits for
// calls in flight, which a hostile or hung server may never answer.
type progressTransport struct {
	mcp.Transport
	c *conn
	s *session
}

func (t progressTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc := &progressConn{Connection: conn, c: t.c, gate: requestGate{c: t.c}}
	t.s.conn, t.s.raw = pc, conn
	return pc, nil
}

type progressConn struct {
	mcp.Connection
	c    *conn
	gate requestGate // admits the server's requests (limits.go)
}

func (p *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := p.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if ok && req.IsCall() {
			refuse, drop := p.gate.admit(req)
			switch {
			case drop:
				continue
			case refuse != nil:
				if err := p.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: refuse}); err != nil {
					p.c.m.logger.Debug("cannot refuse a server request", "server", p.c.ID(), "error", err)
				}
				continue
			}
			return msg, nil
		}
		if !ok || req.Method != "notifications/progress" {
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
func (c *conn) routeProgress(params *mcp.ProgressNotificationParams) {
	if fn, ok := c.progress.Load(fmt.Sprint(params.ProgressToken)); ok {
		fn.(func(*mcp.ProgressNotificationParams))(params)
	}
}
