package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/policy"
)

// catalog is what the gateway's MCP server holds, by gateway name, with
// what each entry was made from, so that a sync changes only what changed
// (and clients get list_changed only then).
type catalog struct {
	tools     map[string]toolEntry
	prompts   map[string]promptEntry
	resources map[string]itemEntry // by URI
	templates map[string]itemEntry // by URI template
}

type toolEntry struct {
	serverID, name, label string
	def                   *mcp.Tool // the upstream definition (shared, not modified)
	// headerParams: the input schema may bind arguments to request
	// headers (x-mcp-header), which go-sdk checks; the gateway's fast
	// path leaves such a tool's calls to go-sdk.
	headerParams bool
}

type promptEntry struct {
	serverID, name, label string
	def                   mcp.Prompt
}

type itemEntry struct {
	serverID, label string
	def             any // mcp.Resource or mcp.ResourceTemplate
}

func (c *catalog) init() {
	c.tools = map[string]toolEntry{}
	c.prompts = map[string]promptEntry{}
	c.resources = map[string]itemEntry{}
	c.templates = map[string]itemEntry{}
}

// PromptName returns the gateway name of prompt name of server serverID:
// "serverID.name". Server ids (agent.NormalizeServerID) have no ".", so
// the name is unique and tells its server.
func PromptName(serverID, name string) string { return serverID + "." + name }

// exposed reports whether Options.Expose lets tool (or, with tool "", the
// server) through.
func (g *Gateway) exposed(serverID, tool string) bool {
	if g.opts.Expose == nil {
		return true
	}
	if !g.opts.Expose(serverID, "") {
		return false
	}
	return tool == "" || g.opts.Expose(serverID, tool)
}

// sync brings the MCP server's catalogs in line with the agent's: the
// items of the servers that are ready and exposed. Tools are named by
// their AITools keys, assigned over every server of the agent, so that a
// tool keeps its name while other servers come and go.
func (g *Gateway) sync() {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return
	}
	ready := map[string]string{} // server id -> label
	for _, info := range g.a.Servers() {
		if listable(info) && g.exposed(info.ID, "") {
			label := info.Name
			if label == "" || label == info.ID {
				label = info.ID
			} else {
				label = fmt.Sprintf("%s (%s)", info.Name, info.ID)
			}
			ready[info.ID] = label
		}
	}

	// Tools.
	tools := map[string]toolEntry{}
	for t := range g.a.ToolSet(policy.Gateway, mcpclient.Filter{}).All() { // less what the policy denies the gateway
		label, ok := ready[t.ServerID]
		if !ok || !g.exposed(t.ServerID, t.Name) {
			continue
		}
		tools[t.Key] = toolEntry{serverID: t.ServerID, name: t.Name, label: label, def: t.Def,
			headerParams: bytes.Contains(t.InputSchemaJSON(), []byte("x-mcp-header"))}
		if old, ok := g.cat.tools[t.Key]; ok && sameTool(old, tools[t.Key]) {
			continue
		}
		if err := g.addTool(t, label); err != nil {
			g.logger.Warn("mcp gateway: tool not exposed", "server", t.ServerID, "tool", t.Name, "error", err)
			delete(tools, t.Key)
		}
	}
	if gone := removed(g.cat.tools, tools); len(gone) > 0 {
		g.srv.RemoveTools(gone...)
	}
	g.cat.tools = tools

	// Prompts.
	prompts := map[string]promptEntry{}
	for _, p := range g.a.ListPrompts(mcpclient.Filter{}) {
		label, ok := ready[p.ServerID]
		if !ok {
			continue
		}
		name := PromptName(p.ServerID, p.Name)
		if _, dup := prompts[name]; dup {
			continue
		}
		e := promptEntry{serverID: p.ServerID, name: p.Name, label: label, def: p.Prompt}
		prompts[name] = e
		if old, ok := g.cat.prompts[name]; ok && samePrompt(old, e) {
			continue
		}
		def := p.Prompt
		def.Name = name
		def.Title = titled(p.Title, p.Name, label)
		def.Description = described(p.Description, label)
		g.srv.AddPrompt(&def, g.getPrompt(p.ServerID, p.Name))
	}
	if gone := removed(g.cat.prompts, prompts); len(gone) > 0 {
		g.srv.RemovePrompts(gone...)
	}
	g.cat.prompts = prompts

	// Resources, under their own URIs: the first server to list a URI
	// serves it. ui:// URIs are made each server's own (apps.go).
	resources := map[string]itemEntry{}
	for _, r := range g.a.ListResources(mcpclient.Filter{}) {
		label, ok := ready[r.ServerID]
		if !ok {
			continue
		}
		uri := viewURI(r.ServerID, r.URI)
		if _, dup := resources[uri]; dup {
			continue
		}
		e := itemEntry{serverID: r.ServerID, label: label, def: r.Resource}
		resources[uri] = e
		if old, ok := g.cat.resources[uri]; ok && sameItem(old, e) {
			continue
		}
		def := r.Resource
		def.URI = uri
		def.Title = titled(r.Title, r.Name, label)
		def.Description = described(r.Description, label)
		g.srv.AddResource(&def, g.readResource(r.ServerID))
	}
	if gone := removed(g.cat.resources, resources); len(gone) > 0 {
		g.srv.RemoveResources(gone...)
	}
	g.cat.resources = resources

	// Resource templates, likewise.
	templates := map[string]itemEntry{}
	for _, t := range g.a.ListResourceTemplates(mcpclient.Filter{}) {
		label, ok := ready[t.ServerID]
		if !ok {
			continue
		}
		if _, dup := templates[t.URITemplate]; dup {
			continue
		}
		e := itemEntry{serverID: t.ServerID, label: label, def: t.ResourceTemplate}
		templates[t.URITemplate] = e
		if old, ok := g.cat.templates[t.URITemplate]; ok && sameItem(old, e) {
			continue
		}
		def := t.ResourceTemplate
		def.Title = titled(t.Title, t.Name, label)
		def.Description = described(t.Description, label)
		if err := addTemplate(g.srv, &def, g.readResource(t.ServerID)); err != nil {
			g.logger.Warn("mcp gateway: resource template not exposed", "server", t.ServerID, "error", err)
			delete(templates, t.URITemplate)
		}
	}
	if gone := removed(g.cat.templates, templates); len(gone) > 0 {
		g.srv.RemoveResourceTemplates(gone...)
	}
	g.cat.templates = templates
}

