// Command agentmcp-bench measures agentmcp on this machine in one run, and
// prints one table plus one name=value line per figure (docs/PERFORMANCE.md
// lists them, with their goals):
//
//   - tool calls through the Manager against a raw go-sdk ClientSession and a
//     plain keep-alive HTTP round trip of the same bytes, in both protocol
//     eras, sequential and with 8 concurrent callers, for a small echo tool
//     and for a tool returning 64 KiB of text;
//   - 8 concurrent callers on one session of the go-sdk server itself,
//     against go-sdk's own client;
//   - the same sequential calls from the TypeScript SDK's client;
//   - a new client to its first listed tools against the go-sdk server,
//     in both eras, against go-sdk's own client;
//   - a call through an agent's MCP endpoint (package gateway) against the
//     agent's own call, in both eras;
//   - sequential calls through an agent with its audit log against one
//     without (audit.go);
//   - connecting and discovering 200 servers at once against one alone;
//   - restoring an agent with 1,000 stored servers (SQLite);
//   - AITools over 10,000 tools, first call against a repeat;
//   - the memory of an idle connection against a raw go-sdk session;
//   - agents that sleep: the memory a hibernated agent leaves behind, a
//     request to a hibernated agent (and whether its sessions resumed
//     without a handshake), agentmcp serve's start on 100,000 stored
//     agents, and the cap on awake agents.
//
// The MCP servers run in a separate process (this program, re-executed as
// "agentmcp-bench serve"), so that what is measured in this process is the
// client alone; restore and idle-memory figures come from further child
// processes that do only that work. Every figure is the median of -reps
// repetitions, and every ratio is computed from measurements of this run.
// Everything listens on 127.0.0.1, and every process started is stopped.
//
// Usage:
//
//	agentmcp-bench [flags]                  the whole run (make bench)
//	agentmcp-bench -sections calls,ts       some sections only
//	agentmcp-bench profile [flags]          one call workload, with pprof profiles
//
// The roles serve, restore, idle and host are the child processes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agentmcp-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			return serve(ctx, args[1:], stdout)
		case "restore":
			return restoreChild(ctx, args[1:], stdout)
		case "idle":
			return idleChild(ctx, args[1:], stdout)
		case "host":
			return hostChild(ctx, args[1:], stdout)
		case "profile":
			return profile(ctx, args[1:], stdout, stderr)
		}
	}
	return bench(ctx, args, stdout, stderr)
}
