// Package input is how an application answers what an MCP server asks of
// its client in the middle of a session: elicitation (a form for the user
// to fill in, or a URL for the user to open) and sampling (an LLM
// completion). In the legacy protocol eras a server sends these as JSON-RPC
// requests (elicitation/create, sampling/createMessage); in 2026-07-28
// they are input requests in the result of the call that needs them. The
// application gives its answers the same way for both.
//
// The package holds the handler types an mcpclient Manager is configured
// with ([ElicitationHandlers], [SamplingHandler]), the request a handler
// gets ([ElicitationRequest]), the errors a caller may see
// ([ErrNoHandler], [*URLElicitationRequiredError]), and the checks every
// answer passes ([ElicitationHandlers.Elicit], [SamplingHandler.Sample]).
// The Manager adds what depends on its sessions: the limits on pending
// requests, the contexts that end with the call that caused a request, and
// the retry of a request a legacy server refused until the user completed
// URL elicitations.
//
// # Usage
//
//	m.ConfigureElicitationHandlers(&input.ElicitationHandlers{
//		Form: func(ctx context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
//			// Show req.Message and a form for req.RequestedSchema; say which
//			// server asks.
//			return &mcp.ElicitResult{Action: "accept", Content: answers}, nil
//		},
//	})
package input
