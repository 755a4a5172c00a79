package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
)

func importCommand() command {
	return command{
		name:    "import",
		summary: "add the servers of a Claude Desktop, .mcp.json or VS Code config",
		usage:   importUsage,
		run:     runImport,
	}
}

const importUsage = `Usage:
  agentmcp import [flags] FILE

Adds to the agent every server of FILE, a JSON configuration in one of
these shapes:

  {"mcpServers": {"NAME": {...}}}   Claude Desktop, Claude Code's .mcp.json,
                                    Cursor
  {"servers": {"NAME": {...}}}      VS Code's mcp.json

An entry with "url" is added under NAME, with the stable id NAME
(normalised), its "headers", and its "type" ("http" means auto,
"streamable-http" or "sse"). ${VAR}, ${VAR:-default} and ${env:VAR} are
replaced from the environment. An entry with a "command" (or "type":
"stdio") is a stdio server, added with its "args", "env" and "cwd" (as
agentmcp add NAME -- COMMAND does; see agentmcp help add): the agent runs it
where agentmcp serve runs, so the command must exist there, and env values
are stored like header values (encrypted with AGENTMCP_SECRET_KEY) and never
shown. A running serve refuses stdio servers unless started with
--allow-stdio-servers: import them with --db. Entries that ask for input
(${input:...}) or use a variable that is not set are skipped. Importing
again changes nothing.

Exit status 1 when a server could not be added. A server that cannot be
reached now is saved all the same (as with agentmcp add
--keep-if-unreachable) and retried when its agent wakes in agentmcp serve;
a URL that answers as no MCP endpoint (404, 405 or 501) is not saved, nor
is an entry whose NAME another server of the agent has with another URL or
command.

Flags:
  --dry-run        print what would be added, add nothing
  --keep-awake     mark every server added keep-awake (as agentmcp add
                   --keep-awake does): these formats have no such setting
                   of their own

` + targetFlagsUsage

// configEntry is one server of a configuration file.
type configEntry struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
}

// imported is what import will do with one entry.
type imported struct {
	name, skip string // skip is why it is skipped, or ""
	req        api.AddRequest
}

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import")
	var tf targetFlags
	tf.register(fs)
	var dryRun, keepAwake bool
	fs.BoolVar(&dryRun, "dry-run", false, "")
	fs.BoolVar(&keepAwake, "keep-awake", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usageErrorf("want one FILE, got %d arguments", len(positional))
	}
	data, err := os.ReadFile(positional[0])
	if err != nil {
		return err
	}
	entries, err := parseConfig(data, os.LookupEnv)
	if err != nil {
		return fmt.Errorf("%s: %w", positional[0], err)
	}
	for i := range entries {
		entries[i].req.KeepAwake = keepAwake
	}
	if dryRun {
		for _, e := range entries {
			if e.skip != "" {
				fmt.Fprintf(stdout, "would skip %s: %s\n", oneLine(e.name), e.skip)
				continue
			}
			keep := ""
			if e.req.KeepAwake {
				keep = ", keep-awake"
			}
			if e.req.Command != "" {
				fmt.Fprintf(stdout, "would add %s as %s (command %s%s%s)\n", oneLine(e.name), agent.NormalizeServerID(e.name), oneLine(e.req.Command), envNames(e.req.Env), keep)
				continue
			}
			fmt.Fprintf(stdout, "would add %s as %s (%s, %s%s)\n", oneLine(e.name), agent.NormalizeServerID(e.name), redacted(e.req.URL), e.req.Transport.Type, keep)
		}
		return nil
	}

	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.access = handing
	b, err := tf.open(ctx, stderr, background)
	if err != nil {
		return err
	}
	defer b.close()
	failed := 0
	for _, e := range entries {
		if e.skip != "" {
			fmt.Fprintf(stdout, "skipped %s: %s\n", oneLine(e.name), e.skip)
			continue
		}
		what := "connecting to " + redacted(e.req.URL)
		if e.req.Command != "" {
			what = fmt.Sprintf("starting command %q", e.req.Command)
		}
		stop := startProgress(stderr, fmt.Sprintf("adding %s: %s", e.name, what))
		res, err := b.add(ctx, e.req)
		stop()
		if err != nil {
			if ierr := interrupted(ctx); ierr != nil {
				return ierr
			}
			failed++
			fmt.Fprintf(stdout, "failed %s: %s\n", oneLine(e.name), oneLine(redactHeaders(err, e.req).Error()))
			continue
		}
		printAdded(stdout, e.name, res.ID, string(res.State), res.AuthURL)
	}
	handOver(ctx, &tf, stdout) // failed ones may be stored too, to retry
	if failed > 0 {
		return fmt.Errorf("%d of %d servers could not be added", failed, len(entries))
	}
	return nil
}

// parseConfig reads the servers of a configuration file, in name order.
func parseConfig(data []byte, lookup func(string) (string, bool)) ([]imported, error) {
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON configuration: %w", err)
	}
	all := doc.MCPServers
	if all == nil {
		all = doc.Servers
	} else if doc.Servers != nil {
		return nil, errors.New(`has both "mcpServers" and "servers"; which one is meant?`)
	}
	if all == nil {
		return nil, errors.New(`no "mcpServers" (Claude Desktop, .mcp.json) or "servers" (VS Code) object`)
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []imported
	for _, name := range names {
		var e configEntry
		if err := json.Unmarshal(all[name], &e); err != nil {
			out = append(out, imported{name: name, skip: fmt.Sprintf("not a server entry (%v)", err)})
			continue
		}
		out = append(out, entry(name, e, lookup))
	}
	return out, nil
}

