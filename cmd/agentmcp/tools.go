package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/agentmcp/agentmcp/mcpclient"
)

func toolsCommand() command {
	return command{
		name:    "tools",
		summary: "list the tools of an agent's MCP servers",
		usage: `Usage:
  agentmcp tools [flags] [SERVER...]

Prints a table of the tools of the agent's servers, or of the SERVERs
given (ids, or names only one server has): server id, tool name and the
first line of its description, sorted by server name, then tool name (as
is --json).

With --search QUERY, prints the tools that match QUERY instead, best
first, with their scores: the agent's tool search (names, titles,
descriptions and parameters), as GET .../tools?q= answers it.

Flags:
  --json           print the tools, with their input schemas, as JSON
  --search QUERY   only the tools that match QUERY, best first
  --limit N        with --search, at most N tools (default 10, at most 100)
  --stats          print, per server, its tools and what their definitions
                   cost a model's context: bytes of JSON and estimated
                   tokens (a quarter of the bytes), and the total

` + targetFlagsUsage,
		run: runTools,
	}
}

func runTools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tools")
	var tf targetFlags
	tf.register(fs)
	var asJSON, stats bool
	fs.BoolVar(&asJSON, "json", false, "")
	var query string
	var limit int
	fs.StringVar(&query, "search", "", "")
	fs.IntVar(&limit, "limit", 10, "")
	fs.BoolVar(&stats, "stats", false, "")
	servers, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["search"] && stats {
		return usageErrorf("--search and --stats do not go together")
	}
	if given["search"] {
		if strings.TrimSpace(query) == "" {
			return usageErrorf("--search needs a query")
		}
		if limit < 1 || limit > 100 {
			return usageErrorf("--limit must be from 1 to 100")
		}
	} else if given["limit"] {
		return usageErrorf("--limit goes with --search")
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.mustExist = true
	b, err := tf.open(ctx, stderr, connected)
	if err != nil {
		return err
	}
	defer b.close()
	var f mcpclient.Filter
	st, err := b.state(ctx)
	if err != nil {
		return err
	}
	if len(servers) > 0 {
		for _, ref := range servers {
			id, err := resolveServer(st, ref)
			if err != nil {
				return err
			}
			f.ServerID = append(f.ServerID, id)
		}
	}
	if given["search"] {
		matches, err := searchTools(ctx, b, f, query, limit)
		if err != nil {
			return err
		}
		return printMatches(stdout, matches, query, asJSON)
	}
	tools, err := b.tools(ctx, f)
	if err != nil {
		return err
	}
	// By server name (then id), then tool name.
	slices.SortStableFunc(tools, func(x, y mcpclient.Tool) int {
		return cmp.Or(
			cmp.Compare(st.Servers[x.ServerID].Name, st.Servers[y.ServerID].Name),
			cmp.Compare(x.ServerID, y.ServerID),
			cmp.Compare(x.Name, y.Name))
	})
	if stats {
		return printToolStats(stdout, st, tools, asJSON)
	}
	if asJSON {
		if tools == nil {
			tools = []mcpclient.Tool{}
		}
		return writeJSON(stdout, tools)
	}
	if len(tools) == 0 {
		_, err := fmt.Fprintln(stdout, "no tools (servers list theirs once they are ready: agentmcp ls)")
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTOOL\tDESCRIPTION")
	for _, t := range tools {
		desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\n", cell(t.ServerID), cell(t.Name), cell(desc))
	}
	return tw.Flush()
}
