package mcpclient

import "github.com/agentmcp/agentmcp/aitools"

// SearchTools returns up to limit tools of the servers f selects that
// match query, best first, with their scores (aitools.Index.Search; zero
// or less means 10). The index behind it covers every server's tools and
// follows the catalogs as AITools does: a tool is read again only when its
// definition changed.
func (m *Manager) SearchTools(f Filter, query string, limit int) []aitools.Match {
	all := m.AITools(Filter{})
	idx := m.aiTools.index.Update(all)
	if len(f.ServerID) == 0 && len(f.ServerName) == 0 && len(f.State) == 0 {
		return idx.Search(query, limit)
	}
	sel := m.AITools(f)
	return idx.SearchFunc(query, limit, func(t *aitools.Tool) bool {
		_, ok := sel.Get(t.Key)
		return ok
	})
}

// SearchMode returns the tools of the servers f selects in search mode
// (aitools.Index.SearchMode): the meta-tools search_tools and call_tool,
// plus the tools opts marks always loaded, for a model that should find
// its tools by search rather than be sent every definition. It shares
// SearchTools' index. Call it again for each request to the model, as
// AITools: an unchanged catalog costs little.
func (m *Manager) SearchMode(f Filter, opts *aitools.SearchModeOptions) *aitools.ToolSet {
	m.aiTools.index.Update(m.AITools(Filter{}))
	return m.aiTools.index.SearchMode(m.AITools(f), opts)
}
