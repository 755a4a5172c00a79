package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// toolMatch is a tool found by tools --search, as GET .../tools?q=
// answers it (api.ToolMatch).
type toolMatch struct {
	mcpclient.Tool
	Key   string  `json:"key"`
	Score float64 `json:"score"`
}

// searchTools returns the tools of the servers f selects that match
// query, best first: through the API, or with the agent's own index.
func searchTools(ctx context.Context, b backend, f mcpclient.Filter, query string, limit int) ([]toolMatch, error) {
	switch b := b.(type) {
	case *remote:
		wf := client.Filter{ServerID: f.ServerID, ServerName: f.ServerName}
		ms, err := b.c.SearchTools(ctx, wf, query, limit)
		if err != nil {
			return nil, b.explain(err)
		}
		return fromWire[[]toolMatch](ms)
	case *direct:
		if len(f.ServerID) == 0 {
			// Every stored server, as the API's filter does.
			for id := range b.a.MCPServers().Servers {
				f.ServerID = append(f.ServerID, id)
			}
		}
		var out []toolMatch
		for _, m := range b.a.SearchTools(f, query, limit) {
			out = append(out, toolMatch{Tool: mcpclient.Tool{Tool: *m.Tool.Def, ServerID: m.Tool.ServerID},
				Key: m.Tool.Key, Score: math.Round(m.Score*1000) / 1000})
		}
		return out, nil
	}
	return nil, fmt.Errorf("tools --search is not supported on %s", b.where())
}

// printMatches prints matches as tools --search does.
func printMatches(stdout io.Writer, matches []toolMatch, query string, asJSON bool) error {
	if asJSON {
		if matches == nil {
			matches = []toolMatch{}
		}
		return writeJSON(stdout, matches)
	}
	if len(matches) == 0 {
		_, err := fmt.Fprintf(stdout, "no tool matches %q\n", query)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCORE\tSERVER\tTOOL\tDESCRIPTION")
	for _, m := range matches {
		desc, _, _ := strings.Cut(strings.TrimSpace(m.Description), "\n")
		fmt.Fprintf(tw, "%.2f\t%s\t%s\t%s\n", m.Score, cell(m.ServerID), cell(m.Name), cell(desc))
	}
	return tw.Flush()
}
