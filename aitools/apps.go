package aitools

import (
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ViewURI returns the ui:// URI of the MCP Apps view that tool def names
// (_meta.ui.resourceUri, or the older _meta["ui/resourceUri"]), or "" when
// it names none. A host renders the view (mcpclient.Manager.ToolView reads
// it) with the tool's input and result.
func ViewURI(def *mcp.Tool) string {
	if def == nil {
		return ""
	}
	var uri string
	if ui, ok := def.Meta["ui"].(map[string]any); ok {
		uri, _ = ui["resourceUri"].(string)
	}
	if uri == "" {
		uri, _ = def.Meta["ui/resourceUri"].(string)
	}
	if !strings.HasPrefix(uri, "ui://") {
		return ""
	}
	return uri
}

// View returns the ui:// URI of the tool's view (ViewURI), "" when it has
// none: a Go host renders the view after a call of the tool.
func (t *Tool) View() string { return ViewURI(t.Def) }

// AppOnly reports whether the tool is meant for views alone: its
// _meta.ui.visibility lists "app" but not "model". A host may leave such
// a tool out of what it offers a model.
func (t *Tool) AppOnly() bool {
	if t.Def == nil {
		return false
	}
	ui, _ := t.Def.Meta["ui"].(map[string]any)
	vis, ok := ui["visibility"].([]any)
	if !ok {
		return false
	}
	return slices.Contains(vis, any("app")) && !slices.Contains(vis, any("model"))
}
