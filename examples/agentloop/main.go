// Command agentloop runs an agent loop: a model behind any OpenAI-compatible
// Chat Completions endpoint, with the tools of MCP servers, until the model
// answers without calling a tool.
//
// Usage:
//
//	agentloop [-prompt TEXT] [-max-turns N] [-search [-always-load ID,...]] [[ID=]URL ...] [-- COMMAND [ARG ...]]
//
// Each URL is an MCP server reached over HTTP (streamable HTTP, or SSE),
// under the id ID, or mcp1, mcp2, ... in order; the command after "--" is an
// MCP server run over stdio, under the id "local". The prompt is -prompt,
// or standard input.
//
// With -search the model is not sent every tool definition: it gets two
// meta-tools (aitools' search mode), search_tools, which finds tools by
// what they do and answers their keys, descriptions and input schemas, and
// call_tool, which calls one by key; the tools of the servers named by
// -always-load are sent as well. That keeps the request small when the
// servers have hundreds of tools.
//
// The endpoint is configured by environment variables:
//
//	OPENAI_BASE_URL  the API's base URL, e.g. http://127.0.0.1:11434/v1/ (default: OpenAI's)
//	OPENAI_API_KEY   the API key (may be empty for local servers)
//	OPENAI_MODEL     the model (required)
//
// The answer goes to standard output; the tool calls, as they happen, to
// standard error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentmcp/agentmcp/aitools"
	aiopenai "github.com/agentmcp/agentmcp/aitools/openai"
	"github.com/agentmcp/agentmcp/mcpclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

// server is one MCP server named on the command line.
type server struct {
	id   string
	opts mcpclient.ServerOptions
}

// parseServers reads [[ID=]URL ...] [-- COMMAND [ARG ...]].
func parseServers(args []string) ([]server, error) {
	var out []server
	for i, a := range args {
		if a == "--" {
			rest := args[i+1:]
			if len(rest) == 0 {
				return nil, errors.New(`no command after "--"`)
			}
			out = append(out, server{id: "local", opts: mcpclient.ServerOptions{Name: rest[0],
				Command: &mcpclient.CommandOptions{Path: rest[0], Args: rest[1:]}}})
			break
		}
		id, url, ok := strings.Cut(a, "=")
		if !ok || strings.Contains(id, "/") {
			id, url = fmt.Sprintf("mcp%d", len(out)+1), a
		}
		out = append(out, server{id: id, opts: mcpclient.ServerOptions{Name: id, URL: url}})
	}
	return out, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	prompt := fs.String("prompt", "", "the user's request (default: standard input)")
	maxTurns := fs.Int("max-turns", 10, "the most model requests to make")
	search := fs.Bool("search", false, "send the model search_tools and call_tool instead of every tool")
	alwaysLoad := fs.String("always-load", "", "with -search, the servers (ids, comma-separated) whose tools are sent as well")
	// The flag package would swallow the "--" that introduces a command.
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	servers, err := parseServers(append(fs.Args(), command...))
	if err != nil {
		return err
	}
	model := getenv("OPENAI_MODEL")
	if model == "" {
		return errors.New("OPENAI_MODEL is not set")
	}
	if *prompt == "" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("reading the prompt: %w", err)
		}
		*prompt = strings.TrimSpace(string(b))
	}
	if *prompt == "" {
		return errors.New("empty prompt")
	}

	m := mcpclient.New(&mcpclient.Options{
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		m.Close(ctx)
	}()
	for _, s := range servers {
		if err := connect(ctx, m, s); err != nil {
			return err
		}
	}
	var searchOpts *aitools.SearchModeOptions
	if *alwaysLoad != "" {
		searchOpts = &aitools.SearchModeOptions{AlwaysLoadedServers: strings.Split(*alwaysLoad, ",")}
	}
	// tools returns the tools to send: the catalog may have changed
	// (list_changed); an unchanged one costs nothing.
	tools := func() *aitools.ToolSet {
		if *search {
			return m.SearchMode(mcpclient.Filter{}, searchOpts)
		}
		return m.AITools(mcpclient.Filter{})
	}
	set := m.AITools(mcpclient.Filter{})
	fmt.Fprintf(stderr, "%d tools from %d servers\n", set.Len(), len(servers))
	for _, c := range set.Collisions() {
		fmt.Fprintf(stderr, "note: tools collide on %s; they got hashed names\n", c.Key)
	}
	if *search {
		fmt.Fprintf(stderr, "search mode: the model gets %d tools\n", tools().Len())
	}

	opts := []option.RequestOption{option.WithAPIKey(getenv("OPENAI_API_KEY"))}
	if base := getenv("OPENAI_BASE_URL"); base != "" {
		if !strings.HasSuffix(base, "/") {
			base += "/"
		}
		opts = append(opts, option.WithBaseURL(base))
	}
	client := openai.NewClient(opts...)
	messages := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(*prompt)}
	for turn := 0; turn < *maxTurns; turn++ {
		set = tools()
		params := openai.ChatCompletionNewParams{Model: model, Messages: messages}
		if set.Len() > 0 {
			params.Tools = aiopenai.ChatTools(set)
		}
		resp, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return fmt.Errorf("model request %d: %w", turn+1, err)
		}
		if len(resp.Choices) == 0 {
			return fmt.Errorf("model request %d: no choices in the reply", turn+1)
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			fmt.Fprintln(stdout, msg.Content)
			return nil
		}
		messages = append(messages, msg.ToParam())
		results := aiopenai.ChatToolMessages(ctx, set, msg.ToolCalls, nil)
		for i, call := range msg.ToolCalls {
			server, tool, _ := set.Lookup(callKey(call.Function.Name, call.Function.Arguments))
			fmt.Fprintf(stderr, "tool call %s (%s/%s) %s -> %s\n", call.Function.Name, server, tool,
				call.Function.Arguments, summary(results[i]))
		}
		messages = append(messages, results...)
	}
	return fmt.Errorf("no answer after %d model requests", *maxTurns)
}

// connect registers, connects and discovers a server.
func connect(ctx context.Context, m *mcpclient.Manager, s server) error {
	if _, err := m.RegisterServer(ctx, s.id, s.opts); err != nil {
		return err
	}
	res, err := m.ConnectToServer(ctx, s.id)
	if err != nil {
		return err
	}
	if res.State != mcpclient.StateConnected {
		if res.AuthURL != "" {
			return fmt.Errorf("mcp server %q needs authorization (not supported here): %w", s.id, res.Err)
		}
		return fmt.Errorf("connecting to mcp server %q: %w", s.id, res.Err)
	}
	d, err := m.DiscoverIfConnected(ctx, s.id, nil)
	if err != nil {
		return err
	}
	if !d.Success {
		return fmt.Errorf("listing the tools of mcp server %q: %w", s.id, d.Err)
	}
	return nil
}

// callKey is the key of the tool a call runs: for call_tool, the key it
// names.
func callKey(name, args string) string {
	if name != aitools.CallToolKey {
		return name
	}
	var a struct {
		Key string `json:"key"`
	}
	json.Unmarshal([]byte(args), &a)
	return a.Key
}

// summary shortens a tool message for the log.
func summary(msg openai.ChatCompletionMessageParamUnion) string {
	text := ""
	if msg.OfTool != nil {
		text = msg.OfTool.Content.OfString.Value
	}
	text = strings.ReplaceAll(text, "\n", " ")
	if len(text) > 120 {
		text = text[:117] + "..."
	}
	return text
}
