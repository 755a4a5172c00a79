package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/coder/websocket"

	"github.com/agentmcp/agentmcp/api"
)

// Conn is a live connection to an agent's state stream (its WebSocket).
// It is safe for concurrent use.
type Conn struct {
	ws   *websocket.Conn
	done chan struct{} // closed when the stream ended

	// mu guards the fields below.
	mu        sync.Mutex
	state     api.MCPServersState
	listeners map[int]func(api.MCPServersState)
	next      int
	err       error
}

// Dial connects to the WebSocket of the agent at agentURL (an http(s) or
// ws(s) URL, see AgentURL) and waits for its first state. ctx bounds the
// dial only.
func Dial(ctx context.Context, agentURL string, opts *Options) (*Conn, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	do := &websocket.DialOptions{HTTPClient: o.HTTPClient, HTTPHeader: http.Header{}}
	if o.Token != "" {
		do.HTTPHeader.Set("Authorization", "Bearer "+o.Token)
	}
	ws, res, err := websocket.Dial(ctx, agentURL, do)
	if err != nil {
		if res != nil && res.StatusCode == http.StatusUnauthorized {
			return nil, &api.APIError{Status: res.StatusCode, Code: api.CodeUnauthorized, Message: "the server wants an access token"}
		}
		if res != nil && res.StatusCode == http.StatusNotFound {
			return nil, &api.APIError{Status: res.StatusCode, Code: api.CodeUnknownAgent, Message: "there is no such agent (GET /agents lists them; adding a server creates one)"}
		}
		return nil, fmt.Errorf("dial %s: %w", agentURL, err)
	}
	ws.SetReadLimit(64 << 20)
	c := &Conn{ws: ws, done: make(chan struct{}), listeners: map[int]func(api.MCPServersState){}}
	first, err := c.read(ctx)
	if err != nil {
		ws.CloseNow()
		return nil, fmt.Errorf("dial %s: reading the first state: %w", agentURL, err)
	}
	c.state = first
	go c.run()
	return c, nil
}

// read reads frames until one carries the state.
func (c *Conn) read(ctx context.Context) (api.MCPServersState, error) {
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			return api.MCPServersState{}, err
		}
		var f api.Frame
		if json.Unmarshal(data, &f) == nil && f.Type == api.FrameType {
			return f.MCP, nil
		}
	}
}

func (c *Conn) run() {
	defer close(c.done)
	for {
		st, err := c.read(context.Background())
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		c.state = st
		fns := make([]func(api.MCPServersState), 0, len(c.listeners))
		for _, fn := range c.listeners {
			fns = append(fns, fn)
		}
		c.mu.Unlock()
		for _, fn := range fns {
			fn(st)
		}
	}
}

// MCPServers returns the latest state received.
func (c *Conn) MCPServers() api.MCPServersState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// OnMCPUpdate calls fn with the latest state at once, then with every new
// state, in order, on the connection's reading goroutine (fn must not
// block). The result removes fn.
func (c *Conn) OnMCPUpdate(fn func(api.MCPServersState)) (dispose func()) {
	c.mu.Lock()
	id := c.next
	c.next++
	c.listeners[id] = fn
	st := c.state
	c.mu.Unlock()
	fn(st)
	return func() {
		c.mu.Lock()
		delete(c.listeners, id)
		c.mu.Unlock()
	}
}

// Done is closed when the stream ends (Close, the server dropping it, or
// a network failure); Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the stream ended, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// CloseStatus returns the WebSocket close status the server ended the
// stream with (1001 going away at shutdown, 1013 for a client that fell
// behind), or -1.
func (c *Conn) CloseStatus() websocket.StatusCode { return websocket.CloseStatus(c.Err()) }

// Close closes the connection and waits for its goroutine. It is
// idempotent.
func (c *Conn) Close() error {
	c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.done
	return nil
}
