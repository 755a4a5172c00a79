// Command client is the MCP client that the conformance suite
// (@modelcontextprotocol/conformance) drives: an mcpclient.Manager that does
// what the scenario named by MCP_CONFORMANCE_SCENARIO expects, against the
// server URL given as its last argument.
//
// Each scenario is an entry of scenarios(); add one there to support a new
// scenario (the OAuth ones need MCP_CONFORMANCE_CONTEXT, which run passes on
// in env).
//
//	conformance client --command /path/to/client --scenario tools_call
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		stop()
		os.Exit(1)
	}
}

// serverID is the id the scenario's server is registered under.
const serverID = "conformance"

// env is what a scenario knows of its invocation.
type env struct {
	// URL is the scenario's server URL (the last argument).
	URL string
	// Context is MCP_CONFORMANCE_CONTEXT, the scenario's JSON context
	// (credentials for the auth scenarios), or "".
	Context string
	Logger  *slog.Logger
	// oauth is the scenario's OAuth provider, if it authorises with a
	// browser (auth.go), and authorizations counts the user's visits.
	oauth          *oauth.Provider
	authorizations int
}

// A scenario drives a Manager through what one conformance scenario checks.
type scenario struct {
	// Options, if set, adjusts the Manager's options.
	Options func(e *env, o *mcpclient.Options) error
	// Server, if set, adjusts the server's options before it is registered
	// (an AuthProvider, say).
	Server func(e *env, m *mcpclient.Manager, o *mcpclient.ServerOptions) error
	// Configure, if set, runs before the server is registered (handlers).
	Configure func(e *env, m *mcpclient.Manager) error
	// Run runs once the server is connected and discovered.
	Run func(ctx context.Context, e *env, m *mcpclient.Manager) error
}

// scenarios is the table of the scenarios this client supports, by name.
func scenarios() map[string]scenario {
	s := map[string]scenario{
		// The handshake and a tools/list.
		"initialize": {},
		"tools_call": {Run: func(ctx context.Context, _ *env, m *mcpclient.Manager) error {
			return callExpect(ctx, m, "add_numbers", map[string]any{"a": 5, "b": 3}, "8")
		}},
		// The server asks for a form whose fields all have defaults; the
		// user accepts without filling any in, and the client fills in the
		// defaults (SEP-1034).
		"elicitation-sep1034-client-defaults": {
			Configure: func(_ *env, m *mcpclient.Manager) error {
				m.ConfigureElicitationHandlers(&input.ElicitationHandlers{
					Form: func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
					},
				})
				return nil
			},
			Run: func(ctx context.Context, _ *env, m *mcpclient.Manager) error {
				return callExpect(ctx, m, "test_client_elicitation_defaults", map[string]any{}, "Elicitation completed")
			},
		},
		// The server ends the call's SSE stream early; the client must
		// resume it with Last-Event-ID after the retry delay.
		"sse-retry": {Run: func(ctx context.Context, _ *env, m *mcpclient.Manager) error {
			return callExpect(ctx, m, "test_reconnection", map[string]any{}, "Reconnection test completed")
		}},
	}
	maps.Copy(s, authScenarios())
	return s
}

// callExpect calls a tool and checks that its text contains want.
func callExpect(ctx context.Context, m *mcpclient.Manager, tool string, args map[string]any, want string) error {
	return callExpectAuth(ctx, nil, m, tool, args, want)
}

// callExpectAuth is callExpect that authorises again when the server asks
// (step-up), through e.
func callExpectAuth(ctx context.Context, e *env, m *mcpclient.Manager, tool string, args map[string]any, want string) error {
	res, err := m.CallTool(ctx, serverID, tool, args, nil)
	for {
		var areq *mcpclient.AuthRequiredError
		if e == nil || !errors.As(err, &areq) {
			break
		}
		if err := e.authorize(ctx, m, areq.AuthURL); err != nil {
			return err
		}
		res, err = m.CallTool(ctx, serverID, tool, args, nil)
	}
	if err != nil {
		return err
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError || !strings.Contains(text.String(), want) {
		return fmt.Errorf("%s returned %q (error %t), want %q in it", tool, text.String(), res.IsError, want)
	}
	return nil
}

// run runs the scenario named in the environment against the server URL
// that ends args, logging to logs.
func run(ctx context.Context, args []string, getenv func(string) string, logs io.Writer) (err error) {
	if len(args) == 0 {
		return errors.New("usage: client <server-url> (with MCP_CONFORMANCE_SCENARIO set)")
	}
	name := getenv("MCP_CONFORMANCE_SCENARIO")
	sc, ok := scenarios()[name]
	if !ok {
		return fmt.Errorf("unsupported scenario %q", name)
	}
	e := env{
		URL:     args[len(args)-1],
		Context: getenv("MCP_CONFORMANCE_CONTEXT"),
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	ctx, cancel := context.WithTimeout(ctx, 25*time.Second) // the suite kills clients at 30 s
	defer cancel()

	opts := mcpclient.Options{
		Logger:     e.Logger,
		ClientInfo: &mcp.Implementation{Name: "agentmcp-conformance-client", Version: mcpclient.Version},
	}
	if sc.Options != nil {
		if err := sc.Options(&e, &opts); err != nil {
			return err
		}
	}
	m := mcpclient.New(&opts)
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, m.CloseAllConnections(closeCtx), m.Close(closeCtx))
	}()
	if sc.Configure != nil {
		if err := sc.Configure(&e, m); err != nil {
			return err
		}
	}
	so := mcpclient.ServerOptions{Name: name, URL: e.URL}
	if sc.Server != nil {
		if err := sc.Server(&e, m, &so); err != nil {
			return err
		}
	}
	if _, err := m.RegisterServer(ctx, serverID, so); err != nil {
		return err
	}
	if err := connectReady(ctx, &e, m); err != nil {
		return err
	}
	if sc.Run == nil {
		return nil
	}
	return sc.Run(ctx, &e, m)
}