// addTool adds the tool t under its key. go-sdk panics on a definition it
// cannot serve (an input schema that is not an object, say): such a tool
// is left out.
func (g *Gateway) addTool(t *aitools.Tool, label string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	def := &mcp.Tool{
		Meta:         viewMeta(t.ServerID, t.Def.Meta),
		Annotations:  t.Def.Annotations,
		Description:  described(t.Description, label),
		Icons:        t.Def.Icons,
		InputSchema:  t.InputSchemaJSON(),
		Name:         t.Key,
		Title:        titled(t.Title, t.Name, label),
		OutputSchema: nil,
	}
	if out := t.OutputSchemaJSON(); out != nil {
		def.OutputSchema = out
	}
	g.srv.AddTool(def, g.callTool(t.ServerID, t.Name))
	return nil
}

// addTemplate adds a resource template; go-sdk panics on a template it
// cannot parse.
func addTemplate(srv *mcp.Server, t *mcp.ResourceTemplate, h mcp.ResourceHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	srv.AddResourceTemplate(t, h)
	return nil
}

// titled is the title of an item: its own (else its name), and the server
// it comes from.
func titled(title, name, label string) string {
	if title == "" {
		title = name
	}
	return title + " — " + label
}

// described is the description of an item, which names its server.
func described(desc, label string) string {
	if desc == "" {
		return "From MCP server " + label + "."
	}
	return "From MCP server " + label + ": " + desc
}

func samePrompt(a, b promptEntry) bool {
	if a.serverID != b.serverID || a.name != b.name || a.label != b.label ||
		a.def.Title != b.def.Title || a.def.Description != b.def.Description ||
		len(a.def.Arguments) != len(b.def.Arguments) || !reflect.DeepEqual(a.def.Meta, b.def.Meta) {
		return false
	}
	for i := range a.def.Arguments {
		if *a.def.Arguments[i] != *b.def.Arguments[i] {
			return false
		}
	}
	return true
}

func sameItem(a, b itemEntry) bool {
	if a.serverID != b.serverID || a.label != b.label {
		return false
	}
	switch x := a.def.(type) {
	case mcp.Resource:
		y, ok := b.def.(mcp.Resource)
		return ok && x.Name == y.Name && x.Title == y.Title && x.Description == y.Description &&
			x.MIMEType == y.MIMEType && x.Size == y.Size
	case mcp.ResourceTemplate:
		y, ok := b.def.(mcp.ResourceTemplate)
		return ok && x.Name == y.Name && x.Title == y.Title && x.Description == y.Description &&
			x.MIMEType == y.MIMEType
	}
	return false
}

// sameTool reports whether two entries make the same exposed tool: a
// rediscovery brings new definitions of the same tools.
func sameTool(a, b toolEntry) bool {
	if a.serverID != b.serverID || a.name != b.name || a.label != b.label {
		return false
	}
	if a.def == b.def {
		return true
	}
	x, err1 := json.Marshal(a.def)
	y, err2 := json.Marshal(b.def)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// removed returns the keys of old that cur no longer has.
func removed[V any](old, cur map[string]V) []string {
	var gone []string
	for k := range old {
		if _, ok := cur[k]; !ok {
			gone = append(gone, k)
		}
	}
	return gone
}

// listable reports whether the gateway lists a server's catalog: a ready
// server's, or the stored one of a server of a woken agent while its
// connection is being restored or retried (a call to one of its tools
// connects first).
func listable(info mcpclient.ServerInfo) bool {
	switch info.State {
	case mcpclient.StateReady:
		return true
	case mcpclient.StateAuthenticating, mcpclient.StateNotConnected:
		return false
	}
	return info.CatalogStale
}
