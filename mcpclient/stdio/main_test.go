package stdio_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv makes the test binary a stdio MCP server (testServer).
const serverEnv = "AGENTMCP_TEST_STDIO_SERVER"

// floodLines is how many lines a server in mode "flood" writes to stderr.
const floodLines = 20000

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(testServer(mode))
	}
	// The servers and supervisors started are this binary: under the
	// race detector each would sleep a second as it exits.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}

// testServer is the test binary as a stdio MCP server with one tool,
// "greet". In mode "noisy" it prints a banner on stdout before it serves;
// in mode "fail" it explains on stdout and stderr why it cannot start, and
// exits; in mode "long" it answers with a line longer than 1 KiB.
func testServer(mode string) int {
	switch mode {
	case "fail":
		fmt.Println("Error: API_KEY is not set")
		fmt.Fprintln(os.Stderr, "fatal: bad configuration")
		return 1
	case "noisy":
		fmt.Println("greeter v1 listening on stdio")
	case "flood":
		// A server that writes floodLines lines to stderr before it
		// serves.
		w := bufio.NewWriter(os.Stderr)
		for i := range floodLines {
			fmt.Fprintf(w, "flood line %d\n", i)
		}
		w.Flush()
	case "long":
		fmt.Printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":%q}}\n", make([]byte, 2048))
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "says hello"},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
