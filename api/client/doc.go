// Package client is the Go client of agentmcp serve's HTTP API (package
// server): a Client calls the JSON API of one agent, a Conn follows the
// agent's state stream (its WebSocket). It speaks the wire types of
// package api and depends on nothing else of agentmcp's engine: a program
// that uses it compiles neither the agents, the MCP client nor a database
// driver.
//
// # Usage
//
//	c, _ := client.New(client.AgentURL("http://127.0.0.1:8787", "agentmcp", "default"), &client.Options{Token: token})
//	res, err := c.AddMCPServer(ctx, api.AddRequest{Name: "docs", URL: "https://example.com/mcp"})
//	tools, err := c.ListTools(ctx, client.Filter{})
//	raw, err := c.CallTool(ctx, res.ID, "search", map[string]any{"q": "mcp"})
//	var out mcp.CallToolResult // go-sdk's, or any type of the caller's
//	json.Unmarshal(raw, &out)
//
//	conn, _ := client.Dial(ctx, c.URL(), &client.Options{Token: token})
//	defer conn.Close()
//	dispose := conn.OnMCPUpdate(func(st api.MCPServersState) { ... })
//
// The results of calls (CallTool, ReadResource, GetPrompt) are the MCP
// results as JSON, as the server's MCP server answered them: the client
// does not look inside them. CallToolWatched streams a call's progress and
// its server's requests for the user's input (AnswerElicitation answers
// them).
//
// # Concurrency
//
// A Client and a Conn are safe for concurrent use. A Conn's listeners
// (OnMCPUpdate) are called in order on its reading goroutine, which Close
// ends and waits for.
//
// # Errors
//
// An error answer of the server is an *api.APIError with its HTTP status
// and a stable code (api.Code*): match on the code with errors.As. A call
// bounded by its context's deadline sends it to the server (timeoutMs),
// which answers api.CodeTimeout when it passes. Other errors are the
// transport's (a refused connection, say).
package client
