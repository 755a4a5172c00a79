package gateway

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps: a tool's view is a ui:// resource of its server, named in the
// tool's _meta.ui.resourceUri (or the older _meta["ui/resourceUri"]). Two
// servers may well name theirs alike (ui://widget/view.html), so the
// gateway gives each server's ui:// resources URIs of their own,
// ui://{server id}/{the URI after ui://}, in its resources and in its
// tools' _meta, and reads the server's own URI when a client reads one of
// them. The server id (agent.NormalizeServerID) has no "/", so the first
// segment tells the server and the rest its URI.

const uiScheme = "ui://"

// viewURI returns the gateway's URI of ui:// URI uri of server serverID;
// any other URI is its own.
func viewURI(serverID, uri string) string {
	if !strings.HasPrefix(uri, uiScheme) {
		return uri
	}
	return uiScheme + serverID + "/" + strings.TrimPrefix(uri, uiScheme)
}

// upstreamViewURI returns the server's own URI of the gateway's ui:// URI
// uri of server serverID, and false when uri is not such a URI.
func upstreamViewURI(serverID, uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, uiScheme+serverID+"/")
	if !ok {
		return "", false
	}
	return uiScheme + rest, true
}

// viewMeta returns a tool's _meta with the ui:// URI of its view made the
// gateway's (a copy; meta is shared and left as it is), or meta itself
// when it names no view.
func viewMeta(serverID string, meta mcp.Meta) mcp.Meta {
	ui, _ := meta["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	legacy, _ := meta["ui/resourceUri"].(string)
	if !strings.HasPrefix(uri, uiScheme) && !strings.HasPrefix(legacy, uiScheme) {
		return meta
	}
	out := make(mcp.Meta, len(meta))
	for k, v := range meta {
		out[k] = v
	}
	if strings.HasPrefix(uri, uiScheme) {
		u := make(map[string]any, len(ui))
		for k, v := range ui {
			u[k] = v
		}
		u["resourceUri"] = viewURI(serverID, uri)
		out["ui"] = u
	}
	if strings.HasPrefix(legacy, uiScheme) {
		out["ui/resourceUri"] = viewURI(serverID, legacy)
	}
	return out
}

// viewContents returns the contents of a read of server serverID with
// their ui:// URIs made the gateway's (a copy when any is).
func viewContents(serverID string, contents []*mcp.ResourceContents) []*mcp.ResourceContents {
	var out []*mcp.ResourceContents
	for i, c := range contents {
		if c == nil || !strings.HasPrefix(c.URI, uiScheme) {
			continue
		}
		if out == nil {
			out = append([]*mcp.ResourceContents(nil), contents...)
		}
		cp := *c
		cp.URI = viewURI(serverID, c.URI)
		out[i] = &cp
	}
	if out == nil {
		return contents
	}
	return out
}
