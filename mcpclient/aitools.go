package mcpclient

import (
	"context"
	"slices"
	"sync"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// aiToolsCache is what AITools keeps on the Manager: the cache of
// everything derived from tools, and the catalogs the last ToolSet was
// built from, so that an unchanged catalog costs no more than comparing
// pointers.
type aiToolsCache struct {
	cache *aitools.Cache
	index *aitools.Index // over every server's tools; see SearchTools

	// mu guards the fields below.
	mu   sync.Mutex
	ids  []string   // server ids, in registration order
	cats []*catalog // their catalogs (replaced, never mutated)
	set  *aitools.ToolSet
}

// newAIToolsCache returns the cache behind AITools, which calls tools
// through m.CallTool. New calls it once.
func newAIToolsCache(m *Manager) *aiToolsCache {
	return &aiToolsCache{cache: aitools.NewCache(func(ctx context.Context, serverID, name string, args map[string]any) (*mcp.CallToolResult, error) {
		return m.CallTool(ctx, serverID, name, args, nil)
	}, &aitools.CacheOptions{Logger: m.logger}), index: aitools.NewIndex(nil)}
}

// AITools returns the tools of the servers f selects as tools an LLM can
// call (the seed's getAITools): each with a provider-safe key, its
// description, title and schemas, and an Execute that validates the
// arguments and calls the tool on the server's current connection. See
// package aitools for the keys and their stability.
//
// Keys are assigned over the tools of every registered server, whatever
// f selects, so a tool's key does not depend on the filter. Every server
// contributes the catalog the Manager holds for it, whatever its state (a
// closed connection holds none). ListTools stays the raw catalog.
//
// What AITools derives from a tool is cached on the Manager while the tool
// is unchanged: on an unchanged catalog, AITools does no schema work and
// returns the same ToolSet (or, with a filter, a selection of it).
func (m *Manager) AITools(f Filter) *aitools.ToolSet {
	servers := m.snapshot()
	ids := make([]string, len(servers))
	cats := make([]*catalog, len(servers))
	filtered := len(f.ServerID) > 0 || len(f.ServerName) > 0 || len(f.State) > 0
	var selected map[string]bool
	if filtered {
		selected = map[string]bool{}
	}
	for i, c := range servers {
		c.mu.Lock()
		state, cat := c.state, c.cat
		c.mu.Unlock()
		ids[i], cats[i] = c.ID(), cat
		if filtered && f.match(c, state) {
			selected[c.ID()] = true
		}
	}
	set := m.aiTools.build(ids, cats)
	if !filtered {
		return set
	}
	return set.Select(func(t *aitools.Tool) bool { return selected[t.ServerID] })
}

// build returns the ToolSet of the catalogs of the servers ids.
func (a *aiToolsCache) build(ids []string, cats []*catalog) *aitools.ToolSet {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.set != nil && slices.Equal(a.ids, ids) && slices.Equal(a.cats, cats) {
		return a.set
	}
	n := 0
	for _, cat := range cats {
		n += len(cat.tools)
	}
	all := make([]aitools.MCPTool, 0, n)
	for i, cat := range cats {
		for _, t := range cat.tools {
			all = append(all, aitools.MCPTool{ServerID: ids[i], Def: t, Stale: cat.stale})
		}
	}
	a.set = a.cache.Build(all)
	a.ids, a.cats = ids, cats
	return a.set
}
