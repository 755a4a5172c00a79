package aitools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A Tool is an MCP tool as an LLM sees it. Its fields are shared with the
// Cache and other ToolSets and must not be modified.
type Tool struct {
	// Key is the name the model calls the tool by: unique in its ToolSet
	// and valid for OpenAI and Anthropic (^[a-zA-Z0-9_-]{1,64}$).
	Key string
	// ServerID and Name identify the tool: the server's id and the MCP
	// tool name.
	ServerID string
	Name     string
	// Title is the tool's title, else its annotations' title, else empty.
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments, decoded; a tool that
	// declares none gets {"type":"object","properties":{}}.
	InputSchema map[string]any
	// OutputSchema is the JSON Schema of the structured result, decoded;
	// nil when the tool declares none.
	OutputSchema map[string]any
	// Def is the MCP definition the tool was made from.
	Def *mcp.Tool
	// Stale marks a tool from its server's catalog as stored before a
	// restart, which the server has not listed again yet: calling it
	// connects to the server first, which is the judge of whether the
	// tool still exists.
	Stale bool

	in, out *schema
	call    Caller
	cfg     *config
}

// tool returns the Tool for e under key.
func (e *entry) tool(key string, call Caller, cfg *config) Tool {
	t := Tool{
		Key:         key,
		ServerID:    e.key.serverID,
		Name:        e.key.name,
		Title:       e.def.Title,
		Description: e.def.Description,
		InputSchema: e.in.m,
		Def:         e.def,
		in:          e.in,
		out:         e.out,
		call:        call,
		cfg:         cfg,
	}
	if t.Title == "" && e.def.Annotations != nil {
		t.Title = e.def.Annotations.Title
	}
	if e.out != nil && e.out.err == nil {
		t.OutputSchema = e.out.m
	}
	return t
}

// InputSchemaJSON returns InputSchema as JSON. The result is shared and
// must not be modified.
func (t *Tool) InputSchemaJSON() json.RawMessage { return t.in.raw }

// OutputSchemaJSON returns OutputSchema as JSON, or nil. The result is
// shared and must not be modified.
func (t *Tool) OutputSchemaJSON() json.RawMessage {
	if t.out == nil {
		return nil
	}
	return t.out.raw
}

// SchemaError compiles the input schema if that has not happened yet and
// returns why it cannot be enforced, or nil. Arguments of a tool whose
// schema cannot be enforced (it refers to another document, uses a
// regular expression Go does not support, or is over
// CacheOptions.MaxSchemaBytes) are checked only for being a JSON object;
// the server, which validates its own inputs, is the judge of the rest.
func (t *Tool) SchemaError() error {
	_, err := t.in.compiled(t.cfg, t.ServerID, t.Name)
	return err
}

// Execute validates args (a JSON object; empty or null means {}) against
// the input schema and calls the tool on its server's current connection.
//
// Arguments that break the schema return an [*ArgumentsError], and the
// server is not called. A result with isError set returns a [*ToolError]
// whose message is the result's first text. Any other error means the call
// did not complete. Otherwise the whole result is returned.
func (t *Tool) Execute(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
	m, err := t.check(args)
	if err != nil {
		return nil, err
	}
	res, err := t.call(ctx, t.ServerID, t.Name, m)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("tool %q on server %q returned no result", t.Name, t.ServerID)
	}
	if res.IsError {
		return nil, toolError(t.ServerID, t.Name, res)
	}
	return res, nil
}

// ExecuteMap is Execute with arguments as a map.
func (t *Tool) ExecuteMap(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
	if args == nil {
		return t.Execute(ctx, nil)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, t.argsError(Problem{Message: "arguments cannot be encoded as JSON: " + err.Error()})
	}
	return t.Execute(ctx, raw)
}

// check decodes and validates args.
func (t *Tool) check(args json.RawMessage) (map[string]any, error) {
	if max := t.cfg.maxArgumentBytes; max > 0 && len(args) > max {
		return nil, t.argsError(Problem{Message: fmt.Sprintf("arguments are %d bytes, more than the limit of %d", len(args), max)})
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	// UnmarshalJSON keeps numbers as json.Number, exactly as sent; they
	// are sent on to the server unchanged.
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil, t.argsError(Problem{Message: "arguments are not valid JSON: " + err.Error()})
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, t.argsError(Problem{Message: fmt.Sprintf("arguments must be a JSON object, not a %s", jsonKind(v))})
	}
	sch, err := t.in.compiled(t.cfg, t.ServerID, t.Name)
	if err != nil || sch == nil {
		return m, nil // not enforceable here; see SchemaError
	}
	if err := sch.Validate(v); err != nil {
		return nil, t.argsError(problems(err, v)...)
	}
	return m, nil
}

func (t *Tool) argsError(p ...Problem) *ArgumentsError {
	return &ArgumentsError{Key: t.Key, ServerID: t.ServerID, Name: t.Name, Problems: p}
}

