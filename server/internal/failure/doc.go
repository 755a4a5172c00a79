// Package failure says what the engine's errors are on the HTTP API: each
// sentinel or typed error of agent, mcpclient, store and netguard that a
// route can meet, as the api.APIError a client gets (its status, its
// api.Code, and a message safe to show that names the MCP server by its
// name rather than its id: Label). A store that cannot serve
// (store.ErrUnavailable) is 503 with Retry-After on any route (Store); a
// call on an MCP server is Call; adding a server is Add; a connection
// that failed is Connect (or NotSaved, when nothing was kept).
//
// The functions are pure: they read the agent's server list for names and
// states, and nothing else.
package failure
