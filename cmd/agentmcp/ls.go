package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
)

func lsCommand() command {
	return command{
		name:    "ls",
		summary: "list an agent's MCP servers and their states",
		usage: `Usage:
  agentmcp ls [flags]

Prints a table of the agent's servers, by name then id (the order of the
API and the dashboard too): id, name, state, transport, number of tools
("-" while not known: the server is not connected), URL and a note: what
failed, in short, for a failed server (--json has the full detail as
"error", the short form as "error_summary"), with when it is tried again
("retrying, next try in 13 s"; --json: "nextRetryAt"), and the URL to open
for one that needs sign-in (authenticating).

With --db or --postgres, ls reads the stored servers without connecting to
them (nothing is sent to them): each is not-connected, or authenticating
when it waits for sign-in. --connect connects to them first, so that their
states and tools are current. Through a running agentmcp serve the states
are live (asking wakes a hibernated agent; ls then waits, up to 5s, for its
servers to connect).

Flags:
  --json           print the agent's whole state (MCPServersState) as JSON
  --connect        with --db or --postgres: connect to the servers first

` + targetFlagsUsage,
		run: runLs,
	}
}

func runLs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ls")
	var tf targetFlags
	tf.register(fs)
	var asJSON, connect bool
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&connect, "connect", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("unexpected argument %s", quoteArg(positional[0]))
	}
	mode := dormant
	tf.access = reading
	if connect {
		tf.access = owning
		if tf.db == "" && tf.postgres == "" {
			return usageErrorf("--connect is for --db and --postgres; a running agentmcp serve has live states")
		}
		mode = connected
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	b, st, err := tf.openState(ctx, stderr, mode)
	if err != nil {
		return err
	}
	defer b.close()
	if _, ok := b.(*direct); ok {
		// Retries made by this process end with it: none is due.
		for id, s := range st.Servers {
			s.NextRetryAt = nil
			st.Servers[id] = s
		}
	}
	if r, ok := b.(*remote); ok {
		st = r.settle(ctx, st) // a woken agent's servers are connecting
	}
	if asJSON {
		return writeJSON(stdout, st)
	}
	return printServers(stdout, st)
}

// sortedIDs returns the server ids in the agent's order (by name, then
// id: agent.ServerOrder), which every view shares.
func sortedIDs(st agent.MCPServersState) []string {
	if len(st.Order) == len(st.Servers) {
		return st.Order
	}
	return agent.ServerOrder(st.Servers)
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
	now := time.Now()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tTRANSPORT\tTOOLS\tURL\tNOTE")
	for _, id := range sortedIDs(st) {
		s := st.Servers[id]
		transport := s.Transport
		if transport == "" {
			transport = "-"
		}
		// The note is the last column and is never cut: its end is what
		// says what to do.
		note := oneLine(serverNote(s, now))
		if note == "" {
			note = "-"
		}
		target := s.ServerURL
		if len(s.Command) > 0 {
			target = "$ " + commandLine(s.Command) // a stdio server
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(id), cell(s.Name), s.State, transport, toolCount(s, tools[id]), cell(target), note)
	}
	return tw.Flush()
}

// toolCount is the TOOLS cell of a server with n tools listed: "-" when
// the number is not known, because the server is not connected (a dormant
// agent's servers, one waiting for sign-in, one that failed).
func toolCount(s agent.MCPServer, n int) string {
	if n == 0 && s.State != string(mcpclient.StateReady) {
		return "-"
	}
	return strconv.Itoa(n)
}

// serverNote is what ls says about a server beyond its state at now: what
// to do for one that waits for sign-in, the short form of an error
// (ls --json carries the full detail) and when a failed server is tried
// again.
func serverNote(s agent.MCPServer, now time.Time) string {
	note := errorNote(s)
	if s.State == string(mcpclient.StateFailed) && s.NextRetryAt != nil {
		if note != "" {
			note += "; "
		}
		note += retryNote(*s.NextRetryAt, now)
	}
	return note
}

// retryNote says when a retry due at is made, seen at now: "retrying,
// next try in 13 s".
func retryNote(at, now time.Time) string {
	d := at.Sub(now).Round(time.Second)
	switch {
	case d <= 0:
		return "retrying now"
	case d < time.Minute:
		return fmt.Sprintf("retrying, next try in %d s", d/time.Second)
	case d%time.Minute == 0:
		return fmt.Sprintf("retrying, next try in %d min", d/time.Minute)
	}
	return fmt.Sprintf("retrying, next try in %d min %d s", d/time.Minute, d%time.Minute/time.Second)
}

// errorNote is serverNote without the retry.
func errorNote(s agent.MCPServer) string {
	if s.State == string(mcpclient.StateAuthenticating) {
		if s.AuthURL != nil && *s.AuthURL != "" {
			return "sign-in needed: open " + *s.AuthURL
		}
		return "sign-in needed: open the dashboard (agentmcp serve) and press Authorize"
	}
	switch {
	case s.ErrorSummary != nil && *s.ErrorSummary != "":
		return *s.ErrorSummary
	case s.Error != nil:
		return *s.Error
	}
	return ""
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
