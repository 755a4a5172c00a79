package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
	"github.com/jackc/pgx/v5"
)

// awake reports whether agent class/name is awake.
func (e *env) awake(class, name string) bool {
	return slices.Contains(e.srv.Agents(), api.AgentInfo{Class: class, Name: name})
}

// TestHibernateRoute: POST .../hibernate puts an idle agent to sleep
// (nothing of it left awake) and the next request wakes it with its
// servers; a stream keeps it awake (409 agent_busy); hibernating an agent
// that sleeps already is not an error, and never wakes it.
func TestHibernateRoute(t *testing.T) {
	t.Parallel()
	_, url := mcpServer(t, "one")
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url, ID: "one"}); err != nil {
		t.Fatal(err)
	}
	if status, _, b := e.do("POST", "/agents/test/a/hibernate", ""); status != http.StatusNoContent {
		t.Fatalf("hibernate: %d %s", status, b)
	}
	if e.awake("test", "a") {
		t.Fatal("the agent is still awake")
	}
	if status, _, b := e.do("POST", "/agents/test/a/hibernate", ""); status != http.StatusNoContent || e.awake("test", "a") {
		t.Fatalf("hibernating a sleeping agent: %d %s (awake: %v)", status, b, e.awake("test", "a"))
	}
	res, err := c.CallTool(ctx, "one", "echo", map[string]string{"text": "awake"})
	if err != nil || toolResult(t, res).Content[0].(*mcp.TextContent).Text != "echo: awake" {
		t.Fatalf("call on the sleeping agent: %+v %v", res, err)
	}
	if !e.awake("test", "a") {
		t.Fatal("the call did not wake the agent")
	}

	conn, err := client.Dial(ctx, client.AgentURL(e.ts.URL, "test", "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	status, _, b := e.do("POST", "/agents/test/a/hibernate", "")
	if status != http.StatusConflict || apiError(t, b).Code != api.CodeAgentBusy {
		t.Errorf("hibernate with a stream open: %d %s", status, b)
	}
	conn.Close()
	if status, _, _ := e.do("GET", "/agents/test/a/hibernate", ""); status != http.StatusMethodNotAllowed {
		t.Errorf("GET hibernate: %d", status)
	}
}

// TestElicitationKeepsAwake: an agent with a pending elicitation is not
// hibernated.
func TestElicitationKeepsAwake(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "asker", URL: askServer(t), ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	ch := frames(t, ctx, client.AgentURL(e.ts.URL, "test", "a"))
	called := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "asker", "ask", nil)
		called <- err
	}()
	pending := nextElicitations(t, ch)
	if len(pending) != 1 {
		t.Fatalf("pending: %+v", pending)
	}
	a, release, err := e.srv.Use(ctx, "test", "a")
	if err != nil {
		t.Fatal(err)
	}
	release()
	// Only the elicitation's own wait would keep it awake once the call's
	// request and the stream are gone; the host asks the agent.
	if !a.Busy() {
		t.Error("an agent with a pending elicitation is not busy")
	}
	if status, _, b := e.do("POST", "/agents/test/a/hibernate", ""); status != http.StatusConflict {
		t.Errorf("hibernate with a pending elicitation: %d %s", status, b)
	}
	if status, _, b := e.do("POST", "/agents/test/a/elicitations/"+pending[0].ID, `{"action":"decline"}`); status != http.StatusNoContent {
		t.Fatalf("answer: %d %s", status, b)
	}
	if err := <-called; err != nil {
		t.Fatal(err)
	}
}

// TestCallbackWakesAgent: an agent in the middle of an OAuth flow is not
// hibernated; after a restart (every agent asleep), the provider's
// callback wakes the agent, which completes the flow.
func TestCallbackWakesAgent(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	srv := mcptest.NewServer("private")
	res := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }), nil)
	e := newEnv(t, nil)
	ctx := testCtx(t)
	r, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "private", URL: res.URL, ID: "private"})
	if err != nil || r.AuthURL == "" {
		t.Fatalf("add: %+v, %v", r, err)
	}
	loc, err := as.VisitAuthURL(ctx, r.AuthURL)
	if err != nil {
		t.Fatal(err)
	}
	status, _, b := e.do("POST", "/agents/test/a/hibernate", "")
	if status != http.StatusConflict || apiError(t, b).Code != api.CodeAgentBusy {
		t.Errorf("hibernate during an OAuth flow: %d %s", status, b)
	}

	e.stop()
	e2 := openEnv(t, e.path, nil)
	if e2.awake("test", "a") {
		t.Fatal("awake after the restart")
	}
	// The callback URL names the first server's address; send it to the
	// second.
	status, _, b = e2.do("GET", loc.RequestURI(), "")
	if status != http.StatusOK || !strings.Contains(string(b), "<h2>Authorized</h2>") {
		t.Fatalf("callback to the sleeping agent: %d %s", status, b)
	}
	e2.srv.WaitForConnections(ctx)
	st, err := e2.client("test", "a").MCPServers(ctx)
	if err != nil || st.Servers["private"].State != "ready" {
		t.Errorf("after the callback: %+v %v", st.Servers["private"], err)
	}
}

