package stdio_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient/stdio"
)

// Example runs a stdio MCP server as a child process and calls a tool with
// a plain go-sdk client. The server here is this test program itself
// (testServer), which prints a banner on stdout before it serves: the
// transport skips it rather than failing the connection.
func Example() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AGENTMCP_TEST_STDIO_SERVER=noisy")
	t := &stdio.Transport{Command: cmd}

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		log.Fatalf("%v; %s", err, t.Output())
	}
	defer session.Close() // stops the server and all it started

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println(t.Output())
	// Output:
	// hello Ada
	// server stdout had a line that is not JSON-RPC: "greeter v1 listening on stdio"
}

// ExampleStarter shares one Starter among the transports of many servers,
// so that their processes are all started from one thread; Close waits
// until every one of them has stopped.
func ExampleStarter() {
	starter := stdio.NewStarter()
	defer starter.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	for i := range 3 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "AGENTMCP_TEST_STDIO_SERVER=serve")
		session, err := client.Connect(ctx, &stdio.Transport{Command: cmd, Starter: starter}, nil)
		if err != nil {
			log.Fatal(err)
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": fmt.Sprint("server ", i)}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
		session.Close()
	}
	// Output:
	// hello server 0
	// hello server 1
	// hello server 2
}
