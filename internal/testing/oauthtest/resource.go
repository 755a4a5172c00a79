package oauthtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// PRMLocation is where a Resource serves its protected resource metadata.
type PRMLocation int

const (
	// PRMPathAware serves it at /.well-known/oauth-protected-resource
	// followed by the MCP endpoint's path (RFC 9728 §3.1).
	PRMPathAware PRMLocation = iota
	// PRMRoot serves it at /.well-known/oauth-protected-resource.
	PRMRoot
	// PRMBoth serves it at both.
	PRMBoth
	// PRMHeaderOnly serves it only at ResourceOptions.MetadataPath, which
	// a client can learn only from the WWW-Authenticate challenge.
	PRMHeaderOnly
	// PRMNone serves none, as a 2025-03-26 server, whose authorization
	// server is its own origin.
	PRMNone
)

// ResourceOptions configure a Resource. Every field is optional; the zero
// value of each is described with it.
type ResourceOptions struct {
	// Path is the MCP endpoint's path. Empty means "/mcp".
	Path string

	// Metadata is where the metadata is served. The zero value is
	// PRMPathAware.
	Metadata PRMLocation

	// MetadataPath is the metadata's path for PRMHeaderOnly. Empty means
	// "/oauthtest/resource-metadata".
	MetadataPath string

	// OmitMetadataHeader leaves resource_metadata out of challenges, so
	// that clients must find the metadata at the well-known URLs.
	OmitMetadataHeader bool

	// MetadataResource, if set, is served as the metadata's "resource"
	// instead of the endpoint's URL, for clients that must refuse it.
	MetadataResource string

	// AuthorizationServers are the metadata's authorization_servers. Nil
	// means the AuthServer's issuer; set it to name another server (one
	// that does not exist, or http://169.254.169.254/ for SSRF tests).
	AuthorizationServers []string

	// ScopesSupported is the metadata's scopes_supported. Nil omits it.
	ScopesSupported []string

	// ChallengeScopes is the scope of 401 challenges. Nil omits it.
	ChallengeScopes []string

	// RequiredScopes are needed for every MCP request; a token without
	// them gets 403 insufficient_scope. Nil requires none.
	RequiredScopes []string

	// ToolScopes are the scopes each tool needs, on top of
	// RequiredScopes: a tools/call of a tool listed here with a token
	// without them gets 403 insufficient_scope naming the scopes needed.
	ToolScopes map[string][]string

	// IgnoreAudience accepts tokens issued for another resource. False
	// accepts only tokens whose resource (RFC 8707) is the endpoint's URL,
	// exactly.
	IgnoreAudience bool

	// SameOrigin makes ServeMCP serve the resource on the AuthServer's own
	// origin (at Path, which then must not clash with the server's
	// endpoints), as 2025-03-26 servers were their own authorization
	// servers. False serves it on a port of its own.
	SameOrigin bool
}

// ResourceCounts counts the requests a Resource received.
type ResourceCounts struct {
	// Served counts requests passed to the MCP handler.
	Served atomic.Int64
	// NoToken counts requests rejected with 401 for want of a bearer
	// token.
	NoToken atomic.Int64
	// InvalidToken counts requests rejected with 401 for a token that is
	// unknown, expired, revoked, or for another resource.
	InvalidToken atomic.Int64
	// InsufficientScope counts requests rejected with 403.
	InsufficientScope atomic.Int64
	// Metadata counts requests for the protected resource metadata.
	Metadata atomic.Int64
}

// ResourceRequest is a request to a Resource, as recorded.
type ResourceRequest struct {
	Method, Path string
	// Token is the bearer token presented, if any.
	Token string
	// Methods are the JSON-RPC methods of a POST's body; Tools the
	// names of the tools it calls.
	Methods, Tools []string
	// Status is the status of a rejection (401, 403, 404) or of the
	// metadata; 0 when the request was passed to the MCP handler.
	Status int
	// Error is the bearer error of a rejection: "" (no token),
	// "invalid_token" or "insufficient_scope".
	Error string
}

