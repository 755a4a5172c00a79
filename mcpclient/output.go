package mcpclient

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OutputValidation says what CallTool does with a result whose
// structuredContent breaks the tool's outputSchema (the MCP specification
// says clients SHOULD validate structured results).
type OutputValidation int

const (
	// OutputValidationError, the default, makes the call fail with an
	// [*OutputSchemaError] that carries the result.
	OutputValidationError OutputValidation = iota
	// OutputValidationWarn logs a warning and returns the result as it is.
	OutputValidationWarn
	// OutputValidationOff does not validate results.
	OutputValidationOff
)

// ErrInvalidResult is wrapped by [*OutputSchemaError].
var ErrInvalidResult = errors.New("tool result does not match its output schema")

// OutputSchemaError reports a tool result whose structuredContent is
// missing or breaks the tool's outputSchema: the server broke its own
// contract, which is not a tool failure (a result with isError, which is
// never validated). Match it with errors.As, or ErrInvalidResult with
// errors.Is.
type OutputSchemaError struct {
	ServerID string
	Tool     string
	// Problems says where the structured content breaks the schema
	// ("structuredContent is missing" when the result has none).
	Problems []aitools.Problem
	// Result is the whole result, as the server sent it.
	Result *mcp.CallToolResult
}

func (e *OutputSchemaError) Error() string {
	var b strings.Builder
	b.WriteString("mcp server ")
	b.WriteString(strconv.Quote(e.ServerID))
	b.WriteString(": tool ")
	b.WriteString(strconv.Quote(e.Tool))
	b.WriteString(" returned a result that does not match its output schema: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Path != "" {
			b.WriteString(strconv.Quote(p.Path) + ": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

func (e *OutputSchemaError) Unwrap() error { return ErrInvalidResult }

// outputSchemas holds a server's compiled output schemas, by the tool
// definition they come from. It is emptied when it holds many more than
// the server's catalog, so definitions replaced by refreshes do not pile
// up.
type outputSchemas struct {
	mu sync.Mutex
	m  map[*mcp.Tool]*outputSchema
}

type outputSchema struct {
	once sync.Once
	v    *aitools.Validator
	err  error
}

// checkOutput validates res against tool's output schema, as
// Options.OutputValidation says. tool may be nil (not in a live catalog):
// then nothing is checked.
func (c *server) checkOutput(tool *mcp.Tool, res *mcp.CallToolResult) error {
	mode := c.m.opts.OutputValidation
	if mode == OutputValidationOff || tool == nil || tool.OutputSchema == nil || res == nil || res.IsError {
		return nil
	}
	sch := c.outputSchema(tool)
	sch.once.Do(func() {
		sch.v, sch.err = aitools.NewValidator(tool.OutputSchema)
		if sch.err != nil {
			c.m.logger.Warn("tool output schema not enforced: it cannot be compiled", "server", c.ID(), "tool", tool.Name, "error", sch.err)
		}
	})
	if sch.err != nil {
		return nil
	}
	var problems []aitools.Problem
	if res.StructuredContent == nil {
		problems = []aitools.Problem{{Message: "structuredContent is missing (the tool declares an outputSchema)"}}
	} else {
		problems = sch.v.Validate(res.StructuredContent)
	}
	if len(problems) == 0 {
		return nil
	}
	err := &OutputSchemaError{ServerID: c.ID(), Tool: tool.Name, Problems: problems, Result: res}
	if mode == OutputValidationWarn {
		c.m.logger.Warn("tool result does not match its output schema", "server", c.ID(), "tool", tool.Name, "error", err)
		return nil
	}
	return err
}

// checkResult is checkOutput for the outcome of a call of tool name that
// went as a task: its result fetched by tasks/result or the final
// tasks/get, or the one the server gave at once instead of a task. The
// tool's definition is the live catalog's when the result comes (none, so
// nothing checked, while the catalog is a stale one).
func (c *server) checkResult(name string, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if err != nil || res == nil {
		return res, err
	}
	if err := c.checkOutput(c.tool(name), res); err != nil {
		return nil, err
	}
	return res, nil
}

// outputSchema returns the entry of tool's output schema.
func (c *server) outputSchema(tool *mcp.Tool) *outputSchema {
	c.outputs.mu.Lock()
	defer c.outputs.mu.Unlock()
	if sch, ok := c.outputs.m[tool]; ok {
		return sch
	}
	c.mu.Lock()
	n := len(c.cat.tools)
	c.mu.Unlock()
	if c.outputs.m == nil || len(c.outputs.m) > 2*n+16 {
		c.outputs.m = map[*mcp.Tool]*outputSchema{}
	}
	sch := &outputSchema{}
	c.outputs.m[tool] = sch
	return sch
}
