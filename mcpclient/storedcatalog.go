package mcpclient

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalog is one server's lists: what its discovery (and the list_changed
// refreshes since) found or, marked Stale, what ServerOptions.Catalog gave
// before the server answered. Its slices and definitions are shared and
// must not be modified.
type Catalog struct {
	Tools             []*mcp.Tool
	Prompts           []*mcp.Prompt
	Resources         []*mcp.Resource
	ResourceTemplates []*mcp.ResourceTemplate
	// Known is false for a server whose lists nobody knows: never
	// discovered, and given no stored catalog.
	Known bool
	// Stale marks lists that came from ServerOptions.Catalog and that no
	// answer of the server has replaced yet.
	Stale bool
}

// Catalog returns the lists the Manager holds for server id, and false
// for an unknown id.
func (m *Manager) Catalog(id string) (Catalog, bool) {
	c, err := m.lookup(id)
	if err != nil {
		return Catalog{}, false
	}
	c.mu.Lock()
	cat := c.cat
	c.mu.Unlock()
	return Catalog{Tools: cat.tools, Prompts: cat.prompts, Resources: cat.resources, ResourceTemplates: cat.templates,
		Known: cat.known || cat.stale, Stale: cat.stale}, true
}

// storedCatalog is the catalog a server starts with: the stored lists of
// o, stale, or none.
func storedCatalog(o *Catalog) *catalog {
	if o == nil {
		return &catalog{}
	}
	// known stays false: a stale list decides nothing about what the
	// server has (see server.listed).
	return &catalog{tools: o.Tools, prompts: o.Prompts, resources: o.Resources, templates: o.ResourceTemplates, stale: true}
}

// toolsSize is a catalog's tools' JSON size, computed once.
type toolsSize struct {
	once  sync.Once
	bytes int
}

// ToolsSize returns the size in bytes of the JSON of server id's tool
// definitions, as it listed them (the MCP definitions: name, title,
// description, schemas, annotations): what offering them all to a model
// costs, before a provider's own wrapping; aitools.EstimateTokens turns
// it into tokens. It is computed once per catalog. ok is false for an
// unknown id.
func (m *Manager) ToolsSize(id string) (bytes int, ok bool) {
	c, err := m.lookup(id)
	if err != nil {
		return 0, false
	}
	c.mu.Lock()
	cat := c.cat
	if cat.size == nil {
		// A catalog is replaced, never mutated, but for this cache.
		cat.size = &toolsSize{}
	}
	size := cat.size
	c.mu.Unlock()
	size.once.Do(func() { size.bytes = ToolsBytes(cat.tools) })
	return size.bytes, true
}

// ToolsBytes returns the summed size of the JSON of each of tools.
func ToolsBytes(tools []*mcp.Tool) int {
	n := 0
	for _, t := range tools {
		if b, err := json.Marshal(t); err == nil {
			n += len(b)
		}
	}
	return n
}

// ToolDefinition returns tool name of server id as the server's catalog
// holds it, and whether that catalog is stale (stored, not listed again
// yet). The definition is shared, not to be modified: the same pointer
// until the server's tools are listed again, so that a caller may key
// what it derives from it (a fingerprint, say) on it. ok is false for an
// unknown server or tool.
func (m *Manager) ToolDefinition(id, name string) (t *mcp.Tool, stale, ok bool) {
	c, err := m.lookup(id)
	if err != nil {
		return nil, false, false
	}
	c.mu.Lock()
	cat := c.cat
	c.mu.Unlock()
	for _, t := range cat.tools {
		if t.Name == name {
			return t, cat.stale, true
		}
	}
	return nil, cat.stale, false
}
