package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentmcp/agentmcp/api"
)

// Options configures a Client and Dial. The zero value, or nil, gives
// the defaults each field documents.
type Options struct {
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

// New returns a client of the agent at agentURL (see AgentURL). It does
// no I/O.
func New(agentURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(agentURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server client: %q is not an http(s) URL", agentURL)
	}
	var o Options
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
// error response is an *api.APIError.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	_, err := c.doStatus(ctx, method, path, body, out)
	return err
}

// doStatus is do, returning the answer's status too.
func (c *Client) doStatus(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
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
		return 0, err
	}
	defer res.Body.Close()
	return res.StatusCode, decodeAnswer(res, out)
}

// decodeAnswer reads an answer of the API: its JSON into out (if not nil),
// or its error as an *api.APIError.
func decodeAnswer(res *http.Response, out any) error {
	method, path := res.Request.Method, res.Request.URL.Path
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var eb api.ErrorResponse
		if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
			return &api.APIError{Status: res.StatusCode, Code: fmt.Sprintf("http_%d", res.StatusCode), Message: http.StatusText(res.StatusCode)}
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
func (c *Client) MCPServers(ctx context.Context) (api.MCPServersState, error) {
	var st api.MCPServersState
	err := c.do(ctx, http.MethodGet, "", nil, &st)
	return st, err
}

// AddMCPServer adds a server (req.Name and req.URL are required). It
// returns when the server is ready or waits for authorisation, or fails
// (an *api.APIError; connect_failed means it was stored all the same).
func (c *Client) AddMCPServer(ctx context.Context, req api.AddRequest) (api.AddResult, error) {
	var res api.AddResult
	err := c.do(ctx, http.MethodPost, "/servers", req, &res)
	return res, err
}

// CreateAgent creates the agent (PUT /agents/{class}/{name}); it is not an
// error when it exists. Adding a server creates it too; reading an agent
// that does not exist is an *api.APIError with code unknown_agent that lists
// the agents that do.
func (c *Client) CreateAgent(ctx context.Context) error {
	return c.do(ctx, http.MethodPut, "", nil, nil)
}

// ListAgents returns the agents ("class/name") of the server at base
// ("http://127.0.0.1:8787").
func ListAgents(ctx context.Context, base string, opts *Options) ([]api.AgentInfo, error) {
	c, err := New(strings.TrimSuffix(base, "/")+"/agents", opts)
	if err != nil {
		return nil, err
	}
	var out api.AgentList
	err = c.do(ctx, http.MethodGet, "", nil, &out)
	return out.Agents, err
}

// Reconnect connects a server again at once, whatever its state, keeping
// its OAuth grant. It returns ready, or authenticating with the URL to
// visit; a server still unreachable is an *api.APIError with code
// connect_failed (it keeps being retried in the background).
func (c *Client) Reconnect(ctx context.Context, id string) (api.AddResult, error) {
	var res api.AddResult
	err := c.do(ctx, http.MethodPost, "/servers/"+url.PathEscape(id)+"/reconnect", nil, &res)
	return res, err
}

// RemoveMCPServer removes a server.
func (c *Client) RemoveMCPServer(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/servers/"+url.PathEscape(id), nil, nil)
}

// Filter selects the servers whose catalog a list returns (ListTools):
// each field, when not empty, keeps only the servers it names (ids, names,
// states such as "ready"); an empty Filter selects every stored server.
type Filter struct {
	ServerID   []string
	ServerName []string
	State      []string
}

func filterQuery(f Filter) string {
	q := url.Values{}
	for _, id := range f.ServerID {
		q.Add("serverId", id)
	}
	for _, n := range f.ServerName {
		q.Add("serverName", n)
	}
	for _, s := range f.State {
		q.Add("state", s)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// ListTools returns the tools of the servers f selects.
func (c *Client) ListTools(ctx context.Context, f Filter) ([]api.Tool, error) {
	var out struct {
		Tools []api.Tool `json:"tools"`
	}
	err := c.do(ctx, http.MethodGet, "/tools"+filterQuery(f), nil, &out)
	return out.Tools, err
}

// SearchTools returns up to limit tools of the servers f selects that
// match query, best first, with their keys and scores (GET .../tools?q=).
// Zero limit means the server's default (10).
func (c *Client) SearchTools(ctx context.Context, f Filter, query string, limit int) ([]api.ToolMatch, error) {
	q := filterQuery(f)
	if q == "" {
		q = "?"
	} else {
		q += "&"
	}
	v := url.Values{"q": {query}}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out struct {
		Tools []api.ToolMatch `json:"tools"`
	}
	err := c.do(ctx, http.MethodGet, "/tools"+q+v.Encode(), nil, &out)
	return out.Tools, err
}

// Server returns one server of the agent, with what GET
// .../servers/{id} adds to its state (api.ServerState).
func (c *Client) Server(ctx context.Context, id string) (api.ServerState, error) {
	var st api.ServerState
	err := c.do(ctx, http.MethodGet, "/servers/"+url.PathEscape(id), nil, &st)
	return st, err
}

// Reload makes the agent take in what another process changed in its
// stored servers (POST .../reload).
func (c *Client) Reload(ctx context.Context) (api.ReloadResult, error) {
	var res api.ReloadResult
	err := c.do(ctx, http.MethodPost, "/reload", nil, &res)
	return res, err
}

// Elicitations returns the agent's pending elicitations.
func (c *Client) Elicitations(ctx context.Context) ([]api.Elicitation, error) {
	var out struct {
		Elicitations []api.Elicitation `json:"elicitations"`
	}
	err := c.do(ctx, http.MethodGet, "/elicitations", nil, &out)
	return out.Elicitations, err
}

// AnswerElicitation answers a pending elicitation.
func (c *Client) AnswerElicitation(ctx context.Context, id string, answer api.ElicitationAnswer) error {
	return c.do(ctx, http.MethodPost, "/elicitations/"+url.PathEscape(id), answer, nil)
}

// Exposure returns the agent's exposure rules (GET .../exposure).
func (c *Client) Exposure(ctx context.Context) (api.Exposure, error) {
	var out api.Exposure
	err := c.do(ctx, http.MethodGet, "/exposure", nil, &out)
	return out, err
}

// SetExposure replaces the agent's exposure rules (PUT .../exposure) and
// returns the rules now in force.
func (c *Client) SetExposure(ctx context.Context, e api.Exposure) (api.Exposure, error) {
	var out api.Exposure
	err := c.do(ctx, http.MethodPut, "/exposure", e, &out)
	return out, err
}

// Stats returns the figures of the agent's servers' tool calls (GET
// .../stats).
func (c *Client) Stats(ctx context.Context) (api.Stats, error) {
	var out api.Stats
	err := c.do(ctx, http.MethodGet, "/stats", nil, &out)
	return out, err
}
