package agent_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// An agent adds an MCP server, which it keeps in its store, and calls one
// of its tools.
func ExampleAgent_AddMCPServer() {
	ctx := context.Background()
	// A go-sdk MCP server on 127.0.0.1 stands in for a remote one.
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return docsServer(nil) },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	defer hs.Close()

	dir, err := os.MkdirTemp("", "agent-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "agents.db"), nil)
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
	// An authorization server and an MCP server it protects, on
	// 127.0.0.1 (see authServer and protectedServer below).
	as := newAuthServer()
	defer as.Close()
	resource := protectedServer(as)
	defer resource.Close()

	dir, err := os.MkdirTemp("", "agent-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "agents.db"), nil)
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

	res, err := a.AddMCPServer(ctx, "Private", resource.URL+"/mcp", &agent.AddOptions{ID: "private"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("added:", res.ID, res.State)

	// The user opens res.AuthURL and signs in; the authorization server
	// redirects the browser to the callback, which reaches the agent.
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(res.AuthURL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("callback path:", loc.Path)
	resp, err = browser.Get(loc.String())
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
	// A go-sdk MCP server on 127.0.0.1 that keeps sessions (the 2025-11-25
	// era), counting the handshakes its clients complete.
	var handshakes atomic.Int32
	docs := docsServer(&mcp.ServerOptions{
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { handshakes.Add(1) },
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return docs }, nil))
	defer hs.Close()
	defer func() { // the sessions it keeps for its clients to resume
		for ss := range docs.Sessions() {
			ss.Close()
		}
	}()

	dir, err := os.MkdirTemp("", "agent-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "agents.db"), nil)
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
	res, err := a.AddMCPServer(ctx, "Docs", hs.URL, &agent.AddOptions{ID: "docs"})
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
	fmt.Println("wakes:", s.Wakes, "hibernations:", s.Hibernations, "handshakes:", handshakes.Load())
	// Output:
	// added: docs ready awake: [assistant/alice]
	// hibernated: true awake: []
	// after the wake: 2 + 3 = 5
	// tools of docs: true
	// wakes: 2 hibernations: 1 handshakes: 1
}

// docsServer returns a go-sdk MCP server with one tool, "add".
func docsServer(opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1.0.0"}, opts)
	type addArgs struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(in.A + in.B)}}}, nil, nil
		})
	return s
}

// authServer is the smallest authorization server the flow needs, on
// 127.0.0.1: RFC 8414 metadata, dynamic registration, an authorization
// endpoint that signs the user in at once, and a token endpoint. It checks
// nothing a real one would (PKCE, the client, the redirect URI): it only
// shows the flow.
type authServer struct {
	*httptest.Server
	mu     sync.Mutex
	issued map[string]bool // access tokens
	codes  atomic.Int32    // sign-ins
	tokens atomic.Int32    // token responses
}

func newAuthServer() *authServer {
	as := &authServer{issued: map[string]bool{}}
	mux := http.NewServeMux()
	as.Server = httptest.NewServer(mux)
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                           as.URL,
			"authorization_endpoint":           as.URL + "/authorize",
			"token_endpoint":                   as.URL + "/token",
			"registration_endpoint":            as.URL + "/register",
			"response_types_supported":         []string{"code"},
			"grant_types_supported":            []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var meta map[string]any
		json.NewDecoder(r.Body).Decode(&meta)
		meta["client_id"] = "client-" + rand.Text()
		writeJSON(w, http.StatusCreated, meta)
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		as.codes.Add(1)
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {rand.Text()}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		as.tokens.Add(1)
		tok := rand.Text()
		as.mu.Lock()
		as.issued[tok] = true
		as.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{
			"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rand.Text(),
		})
	})
	return as
}

// verify is the resource server's check of an access token.
func (as *authServer) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if !as.issued[tok] {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
}

// protectedServer is a go-sdk MCP server with a tool "echo" at /mcp on
// 127.0.0.1, which takes the tokens of as (RFC 9728 metadata tells
// clients where to get them).
func protectedServer(as *authServer) *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mux := http.NewServeMux()
	hs := httptest.NewUnstartedServer(mux)
	origin := "http://" + hs.Listener.Addr().String()
	metadata := "/.well-known/oauth-protected-resource/mcp"
	mux.Handle(metadata, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             origin + "/mcp",
		AuthorizationServers: []string{as.URL},
	}))
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	mux.Handle("/mcp", auth.RequireBearerToken(as.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: origin + metadata})(handler))
	hs.Start()
	return hs
}
