package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
)

func callCommand() command {
	return command{
		name:    "call",
		summary: "call a tool and print its result, as JSON",
		usage:   callUsage,
		run:     runCall,
	}
}

const callUsage = `Usage:
  agentmcp call [flags] SERVER TOOL
  agentmcp call [flags] URL TOOL
  agentmcp call [flags] TOOL -- COMMAND [ARG...]
  agentmcp call [flags] --tool TOOL (SERVER | URL | -- COMMAND [ARG...])

Calls TOOL and prints the tool's result (the whole CallToolResult) as JSON.
The tool is on SERVER, a server of an agent (its id, or a name only one
server has), reached through a running agentmcp serve or a database (see
the target flags below); or on the MCP server at URL; or on the stdio server
that COMMAND starts. Everything after -- is the server's command, so with a
command, TOOL and all flags come before --.

A result with "isError": true is printed too, and the exit status is 1.

While the tool works, the server's progress notifications are shown on
stderr: as a progress line on a terminal, else as JSON lines
({"type":"progress","tool":...,"progress":2,"total":5,"message":...}).
When the server asks the user for input (an elicitation) and stdin is a
terminal, the question is asked there: a form's fields one by one, with
their types, options and defaults (Enter keeps the default), then sent to
the server; for a URL, the URL is shown, to open in a browser, and the call
goes on once Enter is pressed. Each can be declined or cancelled. When stdin
is not a terminal, such a call fails at once (a URL, a command, --db or
--postgres: nobody else could answer), except through a running agentmcp
serve (a SERVER without --db or --postgres): there a line on stderr says
where to answer it (serve's dashboard, or the API route; a JSON line when
stderr is not a terminal) and the call waits for the answer. A question
answered in the dashboard while the terminal asks it is not asked further.

A tool that its server runs as an MCP task is called the same way: call
waits for the task, showing its status messages as progress. Through a
running agentmcp serve it also prints the task's ID on stderr when the call
becomes one ("work: runs as task ts:task-1 ...", or a JSON line
{"type":"task","tool":...,"id":...}): serve polls the task and stores it,
so that a call interrupted or timed out leaves it running, and
agentmcp tasks ID fetches its result later (agentmcp tasks cancel ID
cancels it).

--timeout (default 60s) bounds the whole command, connecting and the time
taken to answer the server's questions included.

Flags:
  --args JSON      the tool's arguments, a JSON object (default {})
  --tool TOOL      the tool to call, instead of the TOOL argument
` + traceUsage + `                   With a URL or a command only.

Examples:
  agentmcp call github create_issue --args '{"title":"hi"}'
  agentmcp call --db ./agentmcp.db github create_issue --args '{"title":"hi"}'
  agentmcp call https://example.com/mcp echo --args '{"message":"hi"}'
  agentmcp call echo --args '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything
  agentmcp call --tool echo --args '{"message":"hi"}' -- ./my-server --stdio

` + connFlagsUsage + `
` + targetFlagsUsage + `  (--timeout is the one above.) A SERVER is any first argument that is not a
  URL; the target flags apply to it only.
`

func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("call")
	var cf connFlags
	cf.register(fs)
	var tf targetFlags
	tf.registerTarget(fs)
	var toolFlag, argsFlag string
	var traceFlag bool
	fs.StringVar(&toolFlag, "tool", "", "")
	fs.StringVar(&argsFlag, "args", "", "")
	fs.BoolVar(&traceFlag, "trace", false, "")
	positional, command, hasCommand, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	isURL := len(positional) > 0 && strings.Contains(positional[0], "://")
	if !hasCommand && !isURL && (tf.given() || len(positional) > 0) {
		if traceFlag {
			return usageErrorf("--trace applies to a URL or a command: the spans of a SERVER of an agent are serve's (see its OTLP export)")
		}
		return callAgentTool(ctx, &cf, &tf, toolFlag, argsFlag, positional, stdout, stderr)
	}
	if tf.given() {
		return usageErrorf("--server, --db, --postgres, --token, --agent and --public-url apply to a SERVER of an agent, not to a URL or a command")
	}
	spec, rest, err := cf.server(positional, command, hasCommand)
	if err != nil {
		return err
	}
	tool, err := toolName(toolFlag, rest, hasCommand)
	if err != nil {
		return err
	}
	toolArgs, err := parseToolArgs(argsFlag)
	if err != nil {
		return err
	}

	var tr *cmdTrace
	if traceFlag {
		ctx, tr = startTrace(ctx, "agentmcp call")
		defer func() { tr.finish(stderr, err) }()
	}
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	callCtx, term := startTerminal(ctx, tool, stderr)
	defer term.close()
	s, err := connectWith(ctx, spec, cf.timeout, term.handlers(), tr.provider())
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.checkTool(tool); err != nil {
		return err
	}
	res, err := s.m.CallTool(callCtx, s.id, tool, toolArgs, term.callOptions())
	if nerr := term.refused(callCtx); nerr != nil {
		return nerr
	}
	if err != nil {
		if ierr := interrupted(ctx); ierr != nil {
			return ierr
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("calling tool %q timed out after %v", tool, cf.timeout)
		}
		return spec.redact(err)
	}
	term.clearProgress()
	if err := writeJSON(stdout, res); err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %q returned an error (isError); its result is on stdout", tool)
	}
	return nil
}