// Resource is an MCP endpoint protected by an AuthServer's tokens. It is an
// http.Handler for the root of a server: it serves the endpoint at its Path
// and its metadata at the well-known paths.
type Resource struct {
	// URL is the MCP endpoint's URL, for a Resource made by ServeMCP; ""
	// for one made by ProtectMCP, which learns its URL from each request.
	URL string

	// Counts counts the requests received.
	Counts ResourceCounts

	as   *AuthServer
	next http.Handler
	opts ResourceOptions // a copy

	// mu guards requests.
	mu       sync.Mutex
	requests []ResourceRequest
}

// ProtectMCP returns next behind bearer tokens from s. The Resource serves
// the root of a server: mount it at "/". opts may be nil.
func (s *AuthServer) ProtectMCP(next http.Handler, opts *ResourceOptions) *Resource {
	r := &Resource{as: s, next: next}
	if opts != nil {
		r.opts = *opts
		r.opts.AuthorizationServers = slices.Clone(opts.AuthorizationServers)
		r.opts.ScopesSupported = slices.Clone(opts.ScopesSupported)
		r.opts.ChallengeScopes = slices.Clone(opts.ChallengeScopes)
		r.opts.RequiredScopes = slices.Clone(opts.RequiredScopes)
		r.opts.ToolScopes = make(map[string][]string, len(opts.ToolScopes))
		for k, v := range opts.ToolScopes {
			r.opts.ToolScopes[k] = slices.Clone(v)
		}
	}
	if r.opts.Path == "" {
		r.opts.Path = "/mcp"
	}
	if r.opts.MetadataPath == "" {
		r.opts.MetadataPath = "/oauthtest/resource-metadata"
	}
	if r.opts.AuthorizationServers == nil {
		r.opts.AuthorizationServers = []string{s.issuer}
	}
	return r
}

// ServeMCP is ProtectMCP, served on a fresh 127.0.0.1 port (or on s's own,
// with SameOrigin) until the test ends. Wrap an mcptest server with
// mcptest.Handler to get next.
func (s *AuthServer) ServeMCP(t testing.TB, next http.Handler, opts *ResourceOptions) *Resource {
	t.Helper()
	r := s.ProtectMCP(next, opts)
	if r.opts.SameOrigin {
		s.mu.Lock()
		if s.mcp != nil {
			s.mu.Unlock()
			t.Fatal("oauthtest: ServeMCP: the server already serves a resource")
		}
		s.mcp = r
		s.mu.Unlock()
		r.URL = s.URL + r.opts.Path
		return r
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	r.URL = srv.URL + r.opts.Path
	return r
}

// MetadataURL is the URL of the metadata named in challenges (empty for a
// Resource made by ProtectMCP, and for PRMNone).
func (r *Resource) MetadataURL() string {
	if r.URL == "" {
		return ""
	}
	return strings.TrimSuffix(r.URL, r.opts.Path) + r.metadataPath()
}

// Requests returns every request received so far, in order.
func (r *Resource) Requests() []ResourceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := make([]ResourceRequest, len(r.requests))
	for i, q := range r.requests {
		rs[i] = q
		rs[i].Methods = slices.Clone(q.Methods)
		rs[i].Tools = slices.Clone(q.Tools)
	}
	return rs
}

// metadataPaths are the paths the metadata is served at.
func (r *Resource) metadataPaths() []string {
	const wk = "/.well-known/oauth-protected-resource"
	aware := wk + strings.TrimSuffix(r.opts.Path, "/")
	switch r.opts.Metadata {
	case PRMPathAware:
		return []string{aware}
	case PRMRoot:
		return []string{wk}
	case PRMBoth:
		return []string{aware, wk}
	case PRMHeaderOnly:
		return []string{r.opts.MetadataPath}
	}
	return nil
}

