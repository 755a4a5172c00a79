package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/store/postgres"
)

const testClusterKey = "a-cluster-key-for-tests"

// replica is one Server of a test cluster: its API and its cluster
// listener on 127.0.0.1.
type replica struct {
	t       *testing.T
	srv     *Server
	rep     *cluster.Replica
	api, cl *httptest.Server
	// tap, when set, sees each request to the cluster listener first.
	tap atomic.Pointer[func(*http.Request)]
}

// newReplica joins a replica to the cluster on dsn and serves it.
func newReplica(t *testing.T, dsn string) *replica {
	t.Helper()
	return newReplicaWith(t, dsn, nil)
}

// newReplicaWith is newReplica with options changed by opts (nil: none).
func newReplicaWith(t *testing.T, dsn string, opts func(*Options)) *replica {
	t.Helper()
	ctx := testCtx(t)
	st, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{t: t}
	// The cluster listener's address is needed before the replica joins.
	var srv atomic.Pointer[Server]
	r.cl = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if tap := r.tap.Load(); tap != nil {
			(*tap)(req)
		}
		srv.Load().ClusterHandler().ServeHTTP(w, req)
	}))
	r.rep, err = cluster.Join(ctx, st, &cluster.Options{URL: r.cl.URL, TTL: time.Hour, Interval: 10 * time.Minute, Margin: 10 * time.Minute,
		OnUntrusted: func() { srv.Load().Host().Evict(context.Background()) }})
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{Cluster: &ClusterOptions{Replica: r.rep, Key: testClusterKey, WaitForOwner: 30 * time.Second}}
	if opts != nil {
		opts(o)
	}
	r.srv, err = Open(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	srv.Store(r.srv)
	r.api = httptest.NewServer(r.srv)
	t.Cleanup(func() {
		r.api.Close()
		r.cl.Close()
		r.srv.Close(context.Background())
		r.rep.Leave(context.Background())
		st.Close()
	})
	return r
}

// twoReplicas starts two replicas on a new database, and an MCP server
// whose URL it returns.
func twoReplicas(t *testing.T) (dsn, url string, a, b *replica) {
	t.Helper()
	dsn = pg.Database(t)
	_, url = mcpServer(t, "one")
	return dsn, url, newReplica(t, dsn), newReplica(t, dsn)
}

