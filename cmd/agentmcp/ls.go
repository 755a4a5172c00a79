package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/agentmcp/agentmcp/agent"
)

func lsCommand() command {
	return command{
		name:    "ls",
		summary: "list an agent's MCP servers and their states",
		usage: `Usage:
  agentmcp ls [flags]

Prints a table of the agent's servers: id, name, state, transport, number
of tools, URL and error. With --db, the stored servers are connected first,
so that their states are current.

Flags:
  --json           print the agent's whole state (MCPServersState) as JSON

` + targetFlagsUsage,
		run: runLs,
	}
}

func runLs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ls")
	var tf targetFlags
	tf.register(fs)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("unexpected argument %s", quoteArg(positional[0]))
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	b, err := tf.open(ctx, stderr, true)
	if err != nil {
		return err
	}
	defer b.close()
	st, err := b.state(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, st)
	}
	return printServers(stdout, st)
}

// sortedIDs returns the server ids by name, then id.
func sortedIDs(st agent.MCPServersState) []string {
	ids := make([]string, 0, len(st.Servers))
	for id := range st.Servers {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := strings.Compare(st.Servers[a].Name, st.Servers[b].Name); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return ids
}

func printServers(w io.Writer, st agent.MCPServersState) error {
	if len(st.Servers) == 0 {
		_, err := fmt.Fprintln(w, "no servers (add one with: agentmcp add NAME URL)")
		return err
	}
	tools := map[string]int{}
	for _, t := range st.Tools {
		tools[t.ServerID]++
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tTRANSPORT\tTOOLS\tURL\tERROR")
	for _, id := range sortedIDs(st) {
		s := st.Servers[id]
		errText := ""
		if s.Error != nil {
			errText = *s.Error
		}
		if s.AuthURL != nil && s.State == "authenticating" {
			errText = "authorize at " + *s.AuthURL
		}
		transport := s.Transport
		if transport == "" {
			transport = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", cell(id), cell(s.Name), s.State, transport, tools[id], cell(s.ServerURL), cell(errText))
	}
	return tw.Flush()
}

// cell makes server-supplied text safe for one table cell: one line, no
// control characters (bidirectional ones included), no tabs.
func cell(s string) string {
	s = oneLine(s)
	if s == "" {
		return "-"
	}
	const max = 80
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
