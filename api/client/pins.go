package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/agentmcp/agentmcp/api"
)

// Pins lists the agent's pinned tools (GET .../pins): changed, new and
// rejected ones first, with their diffs.
func (c *Client) Pins(ctx context.Context) ([]api.Pin, error) {
	var out api.PinsResponse
	err := c.do(ctx, http.MethodGet, "/pins", nil, &out)
	return out.Pins, err
}

// DecidePin accepts or rejects the definition a server lists for one of
// its tools (POST .../pins/{server}/{tool}; decision is "accept" or
// "reject") and returns the pin as it is now.
func (c *Client) DecidePin(ctx context.Context, server, tool, decision string) (api.Pin, error) {
	return c.AnswerPin(ctx, server, tool, api.PinDecisionRequest{Decision: decision})
}

// AnswerPin is DecidePin with the whole request: its decision and who
// decides (req.By).
func (c *Client) AnswerPin(ctx context.Context, server, tool string, req api.PinDecisionRequest) (api.Pin, error) {
	var out api.PinResponse
	err := c.do(ctx, http.MethodPost, "/pins/"+url.PathEscape(server)+"/"+url.PathEscape(tool), req, &out)
	return out.Pin, err
}
