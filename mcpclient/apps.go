package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// MCP Apps (the extension io.modelcontextprotocol/ui): a tool may name a
// view, a ui:// resource of its server holding an HTML document
// (AppMIMEType) that a host renders in a sandboxed frame, with the tool's
// input and result.
const (
	// AppsExtension is the extension's id: the key of its capability in
	// a client's (and a server's) capabilities' extensions.
	AppsExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of a view's resource.
	AppMIMEType = "text/html;profile=mcp-app"
)

// ErrNoView is returned by ToolView for a tool that names no view, or
// whose view's resource holds no HTML document of AppMIMEType.
var ErrNoView = errors.New("the tool has no view")

// ViewURI returns the ui:// URI of the view tool t names (_meta.ui.
// resourceUri, or the older _meta["ui/resourceUri"]), or "" when it names
// none.
func ViewURI(t *mcp.Tool) string { return aitools.ViewURI(t) }

// View is a tool's view: its resource as the server gave it.
type View struct {
	ServerID string
	Tool     string
	// URI is the view's ui:// URI.
	URI string
	// HTML is the document.
	HTML string
	// Meta is the _meta of the resource's content (else of the resource
	// as listed): under "ui", the view's csp (ViewCSP), permissions,
	// domain and prefersBorder.
	Meta map[string]any
}

// ViewCSP is what a view asks of its Content-Security-Policy
// (_meta.ui.csp): the origins it may connect to, load resources (scripts,
// styles, images, fonts, media) from, frame, and use as its base URI. A
// host allows no more than these.
type ViewCSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

// CSP returns what the view's _meta.ui.csp asks; entries that are not
// strings are left out.
func (v *View) CSP() ViewCSP {
	ui, _ := v.Meta["ui"].(map[string]any)
	csp, _ := ui["csp"].(map[string]any)
	list := func(k string) []string {
		a, _ := csp[k].([]any)
		var out []string
		for _, x := range a {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return ViewCSP{ConnectDomains: list("connectDomains"), ResourceDomains: list("resourceDomains"),
		FrameDomains: list("frameDomains"), BaseURIDomains: list("baseUriDomains")}
}

// views caches the views read by ToolView, by server and URI, each with
// the catalog (the server's lists) it was read under: a view is read
// again once the server's lists have been listed again.
type views struct {
	mu sync.Mutex
	m  map[viewKey]viewEntry
}

type viewKey struct{ server, uri string }

type viewEntry struct {
	cat  *catalog // the server's lists when read: its list version
	view View
}

// ToolView returns the view of tool name of server serverID: its URI,
// HTML and _meta, read from the server (resources/read) the first time
// and then kept until the server's lists are listed again. It returns an
// error wrapping ErrNoView when the tool names no view, or its resource
// holds no document of AppMIMEType, and the read's error when the read
// fails. The View is the caller's (its Meta is a copy).
func (m *Manager) ToolView(ctx context.Context, serverID, name string) (*View, error) {
	c, err := m.lookup(serverID)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	cat := c.cat
	c.mu.Unlock()
	var uri string
	for _, t := range cat.tools {
		if t.Name == name {
			uri = ViewURI(t)
			break
		}
	}
	if uri == "" {
		return nil, fmt.Errorf("mcp server %s: tool %q: %w", serverID, name, ErrNoView)
	}
	key := viewKey{serverID, uri}
	m.views.mu.Lock()
	e, ok := m.views.m[key]
	m.views.mu.Unlock()
	if ok && e.cat == cat {
		v := e.view
		v.Tool, v.Meta = name, cloneMeta(v.Meta)
		return &v, nil
	}
	res, err := m.ReadResource(ctx, serverID, uri)
	if err != nil {
		return nil, err
	}
	v := View{ServerID: serverID, Tool: name, URI: uri}
	found := false
	for _, rc := range res.Contents {
		if rc == nil || rc.URI != uri || !isAppMIME(rc.MIMEType) {
			continue
		}
		v.HTML, v.Meta, found = rc.Text, rc.Meta, true
		if v.HTML == "" && len(rc.Blob) > 0 {
			v.HTML = string(rc.Blob)
		}
		break
	}
	if !found {
		return nil, fmt.Errorf("mcp server %s: tool %q: resource %s holds no %s document: %w", serverID, name, uri, AppMIMEType, ErrNoView)
	}
	if v.Meta == nil {
		for _, r := range cat.resources {
			if r.URI == uri {
				v.Meta = r.Meta
				break
			}
		}
	}
	v.Meta = cloneMeta(v.Meta)
	m.views.mu.Lock()
	if m.views.m == nil {
		m.views.m = map[viewKey]viewEntry{}
	}
	// Keep the entries of the servers' current lists only.
	for k, old := range m.views.m {
		if k.server == serverID && old.cat != cat {
			delete(m.views.m, k)
		}
	}
	m.views.m[key] = viewEntry{cat: cat, view: v}
	m.views.mu.Unlock()
	out := v
	out.Meta = cloneMeta(v.Meta)
	return &out, nil
}

// forgetViews drops the cached views of server id (removed).
func (m *Manager) forgetViews(id string) {
	m.views.mu.Lock()
	defer m.views.mu.Unlock()
	for k := range m.views.m {
		if k.server == id {
			delete(m.views.m, k)
		}
	}
}

// isAppMIME reports whether a MIME type is AppMIMEType (parameters in any
// case and spacing).
func isAppMIME(t string) bool {
	base, params, _ := strings.Cut(t, ";")
	if !strings.EqualFold(strings.TrimSpace(base), "text/html") {
		return false
	}
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "profile") && strings.EqualFold(strings.Trim(strings.TrimSpace(v), `"`), "mcp-app") {
			return true
		}
	}
	return false
}

// cloneMeta copies a _meta map deeply (maps and slices), so that a caller
// may change what it gets.
func cloneMeta(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMeta(x)
	case []any:
		y := make([]any, len(x))
		for i := range x {
			y[i] = cloneValue(x[i])
		}
		return y
	}
	return v
}

// appsCapability is the extension's client capability: the view MIME
// types the host renders.
func appsCapability() map[string]any {
	return map[string]any{"mimeTypes": []any{AppMIMEType}}
}

// withApps returns extensions with the extension's capability added (a
// copy; extensions is not modified).
func withApps(extensions map[string]any) map[string]any {
	out := maps.Clone(extensions)
	if out == nil {
		out = map[string]any{}
	}
	out[AppsExtension] = appsCapability()
	return out
}
