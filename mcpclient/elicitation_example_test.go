package mcpclient_test

import (
	"context"
	"fmt"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askUser stands for the application's UI.
func askUser(serverID, message string, schema []byte) (map[string]any, bool) { return nil, false }

// ExampleManager_ConfigureElicitationHandlers routes servers' requests for
// user input to the application. Servers connected afterwards see the
// elicitation capability with the form and URL modes.
func ExampleManager_ConfigureElicitationHandlers() {
	m := mcpclient.New(nil)
	defer m.Close(context.Background())
	m.ConfigureElicitationHandlers(&input.ElicitationHandlers{
		Form: func(ctx context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
			answers, ok := askUser(serverID, req.Message, req.RequestedSchema)
			if !ok {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			// Fields left out get the schema's defaults.
			return &mcp.ElicitResult{Action: "accept", Content: answers}, nil
		},
		URL: func(ctx context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
			// Show serverID and the whole URL; open it in the system
			// browser only if the user agrees.
			fmt.Printf("%s asks you to open %s\n", serverID, req.URL)
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	})
}
