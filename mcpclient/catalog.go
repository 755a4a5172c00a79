package mcpclient

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Filter selects servers. Each criterion lists the values it accepts;
// an empty criterion accepts everything, and criteria are ANDed. The zero
// Filter selects every server.
type Filter struct {
	ServerID   []string
	ServerName []string
	State      []State
}

func (f Filter) match(c *server, state State) bool {
	return (len(f.ServerID) == 0 || slices.Contains(f.ServerID, c.ID())) &&
		(len(f.ServerName) == 0 || slices.Contains(f.ServerName, c.opts.Name)) &&
		(len(f.State) == 0 || slices.Contains(f.State, state))
}

// Tool is a tool of one server. The embedded definition is a copy; its
// schemas are shared and must not be modified.
type Tool struct {
	mcp.Tool
	ServerID string `json:"serverId"`
	// Stale marks an entry of a stored catalog (ServerOptions.Catalog)
	// that the server has not listed again yet.
	Stale bool `json:"stale,omitempty"`
}

// Prompt is a prompt of one server.
type Prompt struct {
	mcp.Prompt
	ServerID string `json:"serverId"`
	Stale    bool   `json:"stale,omitempty"` // as Tool.Stale
}

// Resource is a resource of one server.
type Resource struct {
	mcp.Resource
	ServerID string `json:"serverId"`
	Stale    bool   `json:"stale,omitempty"` // as Tool.Stale
}

// ResourceTemplate is a resource template of one server.
type ResourceTemplate struct {
	mcp.ResourceTemplate
	ServerID string `json:"serverId"`
	Stale    bool   `json:"stale,omitempty"` // as Tool.Stale
}

// catalogs returns the catalog of every server f selects, with its id.
func (m *Manager) catalogs(f Filter) (ids []string, cats []*catalog) {
	for _, c := range m.snapshot() {
		c.mu.Lock()
		state, cat := c.state, c.cat
		c.mu.Unlock()
		if f.match(c, state) {
			ids = append(ids, c.ID())
			cats = append(cats, cat)
		}
	}
	return ids, cats
}

// ListTools returns the tools of the servers f selects, each tagged with
// its server id, in registration order.
func (m *Manager) ListTools(f Filter) []Tool {
	return tagged(m, f, func(c *catalog) []*mcp.Tool { return c.tools },
		func(t *mcp.Tool, id string, stale bool) Tool { return Tool{Tool: *t, ServerID: id, Stale: stale} })
}

// ListPrompts returns the prompts of the servers f selects.
func (m *Manager) ListPrompts(f Filter) []Prompt {
	return tagged(m, f, func(c *catalog) []*mcp.Prompt { return c.prompts },
		func(p *mcp.Prompt, id string, stale bool) Prompt {
			return Prompt{Prompt: *p, ServerID: id, Stale: stale}
		})
}

// ListResources returns the resources of the servers f selects.
func (m *Manager) ListResources(f Filter) []Resource {
	return tagged(m, f, func(c *catalog) []*mcp.Resource { return c.resources },
		func(r *mcp.Resource, id string, stale bool) Resource {
			return Resource{Resource: *r, ServerID: id, Stale: stale}
		})
}

// ListResourceTemplates returns the resource templates of the servers f
// selects.
func (m *Manager) ListResourceTemplates(f Filter) []ResourceTemplate {
	return tagged(m, f, func(c *catalog) []*mcp.ResourceTemplate { return c.templates },
		func(t *mcp.ResourceTemplate, id string, stale bool) ResourceTemplate {
			return ResourceTemplate{ResourceTemplate: *t, ServerID: id, Stale: stale}
		})
}

// tagged lists one kind of item of the servers f selects, each copied and
// tagged with its server id.
func tagged[E, T any](m *Manager, f Filter, items func(*catalog) []*E, tag func(*E, string, bool) T) []T {
	ids, cats := m.catalogs(f)
	var out []T
	for i, cat := range cats {
		for _, it := range items(cat) {
			out = append(out, tag(it, ids[i], cat.stale))
		}
	}
	return out
}

// tool returns the definition of a tool in the server's catalog, or nil
// (also for a stale catalog: its annotations and schemas are not the
// server's word yet).
func (c *server) tool(name string) *mcp.Tool {
	c.mu.Lock()
	cat := c.cat
	c.mu.Unlock()
	if cat.stale {
		return nil
	}
	for _, t := range cat.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// listed reports whether the server's catalog has the tool (method
// "tools/call") or the prompt ("prompts/get") name; for a server never
// discovered (whose catalog nobody knows, as with a library user's that
// calls without discovering), whether the name is given at all.
func (c *server) listed(method, name string) bool {
	c.mu.Lock()
	cat := c.cat
	c.mu.Unlock()
	if !cat.known {
		return true
	}
	switch method {
	case "tools/call":
		return slices.ContainsFunc(cat.tools, func(t *mcp.Tool) bool { return t.Name == name })
	case "prompts/get":
		return slices.ContainsFunc(cat.prompts, func(p *mcp.Prompt) bool { return p.Name == name })
	}
	return false
}

// excludedTool logs a tool that toolfilter.Valid leaves out of a
// tools/list answer, as go-sdk's ClientSession.ListTools does.
func (c *server) excludedTool(t *mcp.Tool, err error) {
	if t == nil {
		c.m.logger.Error("excluding nil tool from tools/list", "server", c.ID())
		return
	}
	c.m.logger.Error("excluding tool from tools/list", "server", c.ID(), "tool", t.Name, "error", err)
}
