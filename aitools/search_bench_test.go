package aitools_test

import (
	"testing"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/internal/searcheval"
)

// BenchmarkSearch measures one query over 10,000 tools (the evaluation's
// real catalogs repeated under other server ids), the evaluation's
// queries in turn; and indexing them, from scratch and after one
// server's tools were replaced. agentmcp-bench reports the p50 of a
// query as aitools_search_query_us_p50.
func BenchmarkSearch(b *testing.B) {
	cat := searcheval.Scaled(10_000)
	queries := searcheval.Queries()
	set := aitools.NewCache(okCall, nil).Build(cat)
	b.Run("query", func(b *testing.B) {
		idx := aitools.NewIndex(nil).Update(set)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			idx.Search(queries[i%len(queries)].Text, aitools.DefaultSearchResults)
			i++
		}
	})
	b.Run("index", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			aitools.NewIndex(nil).Update(set)
		}
	})
	b.Run("update-one-server", func(b *testing.B) {
		changed := make([]aitools.MCPTool, len(cat))
		copy(changed, cat)
		for i, t := range changed {
			if t.ServerID == "github-7" {
				def := *t.Def
				changed[i].Def = &def
			}
		}
		cache := aitools.NewCache(okCall, nil)
		a, c := cache.Build(cat), aitools.NewCache(okCall, nil).Build(changed)
		idx := aitools.NewIndex(nil).Update(a)
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if n++; n%2 == 0 {
				idx.Update(a)
			} else {
				idx.Update(c)
			}
		}
	})
}
