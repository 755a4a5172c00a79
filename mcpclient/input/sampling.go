//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package input

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A SamplingHandler answers a server's request for an LLM completion
// (sampling/createMessage, a feature deprecated in 2026-07-28): it should
// let the user review the request, respect MaxTokens, and return the
// model's message. An error fails the server's request. It may be called
// concurrently; ctx ends like an elicitation handler's (see
// ElicitationHandlers).
type SamplingHandler func(ctx context.Context, req *mcp.CreateMessageParams, serverID string) (*mcp.CreateMessageResult, error)

// Sample answers p, a request of server serverID, with f: a handler's
// error is wrapped, and a handler that returns no result fails. A nil f
// fails with a [*NoHandlerError].
func (f SamplingHandler) Sample(ctx context.Context, serverID string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if f == nil {
		return nil, &NoHandlerError{fmt.Sprintf("no sampling handler is configured for mcp server %q", serverID)}
	}
	res, err := f(ctx, p, serverID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("sampling handler: %w", err)
	case res == nil:
		return nil, fmt.Errorf("sampling handler returned no result")
	}
	return res, nil
}

// ErrNoHandler is wrapped by the error that a server request gets when
// the application configured nothing to answer it: an elicitation mode
// without a handler, or sampling without a handler.
var ErrNoHandler = errors.New("no handler configured")

// NoHandlerError is the error of a request nobody can answer. It wraps
// ErrNoHandler and an invalid-params JSON-RPC error, so that the server
// gets a proper code.
type NoHandlerError struct {
	Message string // names the mode or sampling, and the server
}

func (e *NoHandlerError) Error() string { return e.Message }

func (e *NoHandlerError) Unwrap() []error {
	return []error{ErrNoHandler, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.Message}}
}
