package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
	"github.com/agentmcp/agentmcp/store/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pg is the Postgres server of the tests that need one, started on first
// use.
var pg = pgtest.New()

func TestMain(m *testing.M) {
	if os.Getenv("AGENTMCP_TEST_STDIO_SERVER") != "" {
		os.Exit(stdioServer())
	}
	os.Exit(pg.Main(m))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// env is a Server on a SQLite file, served on 127.0.0.1.
type env struct {
	t    *testing.T
	path string // the database file
	st   *sqlite.Store
	srv  *Server
	ts   *httptest.Server
	opts *Options
}

// newEnv starts a Server on a fresh database (or the one at path).
func newEnv(t *testing.T, opts *Options) *env {
	t.Helper()
	return openEnv(t, filepath.Join(t.TempDir(), "agentmcp.db"), opts)
}

func openEnv(t *testing.T, path string, opts *Options) *env {
	t.Helper()
	st, err := sqlite.Open(testCtx(t), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Open(testCtx(t), st, opts)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	e := &env{t: t, path: path, st: st, srv: srv, ts: httptest.NewServer(srv), opts: opts}
	t.Cleanup(e.stop)
	return e
}

// stop shuts the server down as agentmcp serve does. It is idempotent.
func (e *env) stop() {
	e.srv.CloseStreams()
	e.ts.Close()
	if err := e.srv.Close(context.Background()); err != nil {
		e.t.Errorf("Close: %v", err)
	}
	e.st.Close()
}

// do sends a request with a JSON body (unless body is "") and returns the
// status, the headers and the body. hdr are "Name: value" pairs.
func (e *env) do(method, path, body string, hdr ...string) (int, http.Header, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(testCtx(e.t), method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ":")
		if strings.EqualFold(k, "Host") {
			req.Host = strings.TrimSpace(v)
			continue
		}
		req.Header.Set(k, strings.TrimSpace(v))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// create creates agent class/name (PUT /agents/{class}/{name}); hdr are
// as for do.
func (e *env) create(class, name string, hdr ...string) {
	e.t.Helper()
	if status, _, b := e.do("PUT", "/agents/"+class+"/"+name, "", hdr...); status != http.StatusCreated && status != http.StatusOK {
		e.t.Fatalf("creating agent %s/%s: %d %s", class, name, status, b)
	}
}

// client returns a Client of agent class/name.
func (e *env) client(class, name string) *client.Client {
	e.t.Helper()
	var o client.Options
	if e.opts != nil {
		o.Token = e.opts.Token
	}
	c, err := client.New(client.AgentURL(e.ts.URL, class, name), &o)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// stored returns the ids stored for agent ns.
func (e *env) stored(ns string) []string {
	e.t.Helper()
	rows, err := e.st.ListServers(testCtx(e.t), ns)
	if err != nil {
		e.t.Fatal(err)
	}
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// apiError decodes an error body.
func apiError(t *testing.T, b []byte) api.APIError {
	t.Helper()
	var eb api.ErrorResponse
	if err := json.Unmarshal(b, &eb); err != nil || eb.Error.Code == "" {
		t.Fatalf("not a JSON error body: %s", b)
	}
	return eb.Error
}

// mcpServer hosts a test MCP server on 127.0.0.1 (streamable HTTP with
// sessions) and returns it with its URL.
func mcpServer(t *testing.T, name string) (*mcptest.Server, string) {
	srv := mcptest.NewServer(name)
	_, url := mcpServerOf(t, srv.Server)
	return srv, url
}

// mcpServerOf hosts srv as mcpServer does.
func mcpServerOf(t *testing.T, srv *mcp.Server) (*mcp.Server, string) {
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv })
	return srv, hs.URL
}
