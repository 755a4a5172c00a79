package searcheval_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/internal/searcheval"
)

func noCall(context.Context, string, string, map[string]any) (*mcp.CallToolResult, error) {
	return nil, nil
}

// TestEvaluation runs the evaluation with each ranker and holds the
// default one to the goals (recall@5 >= 0.90, MRR >= 0.75). It is
// deterministic: the same catalogs and queries give the same figures.
func TestEvaluation(t *testing.T) {
	cat := searcheval.Catalog()
	queries := searcheval.Queries()
	if err := searcheval.Check(cat, queries); err != nil {
		t.Fatal(err)
	}
	if len(queries) < 100 || len(cat) < 150 {
		t.Fatalf("%d queries over %d tools; the evaluation wants at least 100 over 150", len(queries), len(cat))
	}
	set := aitools.NewCache(noCall, nil).Build(cat)
	results := map[aitools.Ranker]searcheval.Result{}
	for _, r := range []aitools.Ranker{aitools.RankBM25, aitools.RankBM25F, aitools.RankBoosted} {
		res, err := searcheval.Evaluate(aitools.NewIndex(&aitools.IndexOptions{Ranker: r}).Update(set), queries)
		if err != nil {
			t.Fatal(err)
		}
		results[r] = res
		t.Logf("%-16v recall@5 %.3f  MRR %.3f  (%d queries, %d tools)", r, res.RecallAt5, res.MRR, res.Queries, len(cat))
		if testing.Verbose() {
			for _, m := range res.Misses {
				t.Logf("  %v: %q wants %s, rank %d; top %v", r, m.Query.Text, m.Query.Want, m.Rank, m.Top)
			}
		}
	}
	def := results[aitools.NewIndex(nil).Ranker()]
	if def.RecallAt5 < 0.90 || def.MRR < 0.75 {
		t.Errorf("the default ranker: recall@5 %.3f (goal 0.90), MRR %.3f (goal 0.75)", def.RecallAt5, def.MRR)
	}
	for r, res := range results {
		if res.MRR > def.MRR {
			t.Errorf("%v has a better MRR (%.3f) than the default ranker (%.3f)", r, res.MRR, def.MRR)
		}
	}
}
