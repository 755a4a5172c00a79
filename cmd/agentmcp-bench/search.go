package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/internal/searcheval"
)

// searchTools is the size of the catalog the search latency is measured
// on.
const searchTools = 10_000

func noCall(context.Context, string, string, map[string]any) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

// definitionBytes is the size of a tool's definition as an adapter sends
// it: key, description and input schema, as JSON.
func definitionBytes(t *aitools.Tool) int {
	b, _ := json.Marshal(map[string]any{"name": t.Key, "description": t.Description, "input_schema": t.InputSchema})
	return len(b)
}

// runSearch reports the retrieval evaluation of aitools' tool search
// (recall@5 and MRR of each ranker), the latency of one query over
// 10,000 tools, and the definition tokens search mode sends against the
// whole catalog.
func runSearch(_ context.Context, c *config) (string, []figure, error) {
	cat := searcheval.Catalog()
	queries := searcheval.Queries()
	if err := searcheval.Check(cat, queries); err != nil {
		return "", nil, err
	}
	set := aitools.NewCache(noCall, nil).Build(cat)

	rt := newTable("ranker", "recall@5", "MRR", "misses")
	var def searcheval.Result
	for _, r := range []aitools.Ranker{aitools.RankBM25, aitools.RankBM25F, aitools.RankBoosted} {
		res, err := searcheval.Evaluate(aitools.NewIndex(&aitools.IndexOptions{Ranker: r}).Update(set), queries)
		if err != nil {
			return "", nil, err
		}
		if r == aitools.NewIndex(nil).Ranker() {
			def = res
		}
		rt.add(r.String(), fmt.Sprintf("%.3f", res.RecallAt5), fmt.Sprintf("%.3f", res.MRR), fmt.Sprint(len(res.Misses)))
	}

	// Tokens: every definition of the catalog, against the meta-tools
	// plus one search's answer (the mean over the queries), both
	// estimated at 4 bytes a token.
	all := 0
	for t := range set.All() {
		all += definitionBytes(t)
	}
	idx := aitools.NewIndex(nil)
	mode := idx.SearchMode(set, nil)
	meta := 0
	for t := range mode.All() {
		meta += definitionBytes(t)
	}
	answers := 0
	for _, q := range queries {
		res, err := mode.Execute(context.Background(), aitools.SearchToolKey, json.RawMessage(fmt.Sprintf(`{"query":%q}`, q.Text)))
		if err != nil {
			return "", nil, err
		}
		answers += len(aitools.ResultText(res))
	}
	withSearch := float64(meta) + float64(answers)/float64(len(queries))

	// Latency over 10,000 tools.
	big := searcheval.Scaled(searchTools)
	var p50s, p99s, builds, updates []float64
	for rep := range c.reps {
		progress(c.stderr, "search: repetition %d/%d", rep+1, c.reps)
		bigSet := aitools.NewCache(noCall, nil).Build(big)
		t0 := time.Now()
		bigIdx := aitools.NewIndex(nil).Update(bigSet)
		builds = append(builds, time.Since(t0).Seconds())
		// One server's tools replaced, as after its list_changed.
		changed := slices.Clone(big)
		for i, t := range changed {
			if t.ServerID == "github-7" {
				def := *t.Def
				changed[i].Def = &def
			}
		}
		changedSet := aitools.NewCache(noCall, nil).Build(changed)
		t0 = time.Now()
		bigIdx.Update(changedSet)
		updates = append(updates, time.Since(t0).Seconds())
		var ds []time.Duration
		for range 10 {
			for _, q := range queries {
				t0 := time.Now()
				m := bigIdx.Search(q.Text, aitools.DefaultSearchResults)
				ds = append(ds, time.Since(t0))
				if len(m) == 0 {
					return "", nil, fmt.Errorf("query %q found nothing among %d tools", q.Text, searchTools)
				}
			}
		}
		slices.Sort(ds)
		p50s = append(p50s, float64(percentile(ds, 50).Nanoseconds())/1e3)
		p99s = append(p99s, float64(percentile(ds, 99).Nanoseconds())/1e3)
	}
	lt := newTable("over 10,000 tools", "value")
	lt.add("query p50 (µs)", fmt.Sprintf("%.1f", median(p50s)))
	lt.add("query p99 (µs)", fmt.Sprintf("%.1f", median(p99s)))
	lt.add("index from scratch (ms)", fmt.Sprintf("%.1f", median(builds)*1e3))
	lt.add("update, one server's tools replaced (ms)", fmt.Sprintf("%.2f", median(updates)*1e3))

	title := fmt.Sprintf("Tool search: %d queries over %d tools of %d servers (retrieval evaluation)\n", len(queries), len(cat), serverCount(cat))
	tokens := fmt.Sprintf("Definitions sent: whole catalog %d bytes (~%d tokens); search mode %d bytes of meta-tools + %.0f bytes per search answer\n",
		all, all/4, meta, float64(answers)/float64(len(queries)))
	return title + rt.String() + "\n" + tokens + "\n" + lt.String(), []figure{
		{name: "aitools_search_recall_at_5", value: def.RecallAt5, goal: ">= 0.90", note: "evaluation: right tool in the first 5"},
		{name: "aitools_search_mrr", value: def.MRR, goal: ">= 0.75", note: "evaluation: mean reciprocal rank"},
		{name: "aitools_search_query_us_p50", value: median(p50s), unit: " µs", goal: "<= 500", note: "one query over 10,000 tools"},
		{name: "aitools_search_token_ratio", value: withSearch / float64(all), goal: "<= 0.05", note: "meta-tools + one search answer over every definition"},
	}, nil
}

func serverCount(cat []aitools.MCPTool) int {
	ids := map[string]bool{}
	for _, t := range cat {
		ids[t.ServerID] = true
	}
	return len(ids)
}
