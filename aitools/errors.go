package aitools

import (
	"errors"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrUnknownTool is wrapped when a key names no tool of the ToolSet
	// (a model's mistake, or a key from an older ToolSet whose tool is
	// gone or was renamed by a collision).
	ErrUnknownTool = errors.New("unknown tool")

	// ErrInvalidArguments is wrapped by [*ArgumentsError].
	ErrInvalidArguments = errors.New("invalid tool arguments")

	// ErrToolFailed is wrapped by [*ToolError].
	ErrToolFailed = errors.New("tool call failed")
)

// A Problem is one way in which arguments break a tool's input schema.
type Problem struct {
	// Path names the offending value the way a model writes it
	// ("amount", "items[2].name"); empty for the arguments as a whole.
	Path string
	// Keyword is the JSON Schema keyword that failed ("type", "required",
	// "minLength", ...), if any.
	Keyword string
	// Message says what is wrong, naming the constraint
	// ("got string, want integer", "missing property 'currency'").
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return "argument " + strconv.Quote(p.Path) + ": " + p.Message
}

// ArgumentsError reports arguments that were not sent to the server
// because they are not valid JSON, not an object, too large, or break the
// tool's input schema. Its message is meant for the model that made the
// call: it names each offending field and the constraint it breaks.
type ArgumentsError struct {
	Key      string // the tool's key in its ToolSet
	ServerID string
	Name     string // the MCP tool name
	Problems []Problem
}

func (e *ArgumentsError) Error() string {
	var b strings.Builder
	b.WriteString("invalid arguments for tool ")
	b.WriteString(strconv.Quote(e.Key))
	b.WriteString(": ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

func (e *ArgumentsError) Unwrap() error { return ErrInvalidArguments }

// ToolError is a tool call that completed with isError set: the tool
// itself failed. Its message is the first text content of the result, or
// "tool call failed" when there is none, as in the seed.
type ToolError struct {
	ServerID string
	Name     string
	Message  string
	// Result is the whole result, for callers that want more than text.
	Result *mcp.CallToolResult
}

func (e *ToolError) Error() string { return e.Message }

func (e *ToolError) Unwrap() error { return ErrToolFailed }

// toolError returns the ToolError for a result with isError set.
func toolError(serverID, name string, res *mcp.CallToolResult) *ToolError {
	msg := "tool call failed"
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok && t.Text != "" {
			msg = t.Text
		}
	}
	return &ToolError{ServerID: serverID, Name: name, Message: msg, Result: res}
}