// A ToolSet is the tools of a catalog, keyed for an LLM. It is immutable
// and safe for concurrent use; a nil *ToolSet is empty.
type ToolSet struct {
	tools      []Tool
	byKey      map[string]int
	collisions []Collision
	// fallback holds tools that Get finds but All does not list: the
	// deferred tools of search mode (Index.SearchMode).
	fallback *ToolSet
	// from is the ToolSet this one was selected from (Select), if any.
	from *ToolSet
}

// Len returns the number of tools.
func (s *ToolSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// All returns the tools in catalog order: servers in registration order,
// each server's tools in the order it listed them.
func (s *ToolSet) All() iter.Seq[*Tool] {
	return func(yield func(*Tool) bool) {
		if s == nil {
			return
		}
		for i := range s.tools {
			if !yield(&s.tools[i]) {
				return
			}
		}
	}
}

// Tools returns the tools in catalog order, in a new slice.
func (s *ToolSet) Tools() []*Tool {
	return slices.Collect(s.All())
}

// Get returns the tool with key. In search mode ([Index.SearchMode]) that
// includes the deferred tools, which All does not list.
func (s *ToolSet) Get(key string) (*Tool, bool) {
	if s == nil {
		return nil, false
	}
	i, ok := s.byKey[key]
	if !ok {
		return s.fallback.Get(key)
	}
	return &s.tools[i], true
}

// Lookup maps a key back to the tool's server id and MCP name.
func (s *ToolSet) Lookup(key string) (serverID, toolName string, ok bool) {
	t, ok := s.Get(key)
	if !ok {
		return "", "", false
	}
	return t.ServerID, t.Name, true
}

// Collisions returns the keys that several tools wanted, with the keys
// they got instead. Every tool is still in the set.
func (s *ToolSet) Collisions() []Collision {
	if s == nil {
		return nil
	}
	out := make([]Collision, len(s.collisions))
	for i, c := range s.collisions {
		out[i] = Collision{Key: c.Key, Tools: slices.Clone(c.Tools)}
	}
	return out
}

// Select returns the ToolSet of the tools keep accepts, with the same
// keys, and the collisions that involve them.
func (s *ToolSet) Select(keep func(*Tool) bool) *ToolSet {
	out := &ToolSet{byKey: map[string]int{}, from: s}
	if s == nil {
		return out
	}
	if s.from != nil {
		out.from = s.from
	}
	for i := range s.tools {
		if keep(&s.tools[i]) {
			out.byKey[s.tools[i].Key] = len(out.tools)
			out.tools = append(out.tools, s.tools[i])
		}
	}
	for _, c := range s.collisions {
		if slices.ContainsFunc(c.Tools, func(r ToolRef) bool { _, ok := out.byKey[r.Key]; return ok }) {
			out.collisions = append(out.collisions, c)
		}
	}
	return out
}

// Execute runs the tool with key; see [Tool.Execute]. An unknown key
// returns an error wrapping ErrUnknownTool.
func (s *ToolSet) Execute(ctx context.Context, key string, args json.RawMessage) (*mcp.CallToolResult, error) {
	t, ok := s.Get(key)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, key)
	}
	return t.Execute(ctx, args)
}

// DefaultConcurrency is how many calls ExecuteAll runs at once by default.
const DefaultConcurrency = 8

// A Call is one tool call a model asked for.
type Call struct {
	// ID is the provider's id for the call (tool_call_id, call_id,
	// tool_use id). It is passed through.
	ID string
	// Key is the tool's key, the name the model used.
	Key string
	// Args are the arguments the model wrote.
	Args json.RawMessage
}

// An Outcome is how a Call ended.
type Outcome struct {
	Call Call
	// Result is set when Err is nil.
	Result *mcp.CallToolResult
	// Err is why the call failed: an unknown key (ErrUnknownTool), bad
	// arguments ([*ArgumentsError]), a tool failure ([*ToolError]), a call
	// that did not complete, or a panic in the Caller.
	Err error
}

// ExecuteAll runs calls, at most concurrency at a time (zero or less
// means DefaultConcurrency), and returns their outcomes in the order of
// calls. It returns when every call has ended; cancelling ctx cancels
// those in flight. A panic in a call becomes that call's error.
func (s *ToolSet) ExecuteAll(ctx context.Context, calls []Call, concurrency int) []Outcome {
	out := make([]Outcome, len(calls))
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	workers := min(concurrency, len(calls))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(calls) {
					return
				}
				out[i] = s.executeOne(ctx, calls[i])
			}
		})
	}
	wg.Wait()
	return out
}

func (s *ToolSet) executeOne(ctx context.Context, c Call) (o Outcome) {
	o.Call = c
	defer func() {
		if r := recover(); r != nil {
			o.Result = nil
			o.Err = fmt.Errorf("tool %q panicked: %v", c.Key, r)
			if t, ok := s.Get(c.Key); ok {
				t.cfg.logger.Error("tool call panicked", "server", t.ServerID, "tool", t.Name,
					"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
		}
	}()
	if err := ctx.Err(); err != nil {
		o.Err = err
		return o
	}
	o.Result, o.Err = s.Execute(ctx, c.Key, c.Args)
	return o
}
