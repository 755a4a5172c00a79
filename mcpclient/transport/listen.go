package transport

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 subscriptions/listen stream that ends without its response
// was dropped on the way (a proxy's timeout, a server restarting behind a
// load balancer): the server ends one it means to end with its response,
// or with notifications/cancelled naming it. go-sdk's client sends the
// listen once and never awaits it, so nothing would open it again and list
// changes would stop reaching the client for the rest of the connection.
// The connection re-issues it instead, as the specification lets a client
// (the same id: the client still waits for that one), with backoff, and
// fails after maxRetries attempts in a row that read nothing, as the
// 2025-11-25 GET stream does. Changes made while no stream was open were
// announced to nobody: once the server takes the listen again, the client
// is told that each list it listens for may have changed.

// relisten re-issues call, a subscriptions/listen whose stream ended
// without its response; heard says the stream read at least one event
// (the server's acknowledgment). ctx is the listen's own context.
func (c *streamableConn) relisten(ctx context.Context, call *jsonrpc.Request, heard bool) {
	if heard {
		c.mu.Lock()
		c.listenFailures = 0
		c.mu.Unlock()
	}
	for {
		c.mu.Lock()
		c.listenFailures++
		n := c.listenFailures
		c.mu.Unlock()
		if n > c.timing.maxRetries {
			c.fail(errors.New("subscriptions/listen: the server keeps ending the stream"))
			return
		}
		if !c.wait(ctx, c.timing.delay(n, 0)) {
			return
		}
		c.logger.Debug("subscriptions/listen stream ended without its response; listening again", "attempt", n)
		err := c.write(ctx, call, nil)
		if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) {
			return
		}
		if err == nil {
			c.announceLists(call)
			return
		}
		c.logger.Debug("subscriptions/listen refused", "error", err)
	}
}

// listChanges are the list_changed notifications a listen's filter may
// ask for.
var listChanges = []struct{ filter, method string }{
	{"toolsListChanged", "notifications/tools/list_changed"},
	{"promptsListChanged", "notifications/prompts/list_changed"},
	{"resourcesListChanged", "notifications/resources/list_changed"},
}

// announceLists hands the client a list_changed notification for each list
// call, a subscriptions/listen, asks to hear of.
func (c *streamableConn) announceLists(call *jsonrpc.Request) {
	var p struct {
		Notifications map[string]any `json:"notifications"`
	}
	_ = json.Unmarshal(call.Params, &p)
	for _, l := range listChanges {
		if p.Notifications[l.filter] == true {
			c.deliver(&jsonrpc.Request{Method: l.method, Params: json.RawMessage(`{}`)})
		}
	}
}

// cancels reports whether msg is a notifications/cancelled naming call.
func cancels(msg jsonrpc.Message, call jsonrpc.ID) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "notifications/cancelled" || !call.IsValid() {
		return false
	}
	var p mcp.CancelledParams
	if json.Unmarshal(req.Params, &p) != nil {
		return false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return err == nil && id == call
}
