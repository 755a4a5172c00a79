package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// ClientOptions configures a Client and Dial. The zero value, or nil, gives
// the defaults each field documents.
type ClientOptions struct {
	// Token is the server's access token, sent as a bearer token. Empty
	// sends none.
	Token string
	// HTTPClient carries the requests. Nil means http.DefaultClient.
	HTTPClient *http.Client
}

// Client calls the JSON API of one agent of a running server. It is safe
// for concurrent use.
type Client struct {
	base  string // http(s)://host/agents/{class}/{name}
	token string
	hc    *http.Client
}

// AgentURL returns the URL of agent class/name on the server at base
// ("http://127.0.0.1:8787").
func AgentURL(base, class, name string) string {
	return strings.TrimSuffix(base, "/") + "/agents/" + url.PathEscape(class) + "/" + url.PathEscape(name)
}

// NewClient returns a client of the agent at agentURL (see AgentURL). It
// does no I/O.
func NewClient(agentURL string, opts *ClientOptions) (*Client, error) {
	u, err := url.Parse(agentURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server client: %q is not an http(s) URL", agentURL)
	}
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(agentURL, "/"), token: o.Token, hc: o.HTTPClient}, nil
}

// URL returns the agent's URL.
func (c *Client) URL() string { return c.base }

// do sends a request and decodes a JSON answer into out (if not nil). An
// error response is an *APIError.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	return decodeAnswer(res, out)
}

