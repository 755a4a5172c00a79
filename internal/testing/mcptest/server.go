// Package mcptest provides MCP servers for tests: an in-process go-sdk
// server with a known catalog, and HTTP hosting for it on 127.0.0.1 in every
// protocol era and transport, with faults on demand (status codes, forgotten
// sessions, a stop and a restart on the same port).
package mcptest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is an MCP server with a small, known catalog:
//
//   - tools "echo" (read-only), "add" (idempotent), "increment" (neither:
//     it counts its calls), "slow" (blocks until released or cancelled),
//     "progress" (sends Steps progress notifications), "fail" (returns a
//     tool error);
//   - prompt "greet"; resource "test://static"; template "test://items/{id}".
//
// AddTool and RemoveTool change the catalog, which makes the server send
// tools/list_changed.
type Server struct {
	*mcp.Server

	// Increments counts calls of "increment".
	Increments atomic.Int64
	// SlowStarted receives a value when a call of "slow" starts;
	// SlowCancelled when one ends because its context was cancelled.
	SlowStarted   chan struct{}
	SlowCancelled chan struct{}

	mu      sync.Mutex
	release chan struct{} // closed by ReleaseSlow
}

// EchoArgs are the arguments of "echo".
type EchoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// AddArgs are the arguments of "add".
type AddArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

// ProgressArgs are the arguments of "progress".
type ProgressArgs struct {
	Steps int `json:"steps"`
}

type empty struct{}

// NewServer returns a Server named name.
func NewServer(name string) *Server {
	s := &Server{
		Server:        mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, &mcp.ServerOptions{Instructions: "Test server " + name + "."}),
		SlowStarted:   make(chan struct{}, 16),
		SlowCancelled: make(chan struct{}, 16),
		release:       make(chan struct{}),
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "echo", Description: "Echoes its text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a EchoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "add", Description: "Adds two integers.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a AddArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(a.A + a.B)), nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "increment", Description: "Counts its calls."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(s.Increments.Add(1))), nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "slow", Description: "Blocks until released."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			s.SlowStarted <- struct{}{}
			s.mu.Lock()
			release := s.release
			s.mu.Unlock()
			select {
			case <-release:
				return text("released"), nil, nil
			case <-ctx.Done():
				s.SlowCancelled <- struct{}{}
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "progress", Description: "Reports progress."},
		func(ctx context.Context, req *mcp.CallToolRequest, a ProgressArgs) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= a.Steps && token != nil; i++ {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: float64(i), Total: float64(a.Steps), Message: fmt.Sprintf("step %d", i)})
				if err != nil {
					return nil, nil, err
				}
			}
			return text(fmt.Sprintf("done in %d steps", a.Steps)), nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}, nil, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://static", Name: "static", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "static content"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item"}}}, nil
		})
	return s
}

// AddTool adds a tool named name that returns its name.
func (s *Server) AddTool(name string) {
	mcp.AddTool(s.Server, &mcp.Tool{Name: name, Description: "Added later."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text(name), nil, nil
		})
}

// ReleaseSlow lets every pending and future call of "slow" return.
func (s *Server) ReleaseSlow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

// ForgetSessions closes every session on the server side, as a server
// that expired them would; later requests with their ids get 404.
func (s *Server) ForgetSessions() int {
	n := 0
	for ss := range s.Sessions() {
		ss.Close()
		n++
	}
	return n
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
