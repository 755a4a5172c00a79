package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/server"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// Example hosts agents on a database, follows one agent's state over its
// WebSocket and reads it through the JSON API.
func Example() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Memory, nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	srv, err := server.Open(ctx, st, nil)
	if err != nil {
		panic(err)
	}
	defer srv.Close(ctx)
	ts := httptest.NewServer(srv) // agentmcp serve uses an http.Server
	defer ts.Close()
	defer srv.CloseStreams()

	url := client.AgentURL(ts.URL, "my-agent", "default")
	c, err := client.New(url, nil)
	if err != nil {
		panic(err)
	}
	// Agents are created explicitly: by adding a server, or so.
	if err := c.CreateAgent(ctx); err != nil {
		panic(err)
	}
	conn, err := client.Dial(ctx, url, nil)
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	dispose := conn.OnMCPUpdate(func(st api.MCPServersState) {
		fmt.Println("servers:", len(st.Servers))
	})
	defer dispose()

	_, err = c.AddMCPServer(ctx, api.AddRequest{Name: "internal", URL: "http://10.0.0.1/mcp"})
	fmt.Println(err.(*api.APIError).Code)
	// Output:
	// servers: 0
	// blocked_url
}