// metadataPath is the path named in challenges, "" for none.
func (r *Resource) metadataPath() string {
	if ps := r.metadataPaths(); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

func origin(req *http.Request) string {
	if req.TLS != nil {
		return "https://" + req.Host
	}
	return "http://" + req.Host
}

func (r *Resource) record(q ResourceRequest) {
	r.mu.Lock()
	r.requests = append(r.requests, q)
	r.mu.Unlock()
}

// ServeHTTP serves the metadata and the protected MCP endpoint.
func (r *Resource) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	q := ResourceRequest{Method: req.Method, Path: req.URL.Path}
	if slices.Contains(r.metadataPaths(), req.URL.Path) {
		r.Counts.Metadata.Add(1)
		if !allowMethods(w, req, http.MethodGet, http.MethodHead) {
			q.Status = http.StatusMethodNotAllowed
			r.record(q)
			return
		}
		resource := r.opts.MetadataResource
		if resource == "" {
			resource = origin(req) + r.opts.Path
		}
		m := map[string]any{
			"resource":                 resource,
			"authorization_servers":    r.opts.AuthorizationServers,
			"bearer_methods_supported": []string{"header"},
			"resource_name":            "oauthtest MCP server",
		}
		if len(r.opts.ScopesSupported) > 0 {
			m["scopes_supported"] = r.opts.ScopesSupported
		}
		q.Status = http.StatusOK
		r.record(q)
		writeJSON(w, http.StatusOK, m)
		return
	}
	if req.URL.Path != r.opts.Path {
		q.Status = http.StatusNotFound
		r.record(q)
		http.NotFound(w, req)
		return
	}

	// The JSON-RPC body, for the record and for per-tool scopes.
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(io.LimitReader(req.Body, 4<<20))
		req.Body.Close()
		if err != nil {
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		q.Methods, q.Tools = jsonRPCCalls(body)
	}

	tok, hasToken := bearer(req)
	q.Token = tok
	challenge := func(status int, bearerErr, desc string, scopes []string) {
		q.Status, q.Error = status, bearerErr
		r.record(q)
		var params []string
		if bearerErr != "" {
			params = append(params, param("error", bearerErr))
		}
		if desc != "" {
			params = append(params, param("error_description", desc))
		}
		if len(scopes) > 0 {
			params = append(params, param("scope", strings.Join(scopes, " ")))
		}
		if p := r.metadataPath(); p != "" && !r.opts.OmitMetadataHeader {
			params = append(params, param("resource_metadata", origin(req)+p))
		}
		h := "Bearer"
		if len(params) > 0 {
			h += " " + strings.Join(params, ", ")
		}
		w.Header().Set("WWW-Authenticate", h)
		http.Error(w, http.StatusText(status), status)
	}
	if !hasToken {
		r.Counts.NoToken.Add(1)
		challenge(http.StatusUnauthorized, "", "", r.opts.ChallengeScopes)
		return
	}
	scopes, resource, ok := r.as.valid(tok)
	if !ok {
		r.Counts.InvalidToken.Add(1)
		challenge(http.StatusUnauthorized, "invalid_token", "the access token is unknown, expired or revoked", r.opts.ChallengeScopes)
		return
	}
	if want := origin(req) + r.opts.Path; !r.opts.IgnoreAudience && resource != want {
		r.Counts.InvalidToken.Add(1)
		challenge(http.StatusUnauthorized, "invalid_token", "the access token is for another resource", r.opts.ChallengeScopes)
		return
	}
	needed := slices.Clone(r.opts.RequiredScopes)
	for _, tool := range q.Tools {
		for _, sc := range r.opts.ToolScopes[tool] {
			if !slices.Contains(needed, sc) {
				needed = append(needed, sc)
			}
		}
	}
	for _, sc := range needed {
		if !slices.Contains(scopes, sc) {
			r.Counts.InsufficientScope.Add(1)
			challenge(http.StatusForbidden, "insufficient_scope", "", needed)
			return
		}
	}
	r.Counts.Served.Add(1)
	r.record(q)
	r.next.ServeHTTP(w, req)
}

// bearer returns the request's bearer token (RFC 6750 §2.1).
func bearer(req *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// param formats an auth-param as a quoted string.
func param(name, value string) string {
	value = strings.ReplaceAll(value, `\`, `\\`)
	value = strings.ReplaceAll(value, `"`, `\"`)
	return name + `="` + value + `"`
}

// jsonRPCCalls returns the methods of a JSON-RPC message or batch, and the
// names of the tools it calls.
func jsonRPCCalls(body []byte) (methods, tools []string) {
	type message struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	var msgs []message
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		json.Unmarshal(body, &msgs)
	} else {
		var m message
		if json.Unmarshal(body, &m) == nil {
			msgs = []message{m}
		}
	}
	for _, m := range msgs {
		if m.Method == "" {
			continue
		}
		methods = append(methods, m.Method)
		var p struct {
			Name string `json:"name"`
		}
		if m.Method == "tools/call" && json.Unmarshal(m.Params, &p) == nil && p.Name != "" {
			tools = append(tools, p.Name)
		}
	}
	return methods, tools
}
