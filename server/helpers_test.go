package server

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// toolResult decodes a CallToolResult that the client returned as JSON;
// nil for none.
func toolResult(t testing.TB, raw json.RawMessage) *mcp.CallToolResult {
	t.Helper()
	if raw == nil {
		return nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("decoding a CallToolResult: %v\n%s", err, raw)
	}
	return &res
}
