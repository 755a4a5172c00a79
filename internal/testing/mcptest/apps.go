package mcptest

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AppsView is the ui:// URI of an AppsServer's view.
const AppsView = "ui://widget/view.html"

// AppsServer is an MCP server with an MCP Apps view, in the extension's
// shapes (io.modelcontextprotocol/ui):
//
//   - tool "show" names the view (_meta.ui.resourceUri AppsView) and
//     returns "shown: <text>" with structuredContent {text};
//   - tool "second" (visibility model and app) returns "second: <text>";
//   - tool "hidden" (_meta.ui.visibility ["model"]) is not the view's to call;
//   - tool "viewonly" (_meta.ui.visibility ["app"]) is the view's alone;
//   - tool "caps" returns the client capabilities' extensions of its call
//     (JSON);
//   - resource AppsView, of MIME type text/html;profile=mcp-app, is HTML
//     with CSP in its content's _meta.ui.csp.
type AppsServer struct {
	*mcp.Server

	// Reads counts the reads of the view's resource.
	Reads atomic.Int64

	mu     sync.Mutex
	calls  []string // the tools called, in order
	change chan struct{}
}

// NewAppsServer returns an AppsServer named name whose view is html, with
// csp as its _meta.ui.csp (nil: none).
func NewAppsServer(name, html string, csp map[string]any) *AppsServer {
	s := &AppsServer{
		Server: mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil),
		change: make(chan struct{}, 1),
	}
	type textArgs struct {
		Text string `json:"text,omitempty"`
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "show", Description: "Shows its text in a view.",
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": AppsView}}},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			s.called("show")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "shown: " + a.Text}},
				StructuredContent: map[string]any{"text": a.Text}}, nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "second", Description: "The view's second tool.",
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"model", "app"}}}},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			s.called("second")
			return text("second: " + a.Text), nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "hidden", Description: "For the model only.",
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"model"}}}},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			s.called("hidden")
			return text("hidden"), nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "viewonly", Description: "For the view only.",
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			s.called("viewonly")
			return text("viewonly"), nil, nil
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "caps", Description: "The client's extensions."},
		func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			var ext map[string]any
			if caps := req.ClientCapabilities(); caps != nil {
				ext = caps.Extensions
			}
			b, _ := json.Marshal(ext)
			return text(string(b)), nil, nil
		})
	meta := mcp.Meta{}
	if csp != nil {
		meta["ui"] = map[string]any{"csp": csp}
	}
	s.AddResource(&mcp.Resource{URI: AppsView, Name: "view", MIMEType: "text/html;profile=mcp-app"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			s.Reads.Add(1)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI,
				MIMEType: "text/html;profile=mcp-app", Text: html, Meta: meta}}}, nil
		})
	return s
}

func (s *AppsServer) called(tool string) {
	s.mu.Lock()
	s.calls = append(s.calls, tool)
	s.mu.Unlock()
	select {
	case s.change <- struct{}{}:
	default:
	}
}

// Calls returns the tools called so far, in order.
func (s *AppsServer) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Changed receives a value after a call (at most one waits).
func (s *AppsServer) Changed() <-chan struct{} { return s.change }
