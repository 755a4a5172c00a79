package input

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ElicitationHandlers answer servers that ask the user for input in the
// middle of a call: a form to fill in, or a URL to open in a browser. It is
// the seed's configureElicitationHandlers({form, url}).
//
// A handler returns the user's answer: Action "accept" (with Content, in
// form mode), "decline" or "cancel". Form answers are checked against the
// requested schema, and its defaults are filled in for fields left out,
// before they reach the server; an answer that does not match fails the
// request. A handler error fails the server's request (and, in 2026-07-28,
// the call). Handlers may be called concurrently, for many servers and
// calls; ctx ends when the call that caused the request is cancelled, when
// the server cancels the request, or when the Manager closes.
//
// In URL mode, accepting means the user agreed to open the URL (the
// handler opens it, in the system browser, never in a context the client
// or the model can read); completion is up to the server. Show the full
// URL and which server asks before opening anything.
type ElicitationHandlers struct {
	// Form answers form-mode elicitations. Nil means form mode is not
	// advertised and form requests fail.
	Form func(ctx context.Context, req *ElicitationRequest, serverID string) (*mcp.ElicitResult, error)
	// URL answers URL-mode elicitations. Nil means URL mode is not
	// advertised and URL requests fail.
	URL func(ctx context.Context, req *ElicitationRequest, serverID string) (*mcp.ElicitResult, error)

	// URLCompletionWait bounds the wait, when a legacy server refused a
	// request with a URL elicitation required error (-32042) and URL
	// accepted its elicitations, for the server's
	// notifications/elicitation/complete before the request is retried
	// once; the wait also ends with the call's context. Zero means 2
	// minutes. Negative means no wait: retry as soon as URL returns, for
	// handlers that return only once the user has finished in the browser.
	URLCompletionWait time.Duration
}

// ElicitationRequest is one request for user input, with what a UI needs
// to show it.
type ElicitationRequest struct {
	// ServerID is the server that asks. Show it to the user.
	ServerID string
	// Mode is "form" or "url".
	Mode string
	// Message is the server's explanation, for the user.
	Message string
	// RequestedSchema is the JSON schema of the form (form mode): a flat
	// object of string, number, integer, boolean and enum properties.
	RequestedSchema json.RawMessage
	// URL is the URL to open (URL mode). It may carry secrets in its query:
	// do not log it.
	URL string
	// ElicitationID identifies a URL elicitation in protocol 2025-11-25,
	// where the server may announce its completion. It is empty in
	// 2026-07-28.
	ElicitationID string
	// Params is the request as the server sent it (its _meta included).
	Params *mcp.ElicitParams
}

// NewElicitationRequest returns the request of server serverID for p (nil
// means empty params), its mode inferred as go-sdk does when the server
// left it out (ElicitationMode). A schema that cannot be encoded is an
// invalid-params JSON-RPC error.
func NewElicitationRequest(serverID string, p *mcp.ElicitParams) (*ElicitationRequest, error) {
	if p == nil {
		p = &mcp.ElicitParams{}
	}
	var schema []byte
	if p.RequestedSchema != nil {
		var err error
		if schema, err = json.Marshal(p.RequestedSchema); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("elicitation schema cannot be encoded: %v", err)}
		}
	}
	return &ElicitationRequest{
		ServerID:        serverID,
		Mode:            ElicitationMode(p),
		Message:         p.Message,
		URL:             p.URL,
		ElicitationID:   p.ElicitationID,
		RequestedSchema: schema,
		Params:          p,
	}, nil
}

// Size is the size of req's message, URL, elicitation id and form schema,
// in bytes: what a size limit of elicitations bounds.
func (req *ElicitationRequest) Size() int {
	return len(req.Message) + len(req.URL) + len(req.ElicitationID) + len(req.RequestedSchema)
}

// ElicitationMode is p's mode: p.Mode, or, when the server left it out,
// "url" for params with a URL or an elicitation id and "form" otherwise,
// as go-sdk infers it.
func ElicitationMode(p *mcp.ElicitParams) string {
	switch {
	case p.Mode != "":
		return p.Mode
	case p.URL != "" || p.ElicitationID != "":
		return "url"
	}
	return "form"
}

// Capabilities returns the elicitation capability of the modes h has
// handlers for, or nil when it has none.
func (h *ElicitationHandlers) Capabilities() *mcp.ElicitationCapabilities {
	if h.Form == nil && h.URL == nil {
		return nil
	}
	caps := &mcp.ElicitationCapabilities{}
	if h.Form != nil {
		caps.Form = &mcp.FormElicitationCapabilities{}
	}
	if h.URL != nil {
		caps.URL = &mcp.URLElicitationCapabilities{}
	}
	return caps
}

// Elicit answers req with the handler for its mode and checks the answer:
// its action must be accept, decline or cancel, and only an accepted form
// keeps its content (the result is then a copy). A mode without a
// handler fails with a [*NoHandlerError], an unknown mode with an
// invalid-params JSON-RPC error, and a handler's error is wrapped.
func (h *ElicitationHandlers) Elicit(ctx context.Context, req *ElicitationRequest) (*mcp.ElicitResult, error) {
	var fn func(context.Context, *ElicitationRequest, string) (*mcp.ElicitResult, error)
	mode := req.Mode
	switch mode {
	case "form":
		fn = h.Form
	case "url":
		fn = h.URL
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unsupported elicitation mode %q", mode)}
	}
	if fn == nil {
		return nil, &NoHandlerError{fmt.Sprintf("no %s-mode elicitation handler is configured for mcp server %q", mode, req.ServerID)}
	}
	res, err := fn(ctx, req, req.ServerID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s-mode elicitation handler: %w", mode, err)
	case res == nil:
		return nil, fmt.Errorf("%s-mode elicitation handler returned no result", mode)
	}
	switch res.Action {
	case "accept":
		if mode == "url" && res.Content != nil {
			r := *res
			r.Content = nil // URL mode carries consent only
			res = &r
		}
	case "decline", "cancel":
		if res.Content != nil {
			r := *res
			r.Content = nil
			res = &r
		}
	default:
		return nil, fmt.Errorf("%s-mode elicitation handler returned action %q; want accept, decline or cancel", mode, res.Action)
	}
	return res, nil
}

// ErrURLElicitationRequired is wrapped by [*URLElicitationRequiredError].
var ErrURLElicitationRequired = errors.New("mcp server requires URL elicitation")

// URLElicitationRequiredError reports a request that a server refused
// until the user completes URL elicitations (JSON-RPC error -32042), when
// that did not happen: the user declined or cancelled one, or the server
// refused the request again after the one retry.
type URLElicitationRequiredError struct {
	ServerID string
	// Elicitations are the URL elicitations the server asked for.
	Elicitations []*ElicitationRequest
	// Action is "decline" or "cancel" when the user refused one, and empty
	// when the retry failed the same way.
	Action string
	// Err is the server's error.
	Err error
}

func (e *URLElicitationRequiredError) Error() string {
	what := "it still requires them after a retry"
	if e.Action != "" {
		what = "the user chose " + e.Action
	}
	return fmt.Sprintf("mcp server %q requires %d URL elicitation(s) before it serves the request, and %s", e.ServerID, len(e.Elicitations), what)
}

func (e *URLElicitationRequiredError) Unwrap() []error {
	return []error{ErrURLElicitationRequired, e.Err}
}