func entry(name string, e configEntry, lookup func(string) (string, bool)) imported {
	im := imported{name: name}
	switch {
	case e.Command != "" || e.Type == "stdio":
		return commandEntry(name, e, lookup)
	case e.URL == "":
		im.skip = `no "url"`
		return im
	}
	var transport mcpclient.TransportType
	switch e.Type {
	case "", "http":
		transport = mcpclient.TransportAuto
	case "streamable-http", "streamableHttp", "streamable_http":
		transport = mcpclient.TransportStreamableHTTP
	case "sse":
		transport = mcpclient.TransportSSE
	default:
		im.skip = fmt.Sprintf("unknown type %q", e.Type)
		return im
	}
	url, err := expand(e.URL, lookup)
	if err != nil {
		im.skip = "url " + err.Error()
		return im
	}
	im.req = api.AddRequest{Name: name, URL: url, ID: agent.NormalizeServerID(name), Transport: &api.TransportRequest{Type: string(transport)}, KeepIfUnreachable: true}
	for k, v := range e.Headers {
		v, err := expand(v, lookup)
		if err != nil {
			im.skip = fmt.Sprintf("header %s %v", k, err)
			return im
		}
		if im.req.Transport.Headers == nil {
			im.req.Transport.Headers = map[string]string{}
		}
		im.req.Transport.Headers[k] = v
	}
	return im
}

// commandEntry is entry for a stdio server. Variables are replaced in the
// command, args, env values and cwd.
func commandEntry(name string, e configEntry, lookup func(string) (string, bool)) imported {
	im := imported{name: name}
	if e.Command == "" {
		im.skip = `no "command"`
		return im
	}
	command, err := expand(e.Command, lookup)
	if err != nil {
		im.skip = "command " + err.Error()
		return im
	}
	im.req = api.AddRequest{Name: name, ID: agent.NormalizeServerID(name), Command: command, KeepIfUnreachable: true}
	for i, a := range e.Args {
		a, err := expand(a, lookup)
		if err != nil {
			im.skip = fmt.Sprintf("argument %d %v", i+1, err)
			return im
		}
		im.req.Args = append(im.req.Args, a)
	}
	for k, v := range e.Env {
		v, err := expand(v, lookup)
		if err != nil {
			im.skip = fmt.Sprintf("env %s %v", k, err)
			return im
		}
		if im.req.Env == nil {
			im.req.Env = map[string]string{}
		}
		im.req.Env[k] = v
	}
	if e.Cwd != "" {
		cwd, err := expand(e.Cwd, lookup)
		if err != nil {
			im.skip = "cwd " + err.Error()
			return im
		}
		if cwd, err = filepath.Abs(cwd); err != nil {
			im.skip = "cwd: " + err.Error()
			return im
		}
		im.req.Cwd = cwd
	}
	return im
}

var (
	varRE     = regexp.MustCompile(`\$\{([^}]*)\}`)
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// expand replaces ${VAR}, ${VAR:-default} and ${env:VAR}. Other variables
// (${input:...}, ${workspaceFolder}) and unset ones without a default are
// errors.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	var err error
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		if err != nil {
			return m
		}
		ref := m[2 : len(m)-1]
		switch {
		case strings.HasPrefix(ref, "input:"):
			err = fmt.Errorf("asks for input (%s): add it with agentmcp add and --header", m)
			return m
		case strings.HasPrefix(ref, "env:"):
			ref = strings.TrimPrefix(ref, "env:")
		}
		name, def, hasDef := strings.Cut(ref, ":-")
		if !envNameRE.MatchString(name) {
			err = fmt.Errorf("uses %s, which agentmcp cannot replace", m)
			return m
		}
		if v, ok := lookup(name); ok && v != "" {
			return v
		}
		if hasDef {
			return def
		}
		err = fmt.Errorf("uses ${%s}, which is not set", name)
		return m
	})
	return out, err
}

// envNames lists the names of a stdio server's environment (never the
// values), for the dry run.
func envNames(env map[string]string) string {
	if len(env) == 0 {
		return ""
	}
	return ", env " + strings.Join(slices.Sorted(maps.Keys(env)), " ")
}

// redacted shows a URL without userinfo, query and fragment.
func redacted(raw string) string {
	u, err := parseURL(raw)
	if err != nil {
		return "<invalid URL>"
	}
	return redactedURL(u)
}

// redactHeaders cuts the request's header values and URL secrets out of
// err's message.
func redactHeaders(err error, req api.AddRequest) error {
	spec := &serverSpec{options: mcpclient.ServerOptions{URL: req.URL}, display: redacted(req.URL)}
	if req.Transport != nil {
		for _, v := range req.Transport.Headers {
			spec.secrets = append(spec.secrets, headerSecrets(v)...)
		}
	}
	for _, v := range req.Env {
		if v != "" {
			spec.secrets = append(spec.secrets, v)
		}
	}
	if req.URL == "" {
		return spec.redact(err)
	}
	if u, perr := parseURL(req.URL); perr == nil {
		spec.secrets = append(spec.secrets, urlSecrets(req.URL, u)...)
	}
	return spec.redact(err)
}
