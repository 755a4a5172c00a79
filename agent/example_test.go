package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/mcptest"
	"github.com/agentmcp/agentmcp/internal/oauthtest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// An agent adds an MCP server, which it keeps in its store, and calls one
// of its tools.
func ExampleAgent_AddMCPServer() {
	ctx := context.Background()
	t := newExampleT()
	defer t.cleanup()
	// An MCP server on 127.0.0.1 stands in for a remote one.
	docs := mcptest.NewServer("docs")
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return docs.Server })

	st, err := sqlite.Open(ctx, filepath.Join(t.dir(), "agents.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	a, err := agent.Open(ctx, st, "assistant", "alice", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close(ctx)

	res, err := a.AddMCPServer(ctx, "Docs", hs.URL, &agent.AddOptions{ID: "docs"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("added:", res.ID, res.State)
	// Adding the same name and URL again is the same server.
	again, _ := a.AddMCPServer(ctx, "Docs", hs.URL+"/", nil)
	fmt.Println("again:", again.ID, again.State)

	state := a.MCPServers()
	fmt.Println("servers:", state.Order, state.Servers["docs"].State)
	out, err := a.CallTool(ctx, "docs", "add", map[string]any{"a": 2, "b": 3}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("2 + 3 =", out.Content[0].(*mcp.TextContent).Text)
	// Output:
	// added: docs ready
	// again: docs ready
	// servers: [docs] ready
	// 2 + 3 = 5
}

// A server behind OAuth: AddMCPServer returns the URL the user must visit;
// the authorization server sends the browser back to the agent's callback
// URL, which the application routes to the agent (IsCallbackRequest,
// HandleOAuthCallback); the server is then ready.
func ExampleAgent_HandleOAuthCallback() {
	ctx := context.Background()
	t := newExampleT()
	defer t.cleanup()
	// A fake authorization server and an MCP server it protects, on
	// 127.0.0.1.
	as := oauthtest.NewServer(t, nil)
	private := mcptest.NewServer("private")
	resource := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return private.Server }), nil)

	st, err := sqlite.Open(ctx, filepath.Join(t.dir(), "agents.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	// The application serves the agent's callbacks. Its origin is the
	// agent's CallbackHost: the callback URL of a server is
	// {CallbackHost}/agents/{class}/{name}/callback.
	var a *agent.Agent
	app := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.IsCallbackRequest(r) {
			a.HandleOAuthCallback(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	defer app.Close()
	a, err = agent.Open(ctx, st, "assistant", "alice", &agent.Options{CallbackHost: "http://" + app.Listener.Addr().String()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close(ctx)
	app.Start()
	// Where the browser lands after the callback (the default is the
	// origin itself).
	a.ConfigureOAuthCallback(agent.OAuthCallbackConfig{SuccessRedirect: "/signed-in"})

	res, err := a.AddMCPServer(ctx, "Private", resource.URL, &agent.AddOptions{ID: "private"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("added:", res.ID, res.State)

	// The user opens res.AuthURL and signs in; the authorization server
	// redirects the browser to the callback, which reaches the agent.
	loc, err := as.VisitAuthURL(ctx, res.AuthURL)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("callback path:", loc.Path)
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(loc.String())
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	next, _ := resp.Location()
	fmt.Println("callback answer:", resp.StatusCode, next.Path)

	// The server connects in the background (a call would wait for it).
	a.WaitForConnections(ctx)
	fmt.Println("state:", a.MCPServers().Servers["private"].State)
	out, err := a.CallTool(ctx, "private", "echo", map[string]any{"text": "hi"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Content[0].(*mcp.TextContent).Text)
	// Output:
	// added: private authenticating
	// callback path: /agents/assistant/alice/callback
	// callback answer: 302 /signed-in
	// state: ready
	// echo: hi
}

// A host keeps many agents on one store, each awake only while used: Use
// wakes an agent, its release lets it sleep, and a hibernated agent wakes
// again on its next Use with its servers back, their sessions resumed
// without a new handshake.
func ExampleHost() {
	ctx := context.Background()
	t := newExampleT()
	defer t.cleanup()
	// A legacy (session) server on 127.0.0.1, behind a proxy that counts
	// the handshakes (initialize requests) it passes.
	docs := mcptest.NewServer("docs")
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return docs.Server })
	proxy, counts := mcptest.CountingProxy(t, hs.URL)

	st, err := sqlite.Open(ctx, filepath.Join(t.dir(), "agents.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	// Agents idle for 5 minutes hibernate; at most 1,000 are awake at once.
	host := agent.NewHost(st, &agent.HostOptions{IdleTimeout: agent.DefaultIdleTimeout, MaxAwake: 1000})
	defer host.Close(ctx)

	a, release, err := host.Use(ctx, "assistant", "alice")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.AddMCPServer(ctx, "Docs", proxy.URL, &agent.AddOptions{ID: "docs"})
	release() // a must not be used after this
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("added:", res.ID, res.State, "awake:", host.Awake())

	// Hibernate now, as the idle timeout or the awake cap would.
	fmt.Println("hibernated:", host.Hibernate(ctx, "assistant", "alice"), "awake:", host.Awake())

	// The next use wakes the agent from the store. Its server comes back
	// in the background; the call waits for it alone.
	a, release, err = host.Use(ctx, "assistant", "alice")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer release()
	out, err := a.CallTool(ctx, "docs", "add", map[string]any{"a": 2, "b": 3}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("after the wake: 2 + 3 =", out.Content[0].(*mcp.TextContent).Text)
	// Its catalog is listed again once its discovery is done.
	a.WaitForConnections(ctx)
	tools := a.ListTools(mcpclient.Filter{ServerID: []string{"docs"}})
	fmt.Println("tools of docs:", slices.ContainsFunc(tools, func(t mcpclient.Tool) bool { return t.Name == "add" }))
	s := host.Stats()
	fmt.Println("wakes:", s.Wakes, "hibernations:", s.Hibernations, "handshakes:", counts.Handshakes.Load())
	// Output:
	// added: docs ready awake: [assistant/alice]
	// hibernated: true awake: []
	// after the wake: 2 + 3 = 5
	// tools of docs: true
	// wakes: 2 hibernations: 1 handshakes: 1
}

// exampleT is the part of testing.TB that internal/mcptest and
// internal/oauthtest use, for examples, which have no testing.TB: Cleanup
// functions run at cleanup, and a failure panics (failing the example).
type exampleT struct {
	testing.TB // nil: the methods below are all that are called
	cleanups   []func()
	tmp        string
}

func newExampleT() *exampleT { return &exampleT{} }

func (t *exampleT) Helper()                      {}
func (t *exampleT) Logf(string, ...any)          {}
func (t *exampleT) Cleanup(f func())             { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Errorf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (t *exampleT) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (t *exampleT) Fatal(args ...any)            { panic(fmt.Sprint(args...)) }

// dir returns a temporary directory, removed at cleanup.
func (t *exampleT) dir() string {
	if t.tmp == "" {
		dir, err := os.MkdirTemp("", "agent-example-")
		if err != nil {
			panic(err)
		}
		t.tmp = dir
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	return t.tmp
}

// cleanup runs the Cleanup functions, last first.
func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
