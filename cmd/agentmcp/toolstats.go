package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// toolStats is one server's line of tools --stats.
type toolStats struct {
	ServerID string `json:"serverId"`
	Name     string `json:"name"`
	Tools    int    `json:"tools"`
	Bytes    int    `json:"bytes"`
	Tokens   int    `json:"tokens"`
}

// printToolStats prints what each server's tool definitions cost a
// model's context, in the order of tools (sorted by server), then the
// total. The sizes are those of the definitions' JSON as listed
// (mcpclient.ToolsBytes), as the API's toolBytes.
func printToolStats(w io.Writer, st agent.MCPServersState, tools []mcpclient.Tool, asJSON bool) error {
	var lines []toolStats
	at := map[string]int{}
	total := toolStats{Name: "total"}
	for _, t := range tools {
		i, ok := at[t.ServerID]
		if !ok {
			i = len(lines)
			at[t.ServerID] = i
			lines = append(lines, toolStats{ServerID: t.ServerID, Name: st.Servers[t.ServerID].Name})
		}
		n := 0
		if b, err := json.Marshal(t.Tool); err == nil {
			n = len(b)
		}
		lines[i].Tools++
		lines[i].Bytes += n
		total.Tools++
		total.Bytes += n
	}
	for i := range lines {
		lines[i].Tokens = aitools.EstimateTokens(lines[i].Bytes)
	}
	total.Tokens = aitools.EstimateTokens(total.Bytes)
	if asJSON {
		if lines == nil {
			lines = []toolStats{}
		}
		return writeJSON(w, struct {
			Servers []toolStats `json:"servers"`
			Total   toolStats   `json:"total"`
		}{lines, total})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SERVER\tNAME\tTOOLS\tBYTES\t~TOKENS\t")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t\n", cell(l.ServerID), cell(l.Name), l.Tools, l.Bytes, l.Tokens)
	}
	fmt.Fprintf(tw, "\ttotal\t%d\t%d\t%d\t\n", total.Tools, total.Bytes, total.Tokens)
	return tw.Flush()
}