// add adds the server at url to agent test/name through r.
func (r *replica) add(name, url string, keepAwake bool) {
	r.t.Helper()
	if _, err := r.client("test", name).AddMCPServer(testCtx(r.t), api.AddRequest{Name: "one", URL: url, ID: "one", KeepAwake: keepAwake}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *replica) client(class, name string) *client.Client {
	c, err := client.New(client.AgentURL(r.api.URL, class, name), nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// expireReplica makes the row of replica id expire, as the database sees
// it: a replica that died and stopped renewing, once its TTL passed.
func expireReplica(t *testing.T, dsn, id string) {
	conn, err := pgx.Connect(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(testCtx(t), `UPDATE agentmcp_replicas SET expires_at = now() - interval '1 second' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
}

// TestClusterForward: an agent is awake on one replica only; a request to
// another is forwarded to it (API calls and the WebSocket), and the
// cluster listener refuses requests without the key.
func TestClusterForward(t *testing.T) {
	t.Parallel()
	_, url, a, b := twoReplicas(t)
	ctx := testCtx(t)
	a.add("x", url, false)
	res, err := b.client("test", "x").CallTool(ctx, "one", "echo", map[string]string{"text": "via b"})
	if err != nil || toolResult(t, res).Content[0].(*mcp.TextContent).Text != "echo: via b" {
		t.Fatalf("call through the other replica: %+v %v", res, err)
	}
	if len(a.srv.Agents()) != 1 || len(b.srv.Agents()) != 0 {
		t.Errorf("awake: a %v, b %v; want the agent on a only", a.srv.Agents(), b.srv.Agents())
	}
	conn, err := client.Dial(ctx, client.AgentURL(b.api.URL, "test", "x"), nil)
	if err != nil {
		t.Fatalf("WebSocket through the other replica: %v", err)
	}
	if st := conn.MCPServers(); st.Servers["one"].Name != "one" {
		t.Errorf("first frame through the other replica: %+v", st)
	}
	conn.Close()

	for _, path := range []string{"/agents/test/x", StatsPath} {
		req, _ := http.NewRequest("GET", a.cl.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("cluster listener without the key, %s: %d", path, resp.StatusCode)
		}
	}
}

// TestClusterStats: the cluster listener reports the process's goroutines,
// live heap and awake agents to a request with the key.
func TestClusterStats(t *testing.T) {
	t.Parallel()
	_, url, a, _ := twoReplicas(t)
	a.add("x", url, false)
	req, _ := http.NewRequest("GET", a.cl.URL+StatsPath+"?closeIdle=1", nil)
	if err := cluster.SignRequest(req, testClusterKey, "test", nil); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.RuntimeStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stats: %d %v", resp.StatusCode, err)
	}
	if st.Goroutines < 2 || st.HeapAlloc == 0 || st.HeapObjects == 0 || st.Sys < st.HeapAlloc || st.NumGC == 0 || st.AwakeAgents != 1 || st.Wakes != 1 {
		t.Errorf("stats = %+v; want goroutines, a live heap, a GC and the one awake agent", st)
	}

	// The heap profile: a gzipped pprof profile.
	req, _ = http.NewRequest("GET", a.cl.URL+StatsPath+"?profile=heap", nil)
	if err := cluster.SignRequest(req, testClusterKey, "test", nil); err != nil {
		t.Fatal(err)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("heap profile: %d %v", resp.StatusCode, err)
	}
	if data, err := io.ReadAll(zr); err != nil || len(data) == 0 {
		t.Errorf("heap profile: %d bytes, %v", len(data), err)
	}
}

// expireReplicaIn makes the row of replica id expire in d (by the
// database's clock), as if its last renewal had been that long before.
func expireReplicaIn(t *testing.T, dsn, id string, d time.Duration) {
	conn, err := pgx.Connect(testCtx(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(testCtx(t), `UPDATE agentmcp_replicas SET expires_at = now() + $2 * interval '1 microsecond' WHERE id = $1`, id, d.Microseconds()); err != nil {
		t.Fatal(err)
	}
}

// TestClusterFailover: when the owner dies (its listener gone), a request
// to another replica waits for the owner's row to expire, then wakes the
// agent there, with its servers.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	dsn, url, a, b := twoReplicas(t)
	ctx := testCtx(t)
	a.add("x", url, false)
	a.cl.Close() // a is gone for the others
	expireReplicaIn(t, dsn, a.rep.ID(), 1500*time.Millisecond)
	res, err := b.client("test", "x").CallTool(ctx, "one", "echo", map[string]string{"text": "after"})
	if err != nil || toolResult(t, res).Content[0].(*mcp.TextContent).Text != "echo: after" {
		t.Fatalf("call after the owner died: %+v %v", res, err)
	}
	if len(b.srv.Agents()) != 1 {
		t.Errorf("awake on b: %v", b.srv.Agents())
	}
}

// TestClusterHint: a request waiting for an owner it cannot reach, whose
// lease lasts an hour, takes the agent as soon as the owner gives it back
// (a drain hibernates it), told by the database's notification.
func TestClusterHint(t *testing.T) {
	t.Parallel()
	_, url, a, b := twoReplicas(t)
	ctx := testCtx(t)
	a.add("x", url, false)
	a.cl.Close() // a cannot be reached, but its lease is valid
	done := make(chan error, 1)
	go func() {
		_, err := b.client("test", "x").CallTool(ctx, "one", "echo", map[string]string{"text": "after"})
		done <- err
	}()
	if err := a.srv.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("call waiting for the owner that drained: %v", err)
	}
	if len(a.srv.Agents()) != 0 || len(b.srv.Agents()) != 1 {
		t.Errorf("awake: a %v, b %v; want the agent on b", a.srv.Agents(), b.srv.Agents())
	}
}

// TestClusterRelayLease: a WebSocket relayed to the owner ends when the
// owner's lease lapses (a replica frozen past its lease holds its streams
// open), so that its client reconnects; the next one finds the agent
// awake on the relaying replica.
func TestClusterRelayLease(t *testing.T) {
	t.Parallel()
	dsn, url, a, b := twoReplicas(t)
	ctx := testCtx(t)
	a.add("x", url, false)
	conn, err := client.Dial(ctx, client.AgentURL(b.api.URL, "test", "x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	a.cl.Close() // a stops answering the others; the stream it serves stays
	expireReplicaIn(t, dsn, a.rep.ID(), time.Second)
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the relayed stream outlived its owner's lease")
	}
	again, err := client.Dial(ctx, client.AgentURL(b.api.URL, "test", "x"), nil)
	if err != nil {
		t.Fatalf("reconnecting: %v", err)
	}
	defer again.Close()
	if st := again.MCPServers(); st.Servers["one"].Name != "one" || len(b.srv.Agents()) != 1 {
		t.Errorf("after the reconnect: %+v, awake on b %v", st, b.srv.Agents())
	}
}

// TestClusterReadyAndDrain: /readyz is 200, and 503 once the replica
// drains; a draining replica sends requests for agents it does not hold
// to another replica.
func TestClusterReadyAndDrain(t *testing.T) {
	t.Parallel()
	_, url, a, b := twoReplicas(t)
	ctx := testCtx(t)
	ready := func(r *replica) int {
		resp, err := http.Get(r.api.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode
	}
	if s := ready(a); s != http.StatusOK {
		t.Fatalf("readyz: %d", s)
	}
	if err := a.srv.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if s := ready(a); s != http.StatusServiceUnavailable {
		t.Errorf("readyz while draining: %d", s)
	}
	if _, err := a.client("test", "y").AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url, ID: "one"}); err != nil {
		t.Fatalf("add through a draining replica: %v", err)
	}
	if len(a.srv.Agents()) != 0 || len(b.srv.Agents()) != 1 {
		t.Errorf("awake: a %v, b %v; want the new agent on b", a.srv.Agents(), b.srv.Agents())
	}
	resp, err := http.Get(a.api.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("healthz while draining: %d", resp.StatusCode)
	}
}

// TestClusterInterrupted: a tool call forwarded to the owner, which goes
// away during it, is answered 502 interrupted, and not repeated.
func TestClusterInterrupted(t *testing.T) {
	t.Parallel()
	dsn := pg.Database(t)
	srv, url := mcpServer(t, "one")
	a, b := newReplica(t, dsn), newReplica(t, dsn)
	ctx := testCtx(t)
	a.add("x", url, false)
	done := make(chan error, 1)
	go func() {
		_, err := b.client("test", "x").CallTool(ctx, "one", "slow", nil)
		done <- err
	}()
	select {
	case <-srv.SlowStarted:
	case <-ctx.Done():
		t.Fatal("the call never reached the server")
	}
	a.cl.CloseClientConnections() // the owner's listener goes away mid-call
	err := <-done
	var aerr *api.APIError
	if !errorsAs(err, &aerr) || aerr.Code != api.CodeInterrupted {
		t.Errorf("call whose owner went away: %v", err)
	}
	srv.ReleaseSlow()
	select {
	case <-srv.SlowStarted:
		t.Error("the interrupted call was repeated")
	default:
	}
}

// TestClusterRehome: a keep-awake agent whose replica died is woken by
// another replica without waiting for a request.
func TestClusterRehome(t *testing.T) {
	t.Parallel()
	dsn, url, a, b := twoReplicas(t)
	ctx := testCtx(t)
	a.add("kept", url, true)
	b.srv.rehomeOnce(ctx)
	if len(b.srv.Agents()) != 0 {
		t.Fatalf("b took an agent a holds: %v", b.srv.Agents())
	}
	a.cl.Close()
	expireReplica(t, dsn, a.rep.ID())
	b.srv.rehomeOnce(ctx)
	if got := b.srv.Agents(); len(got) != 1 || got[0] != (api.AgentInfo{Class: "test", Name: "kept"}) {
		t.Errorf("awake on b after a died: %v", got)
	}
}

// TestClusterListenerLimits: the cluster listener's server has the public
// listener's connection limits: a keep-alive connection left idle after an
// answer (here a refusal: no key) is closed after IdleTimeout, and one
// that never finishes its headers after HeaderTimeout.
func TestClusterListenerLimits(t *testing.T) {
	t.Parallel()
	const limit = 200 * time.Millisecond
	r := newReplicaWith(t, pg.Database(t), func(o *Options) { o.IdleTimeout, o.HeaderTimeout = limit, limit })
	hs := r.srv.ClusterHTTPServer()
	if hs == nil || hs.ReadHeaderTimeout != limit || hs.IdleTimeout != limit || hs.MaxHeaderBytes != maxHeaderBytes {
		t.Fatalf("cluster listener's server: %+v", hs)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })

	closed := func(what string, conn net.Conn) {
		t.Helper()
		// The safety deadline is far past the limit: the read ends when the
		// server closes the connection.
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		rd := bufio.NewReader(conn)
		if what == "idle" {
			res, err := http.ReadResponse(rd, nil)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || res.Close {
				t.Fatalf("%s: answer %d (close %v); want 401 on a kept-alive connection", what, res.StatusCode, res.Close)
			}
		}
		if _, err := io.ReadAll(rd); err != nil {
			t.Errorf("%s connection: %v; want it closed by the server", what, err)
		}
	}
	idle, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /agents/test/x HTTP/1.1\r\nHost: %s\r\n\r\n", l.Addr())
	closed("idle", idle)

	slow, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "GET /agents/test/x HTTP/1.1\r\nHost: %s\r\n", l.Addr()) // never ends
	closed("headers", slow)
}

// recorded is a request as it reached a cluster listener.
type recorded struct {
	method, uri string
	header      http.Header
	body        []byte
}

// send sends rec again to the cluster listener at base, as recorded.
func (rec recorded) send(t *testing.T, base string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), rec.method, base+rec.uri, bytes.NewReader(rec.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = rec.header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestClusterReplay: a forwarded request, recorded on its way to the
// owner's cluster listener and sent again, is refused, whatever it is (a
// tool call, the heap profile): each forwarded request is signed for once.
func TestClusterReplay(t *testing.T) {
	t.Parallel()
	_, url, a, b := twoReplicas(t)
	ctx := testCtx(t)
	a.add("x", url, false)
	var mu sync.Mutex
	var calls []recorded
	tap := func(req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		calls = append(calls, recorded{req.Method, req.RequestURI, req.Header.Clone(), body})
		mu.Unlock()
	}
	a.tap.Store(&tap)
	res, err := b.client("test", "x").CallTool(ctx, "one", "echo", map[string]string{"text": "via b"})
	if err != nil || toolResult(t, res).Content[0].(*mcp.TextContent).Text != "echo: via b" {
		t.Fatalf("call through the other replica: %+v %v", res, err)
	}
	a.tap.Store(nil)
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || calls[0].method != http.MethodPost {
		t.Fatalf("forwarded: %+v; want the one call", calls)
	}
	if status, body := calls[0].send(t, a.cl.URL); status != http.StatusUnauthorized {
		t.Errorf("the forwarded call sent again: %d %s; want 401", status, body)
	}
	stats := calls[0]
	stats.method, stats.uri, stats.body = http.MethodGet, StatsPath+"?profile=heap", nil
	if status, _ := stats.send(t, a.cl.URL); status != http.StatusUnauthorized {
		t.Errorf("its headers on the heap profile: %d; want 401", status)
	}
	// The same call with another body (the signature of the first).
	changed := calls[0]
	changed.body = bytes.Replace(changed.body, []byte("via b"), []byte("via x"), 1)
	if status, body := changed.send(t, a.cl.URL); status != http.StatusUnauthorized {
		t.Errorf("the forwarded call with another body: %d %s; want 401", status, body)
	}

	// Signed now: served once; stale or early by more than cluster.Skew, or
	// with the key alone as a header (as before signatures), refused.
	signed := func(at time.Time, path string) *http.Request {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.cl.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		cluster.NewSigner(testClusterKey).Sign(req, "test", at, sha256.Sum256(nil))
		return req
	}
	do := func(req *http.Request) int {
		t.Helper()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	fresh := signed(time.Now(), StatsPath)
	if status := do(fresh); status != http.StatusOK {
		t.Errorf("a fresh signed request: %d; want 200", status)
	}
	again, _ := http.NewRequestWithContext(ctx, http.MethodGet, fresh.URL.String(), nil)
	again.Header = fresh.Header.Clone()
	if status := do(again); status != http.StatusUnauthorized {
		t.Errorf("the fresh request sent again: %d; want 401", status)
	}
	if status := do(signed(time.Now().Add(-cluster.Skew-time.Second), StatsPath)); status != http.StatusUnauthorized {
		t.Errorf("a stale request: %d; want 401", status)
	}
	if status := do(signed(time.Now().Add(cluster.Skew+time.Minute), StatsPath)); status != http.StatusUnauthorized {
		t.Errorf("a request signed for later: %d; want 401", status)
	}
	if status := do(signed(time.Now(), "/agents/test/x/servers")); status != http.StatusOK {
		t.Errorf("a fresh signed API request: %d; want 200", status)
	}
	keyOnly, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.cl.URL+StatsPath, nil)
	keyOnly.Header.Set("Agentmcp-Cluster-Key", testClusterKey)
	if status := do(keyOnly); status != http.StatusUnauthorized {
		t.Errorf("the key as a header: %d; want 401", status)
	}
}