// TestManyAgents: far more agents than may be awake at once all work: the
// 101st of a host with a cap of 10 (each created, used and woken again),
// and the 100,001st of a database with 100,000 stored agents, where a
// stored one wakes on its first request and nothing else is awake.
func TestManyAgents(t *testing.T) {
	t.Parallel()
	_, url := mcpServer(t, "one")
	ctx := testCtx(t)
	start := time.Now()
	e := newEnv(t, &Options{MaxAwake: 10})
	for i := range 101 {
		c := e.client("test", fmt.Sprint("a", i))
		if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url, ID: "one"}); err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
	}
	for _, i := range []int{0, 50, 100} {
		res, err := e.client("test", fmt.Sprint("a", i)).CallTool(ctx, "one", "echo", map[string]string{"text": "hi"})
		if err != nil || toolResult(t, res).IsError {
			t.Fatalf("agent %d woken again: %+v %v", i, res, err)
		}
	}
	if s := e.srv.Host().Stats(); s.MaxAwakeSeen > 10 || s.Hibernations < 91 {
		t.Errorf("host stats %+v with MaxAwake 10", s)
	}

	t.Logf("101 agents: %v", time.Since(start))

	// 100,000 stored agents, on Postgres: seeding them in SQLite takes
	// minutes under the race detector (make bench starts serve on such a
	// SQLite file).
	dsn := pg.Database(t)
	st, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seed := store.Server{Namespace: "many/seed", ID: "one", Name: "one", URL: url}
	if err := st.PutServer(ctx, seed); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `
		INSERT INTO agentmcp_servers (namespace, id, name, url, callback_url, client_id, auth_url, options, created_at, updated_at, keep_awake)
		SELECT 'many/a' || i, id, name, url, callback_url, client_id, auth_url, options, created_at, updated_at, keep_awake
		FROM generate_series(0, 99999) AS i, agentmcp_servers WHERE namespace = 'many/seed'`)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteServer(ctx, seed.Namespace, seed.ID); err != nil {
		t.Fatal(err)
	}
	srv, err := Open(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	ts := httptest.NewServer(srv)
	defer ts.Close()
	t.Logf("seeded: %v", time.Since(start))
	agentClient := func(class, name string) *client.Client {
		c, err := client.New(client.AgentURL(ts.URL, class, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	res, err := agentClient("many", "a99999").CallTool(ctx, "one", "echo", map[string]string{"text": "hi"})
	if err != nil || toolResult(t, res).IsError {
		t.Fatalf("a stored agent: %+v %v", res, err)
	}
	if _, err := agentClient("many", "new").AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url, ID: "one"}); err != nil {
		t.Fatalf("the 100,001st agent: %v", err)
	}
	if got := srv.Agents(); len(got) != 2 {
		t.Errorf("awake: %v, want the two used", got)
	}
	t.Logf("used: %v", time.Since(start))
	agents, err := client.ListAgents(ctx, ts.URL, nil)
	if err != nil || len(agents) != maxAgentsListed {
		t.Errorf("GET /agents listed %d agents (%v)", len(agents), err)
	}
	ts.Close() // before srv.Close: no request left
}

// TestBusyRoute: GET .../busy says what keeps an agent awake (the figures
// and the words of hibernate's 409), without counting itself, and never
// wakes an agent.
func TestBusyRoute(t *testing.T) {
	t.Parallel()
	srv, url := mcpServer(t, "one")
	t.Cleanup(srv.ReleaseSlow)
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url, ID: "one"}); err != nil {
		t.Fatal(err)
	}
	busy := func(what string) api.BusyState {
		t.Helper()
		status, _, b := e.do("GET", "/agents/test/a/busy", "")
		var st api.BusyState
		if status != http.StatusOK || json.Unmarshal(b, &st) != nil {
			t.Fatalf("%s: GET busy: %d %s", what, status, b)
		}
		return st
	}
	if st := busy("idle"); !st.Awake || !st.Idle() || st.Reason != "idle" {
		t.Errorf("an idle agent: %+v", st)
	}

	called := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "one", "slow", map[string]any{})
		called <- err
	}()
	<-srv.SlowStarted
	st := busy("a call in flight")
	if !st.Awake || st.Work < 1 || st.InUse < 1 || !strings.Contains(st.Reason, "call") {
		t.Errorf("an agent with a call in flight: %+v", st)
	}
	status, _, b := e.do("POST", "/agents/test/a/hibernate", "")
	if status != http.StatusConflict || !strings.Contains(apiError(t, b).Message, st.Reason) {
		t.Errorf("hibernate: %d %s; want 409 saying %q", status, b, st.Reason)
	}
	srv.ReleaseSlow()
	if err := <-called; err != nil {
		t.Fatal(err)
	}

	for e.awake("test", "a") && ctx.Err() == nil { // until the call's request has let go of the agent
		e.do("POST", "/agents/test/a/hibernate", "")
	}
	if st := busy("asleep"); st.Awake || st.Reason != "asleep" {
		t.Errorf("an agent asleep: %+v", st)
	}
	if e.awake("test", "a") {
		t.Error("GET busy woke the agent")
	}
}