// decodeAnswer reads an answer of the API: its JSON into out (if not nil),
// or its error as an *APIError.
func decodeAnswer(res *http.Response, out any) error {
	method, path := res.Request.Method, res.Request.URL.Path
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var eb errorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return &APIError{Status: res.StatusCode, Code: fmt.Sprintf("http_%d", res.StatusCode), Message: http.StatusText(res.StatusCode)}
		}
		e := eb.Error
		e.Status = res.StatusCode
		return &e
	}
	if out == nil || res.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("server client: decoding the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// MCPServers returns the agent's state (the seed's getMcpServers).
func (c *Client) MCPServers(ctx context.Context) (agent.MCPServersState, error) {
	var st agent.MCPServersState
	err := c.do(ctx, http.MethodGet, "", nil, &st)
	return st, err
}

// AddMCPServer adds a server (req.Name and req.URL are required). It
// returns when the server is ready or waits for authorisation, or fails
// (an *APIError; connect_failed means it was stored all the same).
func (c *Client) AddMCPServer(ctx context.Context, req AddRequest) (agent.AddResult, error) {
	var res agent.AddResult
	err := c.do(ctx, http.MethodPost, "/servers", req, &res)
	return res, err
}

// CreateAgent creates the agent (PUT /agents/{class}/{name}); it is not an
// error when it exists. Adding a server creates it too; reading an agent
// that does not exist is an *APIError with code unknown_agent that lists
// the agents that do.
func (c *Client) CreateAgent(ctx context.Context) error {
	return c.do(ctx, http.MethodPut, "", nil, nil)
}

// ListAgents returns the agents ("class/name") of the server at base
// ("http://127.0.0.1:8787").
func ListAgents(ctx context.Context, base string, opts *ClientOptions) ([]AgentInfo, error) {
	c, err := NewClient(strings.TrimSuffix(base, "/")+"/agents", opts)
	if err != nil {
		return nil, err
	}
	var out struct {
		Agents []AgentInfo `json:"agents"`
	}
	err = c.do(ctx, http.MethodGet, "", nil, &out)
	return out.Agents, err
}

// Reconnect connects a server again at once, whatever its state, keeping
// its OAuth grant. It returns ready, or authenticating with the URL to
// visit; a server still unreachable is an *APIError with code
// connect_failed (it keeps being retried in the background).
func (c *Client) Reconnect(ctx context.Context, id string) (agent.AddResult, error) {
	var res agent.AddResult
	err := c.do(ctx, http.MethodPost, "/servers/"+url.PathEscape(id)+"/reconnect", nil, &res)
	return res, err
}

// RemoveMCPServer removes a server.
func (c *Client) RemoveMCPServer(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/servers/"+url.PathEscape(id), nil, nil)
}

func filterQuery(f mcpclient.Filter) string {
	q := url.Values{}
	for _, id := range f.ServerID {
		q.Add("serverId", id)
	}
	for _, n := range f.ServerName {
		q.Add("serverName", n)
	}
	for _, s := range f.State {
		q.Add("state", string(s))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// ListTools returns the tools of the servers f selects.
func (c *Client) ListTools(ctx context.Context, f mcpclient.Filter) ([]mcpclient.Tool, error) {
	var out struct {
		Tools []mcpclient.Tool `json:"tools"`
	}
	err := c.do(ctx, http.MethodGet, "/tools"+filterQuery(f), nil, &out)
	return out.Tools, err
}

// timeoutMS is the time left before ctx's deadline, in milliseconds
// (rounded up, at most MaxCallTimeout), or 0 when ctx has none: the server
// then gives up on a call when its client does.
func timeoutMS(ctx context.Context) int64 {
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return max(1, min(time.Until(deadline).Milliseconds()+1, MaxCallTimeout.Milliseconds()))
}

// CallTool calls a tool. A tool failure is a result with IsError set. The
// server bounds the call by ctx's deadline (timeoutMs), else by its
// default (Options.CallTimeout); cancelling ctx cancels the call on the
// MCP server.
func (c *Client) CallTool(ctx context.Context, serverID, name string, args any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	var res mcp.CallToolResult
	if err := c.do(ctx, http.MethodPost, "/servers/"+url.PathEscape(serverID)+"/tools/call", CallToolRequest{Name: name, Arguments: raw, TimeoutMS: timeoutMS(ctx)}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ReadResource reads a resource, bounded as CallTool.
func (c *Client) ReadResource(ctx context.Context, serverID, uri string) (*mcp.ReadResourceResult, error) {
	var res mcp.ReadResourceResult
	if err := c.do(ctx, http.MethodPost, "/servers/"+url.PathEscape(serverID)+"/resources/read", ReadResourceRequest{URI: uri, TimeoutMS: timeoutMS(ctx)}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// GetPrompt gets a prompt, bounded as CallTool.
func (c *Client) GetPrompt(ctx context.Context, serverID, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var res mcp.GetPromptResult
	if err := c.do(ctx, http.MethodPost, "/servers/"+url.PathEscape(serverID)+"/prompts/get", GetPromptRequest{Name: name, Arguments: args, TimeoutMS: timeoutMS(ctx)}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Conn is a live connection to an agent's state stream (its WebSocket).
// It is safe for concurrent use.
type Conn struct {
	ws   *websocket.Conn
	done chan struct{} // closed when the stream ended

	// mu guards the fields below.
	mu        sync.Mutex
	state     agent.MCPServersState
	listeners map[int]func(agent.MCPServersState)
	next      int
	err       error
}

// Dial connects to the WebSocket of the agent at agentURL (an http(s) or
// ws(s) URL, see AgentURL) and waits for its first state. ctx bounds the
// dial only.
func Dial(ctx context.Context, agentURL string, opts *ClientOptions) (*Conn, error) {
	var o ClientOptions
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
			return nil, &APIError{Status: res.StatusCode, Code: CodeUnauthorized, Message: "the server wants an access token"}
		}
		if res != nil && res.StatusCode == http.StatusNotFound {
			return nil, &APIError{Status: res.StatusCode, Code: CodeUnknownAgent, Message: "there is no such agent (GET /agents lists them; adding a server creates one)"}
		}
		return nil, fmt.Errorf("dial %s: %w", agentURL, err)
	}
	ws.SetReadLimit(64 << 20)
	c := &Conn{ws: ws, done: make(chan struct{}), listeners: map[int]func(agent.MCPServersState){}}
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
func (c *Conn) read(ctx context.Context) (agent.MCPServersState, error) {
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			return agent.MCPServersState{}, err
		}
		var f Frame
		if json.Unmarshal(data, &f) == nil && f.Type == FrameType {
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
		fns := make([]func(agent.MCPServersState), 0, len(c.listeners))
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
func (c *Conn) MCPServers() agent.MCPServersState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// OnMCPUpdate calls fn with the latest state at once, then with every new
// state, in order, on the connection's reading goroutine (fn must not
// block). The result removes fn.
func (c *Conn) OnMCPUpdate(fn func(agent.MCPServersState)) (dispose func()) {
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

// Server returns one server of the agent, with what GET
// .../servers/{id} adds to its state (ServerState).
func (c *Client) Server(ctx context.Context, id string) (ServerState, error) {
	var st ServerState
	err := c.do(ctx, http.MethodGet, "/servers/"+url.PathEscape(id), nil, &st)
	return st, err
}

// Reload makes the agent take in what another process changed in its
// stored servers (POST .../reload).
func (c *Client) Reload(ctx context.Context) (ReloadResult, error) {
	var res ReloadResult
	err := c.do(ctx, http.MethodPost, "/reload", nil, &res)
	return res, err
}
