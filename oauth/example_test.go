package oauth_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/oauth"
)

// A Provider signs in to an MCP server behind OAuth once: the user visits
// the authorization URL, the callback's query goes to Exchange, and the
// tokens go to the Storage. A Provider made later over the same Storage (a
// process restarted over a store that outlived it; here one MemoryStorage
// stands in for it) connects with those tokens, without a new sign-in.
func Example() {
	ctx := context.Background()
	as := newAuthServer()
	defer as.Close()
	resource := protectedServer(as)
	defer resource.Close()

	storage := &oauth.MemoryStorage{}
	cfg := oauth.Config{
		ServerID:    "docs",
		ServerURL:   resource.URL + "/mcp",
		RedirectURL: "http://127.0.0.1/callback", // where the application receives the callback
	}
	connect := func() *mcpclient.Manager {
		p, err := oauth.New(storage, cfg)
		if err != nil {
			panic(err)
		}
		m := mcpclient.New(nil)
		m.RegisterServer(ctx, "docs", mcpclient.ServerOptions{URL: cfg.ServerURL, Auth: p})
		res, _ := m.ConnectToServer(ctx, "docs")
		fmt.Println("connect:", res.State)
		if res.State == mcpclient.StateAuthenticating {
			// The user opens res.AuthURL and signs in; the authorization
			// server sends the browser to RedirectURL with a code and the
			// state, which the application hands to Exchange.
			callback, err := as.signIn(res.AuthURL)
			if err != nil {
				panic(err)
			}
			if err := p.Exchange(ctx, callback.Query()); err != nil {
				panic(err)
			}
			res, _ = m.ConnectToServer(ctx, "docs")
			fmt.Println("after sign-in:", res.State)
		}
		return m
	}

	m := connect()
	m.Close(ctx)
	// The process restarts: a new Provider over the same storage.
	m = connect()
	defer m.Close(ctx)
	out, err := m.CallTool(ctx, "docs", "echo", map[string]any{"text": "hi"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Content[0].(*mcp.TextContent).Text)
	fmt.Println("sign-ins:", as.codes.Load(), "tokens issued:", as.tokens.Load())
	// Output:
	// connect: authenticating
	// after sign-in: connected
	// connect: connected
	// echo: hi
	// sign-ins: 1 tokens issued: 1
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

// signIn follows an authorization URL as the user's browser would, up to
// the redirect to the application's callback, which it returns.
func (as *authServer) signIn(authURL string) (*url.URL, error) {
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(authURL)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp.Location()
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
