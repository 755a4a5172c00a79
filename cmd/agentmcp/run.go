package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
)

// A command is one subcommand of agentmcp.
type command struct {
	// name is the word that selects it: agentmcp <name>.
	name string
	// summary is its one-line description in the command list.
	summary string
	// usage is its help text, printed for -h, --help and "agentmcp help <name>".
	usage string
	// run runs it with the arguments after its name. It writes its results
	// to stdout and returns an error on failure, without printing it: the
	// dispatcher does. It returns flag.ErrHelp when asked for help, and a
	// *usageError for arguments it cannot use.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands returns the subcommands, in the order "agentmcp help" lists
// them. Add new ones here.
func commands() []command {
	return []command{
		serveCommand(),
		addCommand(),
		rmCommand(),
		lsCommand(),
		getCommand(),
		reconnectCommand(),
		toolsCommand(),
		callCommand(),
		tasksCommand(),
		importCommand(),
		inspectCommand(),
		exposeCommand(),
		policyCommand(),    // policy.go
		approvalsCommand(), // approvals.go
		approveCommand(),
		denyCommand(),
		pinsCommand(),  // pins.go
		auditCommand(), // audit.go
		mcpConfigCommand(),
		versionCommand(),
	}
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1   // anything failed, a tool result with isError included
	exitUsage       = 2   // the command line is wrong
	exitInterrupted = 130 // SIGINT or SIGTERM; 128 + SIGINT, as shells report it
)

// run runs agentmcp with args (without the program name). It writes
// results to stdout; a failure is reported on stderr as one line,
// "agentmcp: <message>", and returned (exitCode maps it to the exit
// status). Cancelling ctx interrupts the command cleanly.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentmcp: %s\n", oneLine(err.Error()))
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		io.WriteString(stderr, mainUsage())
		return &usageError{msg: "no command given"}
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return help(rest, stdout, stderr)
	case "-version", "--version":
		name = "version"
	}
	cmd, ok := lookupCommand(name)
	if !ok {
		io.WriteString(stderr, mainUsage())
		return &usageError{msg: fmt.Sprintf("unknown command %q", name)}
	}
	err := cmd.run(ctx, rest, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(stdout, cmd.usage)
		return nil
	}
	var uerr *usageError
	if errors.As(err, &uerr) && uerr.cmd == "" {
		uerr.cmd = cmd.name
	}
	return err
}

func help(args []string, stdout, stderr io.Writer) error {
	switch len(args) {
	case 0:
		io.WriteString(stdout, mainUsage())
		return nil
	case 1:
		if cmd, ok := lookupCommand(args[0]); ok {
			io.WriteString(stdout, cmd.usage)
			return nil
		}
		io.WriteString(stderr, mainUsage())
		return &usageError{msg: fmt.Sprintf("unknown command %q", args[0])}
	default:
		return &usageError{msg: "help takes at most one command name"}
	}
}

func mainUsage() string {
	var b strings.Builder
	b.WriteString(`agentmcp connects to MCP servers.

Usage:
  agentmcp <command> [arguments]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(&b, "  %-10s %s\n", "help", "print this help, or a command's: agentmcp help <command>")
	b.WriteString(`
agentmcp serve keeps agents and their MCP servers in a database and shows
them on a dashboard (http://127.0.0.1:8787/); add, rm, ls, tools, call and
import act on its agents, or on the database directly with --db:

  agentmcp serve
  agentmcp add github https://example.com/mcp --id github
  agentmcp call github create_issue --args '{"title":"hi"}'

inspect and call also take a server directly: a URL (streamable HTTP or
SSE), or, after --, a command that runs a server over stdio:

  agentmcp inspect https://example.com/mcp
  agentmcp inspect -- npx -y @modelcontextprotocol/server-everything

Exit status: 0 on success; 1 on failure (a tool result with isError
included); 2 when the command line is wrong; 130 when interrupted.
A failure is reported as one line on stderr: "agentmcp: <message>".
`)
	return b.String()
}

// usageError is a command line that cannot be used.
type usageError struct {
	cmd string // the subcommand, filled in by dispatch
	msg string
}

func (e *usageError) Error() string {
	if e.cmd == "" {
		return e.msg + " (run 'agentmcp help' for usage)"
	}
	return fmt.Sprintf("%s: %s (run 'agentmcp %s -h' for usage)", e.cmd, e.msg, e.cmd)
}

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCode returns the exit status for the outcome of run.
func exitCode(err error) int {
	var uerr *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &uerr):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	default:
		return exitFailure
	}
}

// oneLine makes s fit on one terminal line: line breaks become "; " and
// other control characters (which a server could use to rewrite the
// terminal) are dropped, and so are bidirectional controls (U+202E and the
// like, which reorder what the line shows).
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.TrimSpace(strings.Map(func(r rune) rune {
			switch {
			case r == '\t':
				return ' '
			case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
				return -1
			}
			return r
		}, l))
	}
	lines = slices.DeleteFunc(lines, func(l string) bool { return l == "" })
	return strings.Join(lines, "; ")
}