// toolName returns the tool to call: --tool, or the argument left after the
// URL (or before --).
func toolName(flagValue string, rest []string, hasCommand bool) (string, error) {
	where := "after the URL"
	if hasCommand {
		where = "before --"
	}
	switch {
	case flagValue != "" && len(rest) > 0:
		return "", usageErrorf("the tool is given twice: --tool %q and %s", flagValue, quoteArg(rest[0]))
	case flagValue != "":
		return flagValue, nil
	case len(rest) == 0:
		return "", usageErrorf("missing tool name (give it %s, or with --tool)", where)
	case len(rest) > 1 && hasCommand:
		return "", usageErrorf("too many arguments before --: want only TOOL (give a URL or a command after --, not both)")
	case len(rest) > 1:
		return "", usageErrorf("unexpected argument %s after the tool name; pass arguments with --args", quoteArg(rest[1]))
	}
	return rest[0], nil
}

// parseToolArgs checks --args: a JSON object, passed on as it is.
func parseToolArgs(s string) (json.RawMessage, error) {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}"), nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, usageErrorf("invalid JSON in --args: %v", err)
	}
	if dec.More() {
		return nil, usageErrorf("invalid JSON in --args: more than one value")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, usageErrorf("--args must be a JSON object, like '{\"name\": \"value\"}'")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, usageErrorf("invalid JSON in --args: %v", err)
	}
	return b.Bytes(), nil
}

// checkTool fails unless the server listed the tool.
func (s *session) checkTool(name string) error {
	tools := s.m.ListTools(mcpclient.Filter{ServerID: []string{s.id}})
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if t.Name == name {
			return nil
		}
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("tool %q not found: %s lists no tools", name, s.spec.display)
	}
	const maxNames = 20
	list := strings.Join(names[:min(len(names), maxNames)], ", ")
	if len(names) > maxNames {
		list += fmt.Sprintf(", and %d more", len(names)-maxNames)
	}
	return fmt.Errorf("tool %q not found on %s (it has: %s)", name, s.spec.display, list)
}

// callAgentTool is call SERVER TOOL: a tool of a server of an agent,
// through a running agentmcp serve or a database.
func callAgentTool(ctx context.Context, cf *connFlags, tf *targetFlags, toolFlag, argsFlag string, positional []string, stdout, stderr io.Writer) error {
	if len(cf.headers) > 0 || cf.protocol != "" || cf.transport != string(mcpclient.TransportAuto) {
		return usageErrorf("--header, --transport and --protocol apply to a URL; a server of an agent has its own")
	}
	if len(positional) == 0 {
		return usageErrorf("missing SERVER and TOOL")
	}
	ref := positional[0]
	tool, err := toolName(toolFlag, positional[1:], false)
	if err != nil {
		return err
	}
	toolArgs, err := parseToolArgs(argsFlag)
	if err != nil {
		return err
	}
	if cf.timeout <= 0 {
		return usageErrorf("--timeout must be positive")
	}
	tf.timeout = cf.timeout
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	b, st, id, err := tf.openServer(ctx, stderr, connected, ref)
	if err != nil {
		return err
	}
	defer b.close()
	var names []string
	found := false
	for _, t := range st.Tools {
		if t.ServerID == id {
			names = append(names, t.Name)
			found = found || t.Name == tool
		}
	}
	if !found {
		if s := st.Servers[id]; s.State != string(mcpclient.StateReady) {
			msg := ""
			if s.Error != nil {
				msg = ": " + *s.Error
			}
			return fmt.Errorf("server %s is %s, not ready%s", serverLabel(st, id), s.State, msg)
		}
		return fmt.Errorf("tool %q not found on server %s (it has: %s)", tool, serverLabel(st, id), strings.Join(names, ", "))
	}
	callCtx, term := startTerminal(ctx, tool, stderr)
	defer term.close()
	term.serverName = st.Servers[id].Name
	res, err := b.call(callCtx, id, tool, toolArgs, term)
	if nerr := term.refused(callCtx); nerr != nil {
		return nerr
	}
	if err != nil {
		// A call that became a task leaves it running (tasks.go).
		if ierr := interrupted(ctx); ierr != nil {
			return term.taskRunsOn(ierr)
		}
		if perr := approvalPending(err); perr != nil { // approvals.go
			return perr
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return term.taskRunsOn(fmt.Errorf("calling tool %q timed out after %v", tool, cf.timeout))
		}
		return term.taskRunsOn(err)
	}
	term.clearProgress()
	if err := writeJSON(stdout, res); err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %q returned an error (isError); its result is on stdout", tool)
	}
	return nil
}

// serverLabel names a server of st in messages: its name, with its id
// when that differs.
func serverLabel(st agent.MCPServersState, id string) string {
	name := oneLine(st.Servers[id].Name)
	if name == "" || name == id {
		return id
	}
	return fmt.Sprintf("%s (%s)", name, id)
}
