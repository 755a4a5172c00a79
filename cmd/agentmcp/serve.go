package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

func serveCommand() command {
	return command{
		name:    "serve",
		summary: "host agents over HTTP, with the dashboard, until interrupted",
		usage:   serveUsage,
		run:     runServe,
	}
}

const serveUsage = `Usage:
  agentmcp serve [flags]

Hosts agents at /agents/{class}/{name}: a JSON API, a WebSocket and a
server-sent events stream of their MCP state, and the dashboard at /. The
agents and their servers are kept in a database, and each is awake only
while it is used: the first request to an agent wakes it (its servers come
back, their sessions resumed without a new handshake where the server
allows), and an agent idle for --idle-timeout is hibernated (its sessions
kept, nothing left in memory). A stream (WebSocket, SSE), a call, a pending
elicitation or an OAuth flow in progress keeps an agent awake. Start-up
takes the same time with 10 or 100,000 stored agents. Ctrl-C (or SIGTERM)
stops it cleanly: streams closed, requests finished, sessions kept for the
next start; it logs the busy agents it waits for and why (up to
--drain-timeout), and a second Ctrl-C stops it at once.

Every agent is also an MCP server (streamable HTTP) at
/agents/{class}/{name}/mcp: its servers' tools, prompts and resources behind
one endpoint, for Claude Code, VS Code, Cursor or any MCP client, behind the
access token like the API (agentmcp mcp-config prints the config to paste;
agentmcp expose chooses the servers and tools exposed). serve prints the
endpoint of the dashboard's agent and of the agents kept awake.

Flags:
  --addr HOST:PORT  where to listen (default 127.0.0.1:8787). Any address but
                    a loopback one needs an access token.
  --db PATH         the SQLite database (default ./agentmcp.db; created if
                    missing)
  --postgres DSN    a PostgreSQL database instead
  --store-timeout D bound each database operation to D (default 5s): a
                    request waiting on a database that hangs is answered
                    503 unavailable, with Retry-After, when D passes, and
                    nothing it began stays half-done
  --token T         an access token, required by the API and the streams as
                    "Authorization: Bearer T" or through the dashboard link
                    /?token=T (default $AGENTMCP_TOKEN)
  --agent C/N       the agent the dashboard shows (default agentmcp/default;
                    others at /?agent=class/name)
  --public-url URL  the server's address as browsers reach it, for OAuth
                    callback URLs behind a proxy (default: the address each
                    request was sent to). Without a token its host is served
                    like a loopback one (set a token if others can reach it).
  --origin ORIGIN   a web app origin, scheme://host[:port] with no path
                    (http://localhost:5173), allowed to use the API and the
                    streams from a browser. Repeatable.
  --oauth-issuer URL
                    also accept, on the agents' MCP endpoints, access tokens
                    of this OAuth authorization server (its issuer URL), so
                    that an MCP host can sign in the standard way: a request
                    without a token gets 401 naming the endpoint's protected
                    resource metadata (RFC 9728, at
                    /.well-known/oauth-protected-resource/agents/C/N/mcp).
                    Tokens are JWTs checked against the server's keys
                    (jwks_uri): issuer, audience, expiry. The endpoints then
                    always need a token (--token's or the server's)
  --oauth-audience A
                    the audience (aud) those tokens must carry (default:
                    the endpoint's own URL at --public-url, the resource an
                    MCP host asks a token for; without --public-url, only on
                    a loopback --addr, the endpoint's URL at a loopback name
                    and the port serve listens on)
  --idle-timeout D  hibernate an agent unused for D (default 5m; 0: never)
  --max-awake N     at most N agents awake: waking one more hibernates the
                    least recently used idle one (default 1000; 0: no cap)
  --keep-awake C/N  an agent woken on start and never hibernated, for one
                    that must hear its servers' notifications and requests
                    (as are agents with a server added with --keep-awake).
                    Repeatable.
  --mcp-sessions N  at most N MCP sessions (2025-11-25 clients of
                    /agents/{class}/{name}/mcp) per agent (default 32; 0: no
                    cap): a new one past it ends the session idle the longest
                    (its client starts another); with every session busy, the
                    new client gets 503.
  --mcp-sessions-total N
                    the same cap for all agents together (default 1000)
  --mcp-session-timeout D
                    end an MCP session that has seen no request for D
                    (default 10m; 0: never). A session does not keep its
                    agent awake: an agent's hibernation ends its sessions.
  --drain-timeout D on SIGTERM or Ctrl-C, how long to wait for busy agents before
                    closing them (default 30s): /readyz turns 503 at once,
                    streams end, idle agents are hibernated.
  --allow-private   let the agents reach MCP servers at private addresses
                    (10/8, 172.16/12, 192.168/16, 100.64/10, link-local, fc00::/7),
                    for servers on a LAN or a container network. Refused by
                    default; cloud metadata addresses stay refused
  --allow-net CIDR  let the agents reach this range (10.20.0.0/16, or one
                    address), whatever else is refused: narrower than
                    --allow-private. Repeatable
  --allow-stdio-servers
                    let API clients add stdio servers (a command, args, env
                    and cwd). RISK: whoever holds the token can then run any
                    command on this machine as the user serve runs as. Off by
                    default; needs --token; refused from browser pages of
                    other sites or origins (--origin ones included). Stdio
                    servers added with agentmcp add --db or import run
                    either way. The dashboard's add form then offers
                    commands too.
  --log-format F    text (default) or json: one line per event on stderr,
                    with the agent, the server id and, in a span, trace_id
  --log-level L     debug, info (default), warn or error

Stdio servers run as child processes of serve, on the replica that holds
their agent (every replica needs the command). Each is in a process group of
its own, stopped (stdin closed, SIGTERM, then SIGKILL) when its agent
hibernates or closes or the server is removed, and killed if serve dies
(Linux: each runs under a supervisor, agentmcp itself, that kills all the
server started, in its process group or not, when the server exits or
stops or serve dies). Hibernation costs a stdio server a restart and a handshake at the
next wake: mark it keep-awake (agentmcp add --keep-awake) if that is slow. A
server that exits is started again with backoff; its last stderr lines are
in its error.

Replicas (several serve processes on one PostgreSQL database; each agent is
awake on one replica at a time, and any replica answers any request):
  --cluster         be one replica (needs --postgres)
  --cluster-addr HOST:PORT
                    the cluster listener, where the other replicas forward
                    requests for this one's agents (default 127.0.0.1:8788;
                    reachable by the replicas only)
  --cluster-url URL how the other replicas reach --cluster-addr (default
                    http://HOST:PORT of --cluster-addr)
  --cluster-key K   the key every replica shares, 16 bytes or more, that
                    signs each forwarded request (good once, within 30s:
                    the replicas' clocks must agree within that) (default
                    $AGENTMCP_CLUSTER_KEY)
  --lease-ttl D     how long a replica's ownership of its agents outlives
                    its last renewal (default 8s): a replica that dies loses
                    its agents to the others after about that long

/healthz answers 200 while the process runs; /readyz 200 when the database
answers (asked at most once a second, 2s timeout) and accepts writes, and the
server is not draining or shutting down (nor, for a replica, unsure of its
ownership), else 503 with the reason. Neither needs the token. A write the
database refuses (disk full, read-only, down or hung) is logged (at most a
line every 10s, with the count of the others), counted in /metrics
(agentmcp_store_write_failures_total), and turns /readyz 503 until a write
goes through again. Any request the database cannot serve is answered 503
unavailable with Retry-After.

Telemetry (OpenTelemetry, by the semantic conventions for MCP; every name in
docs/OBSERVABILITY.md): GET /metrics answers the metrics in Prometheus text
format, behind the token like the API. When OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) is
set, spans and metrics are also sent there over OTLP/HTTP (the other
OTEL_EXPORTER_OTLP_* variables apply, and OTEL_SERVICE_NAME and
OTEL_RESOURCE_ATTRIBUTES name the process); otherwise nothing is sent.

Limits: a request's headers must arrive within 10s (64 KiB at most), its body
within 30s (1 MiB at most, on the API's POST routes and PUT .../exposure only; never read elsewhere); a
response must be written within 60s of its start (a tool call may work longer
before it); an idle keep-alive connection is closed after 60s. Requests
without the token are answered without reading their body. The WebSocket and
SSE streams are pinged every 30s and closed when a ping or frame is not
taken within 10s.

One serve at a time uses a SQLite database: serve locks it (the file
PATH.lock holds its process id), and a second serve on it stops at once,
naming the first. The lock goes when the first stops or dies, even by kill
-9. The terminal commands with --db do not take it; add --db and import --db
hand their change to the serve that holds it (which says where it listens in
PATH.serve) through POST /agents/{class}/{name}/reload. A --postgres database is
not locked.

Set AGENTMCP_SECRET_KEY (a passphrase of 16 bytes or more, or 32 random bytes
in hex or base64) to encrypt header values, the user:password, query and
fragment of server URLs, stdio servers' commands and env values, and OAuth
tokens in the database.

Examples:
  agentmcp serve
  AGENTMCP_TOKEN=$(openssl rand -hex 16) agentmcp serve --addr 0.0.0.0:8787
`

// openServeStore opens serve's database as openStore does, with each
// operation bounded by timeout and the refused writes logged to logger.
func openServeStore(ctx context.Context, path, dsn string, timeout time.Duration, logger *slog.Logger) (store.Store, error) {
	cipher, err := store.CipherFromEnv()
	if err != nil {
		return nil, err
	}
	if dsn != "" {
		return postgres.Open(ctx, dsn, &postgres.Options{Cipher: cipher, Timeout: timeout, Logger: logger})
	}
	return sqlite.Open(ctx, path, &sqlite.Options{Cipher: cipher, Timeout: timeout, Logger: logger})
}

// shutdownTimeout bounds a clean shutdown.
const shutdownTimeout = 10 * time.Second

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve")
	var addr, db, dsn, token, agentRef, publicURL string
	var origins, keepAwake rawHeaders // repeatable string flags
	var idleTimeout, storeTimeout time.Duration
	var maxAwake int
	var allowStdio bool
	var cf clusterFlags
	fs.BoolVar(&allowStdio, "allow-stdio-servers", false, "")
	var logFormat, logLevel string
	fs.StringVar(&logFormat, "log-format", "text", "")
	fs.StringVar(&logLevel, "log-level", "info", "")
	fs.StringVar(&addr, "addr", "127.0.0.1:8787", "")
	fs.StringVar(&db, "db", "", "")
	fs.StringVar(&dsn, "postgres", "", "")
	fs.DurationVar(&storeTimeout, "store-timeout", store.DefaultTimeout, "")
	fs.StringVar(&token, "token", "", "")
	fs.StringVar(&agentRef, "agent", server.DefaultAgent, "")
	fs.StringVar(&publicURL, "public-url", "", "")
	fs.Var(&origins, "origin", "")
	fs.DurationVar(&idleTimeout, "idle-timeout", agent.DefaultIdleTimeout, "")
	fs.IntVar(&maxAwake, "max-awake", agent.DefaultMaxAwake, "")
	fs.Var(&keepAwake, "keep-awake", "")
	mcpSessions, mcpSessionsTotal, mcpSessionTimeout := gateway.DefaultMaxSessions, server.DefaultMCPSessions, gateway.DefaultSessionTimeout
	fs.IntVar(&mcpSessions, "mcp-sessions", mcpSessions, "")
	fs.IntVar(&mcpSessionsTotal, "mcp-sessions-total", mcpSessionsTotal, "")
	fs.DurationVar(&mcpSessionTimeout, "mcp-session-timeout", mcpSessionTimeout, "")
	var oauthIssuer, oauthAudience string
	var nets netFlags
	fs.BoolVar(&nets.private, "allow-private", false, "")
	fs.Var(&nets.allow, "allow-net", "")
	fs.StringVar(&oauthIssuer, "oauth-issuer", "", "")
	fs.StringVar(&oauthAudience, "oauth-audience", "", "")
	cf.register(fs)
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("unexpected argument %s", quoteArg(positional[0]))
	}
	if db != "" && dsn != "" {
		return usageErrorf("give --db or --postgres, not both")
	}
	logger, err := newLogger(stderr, logFormat, logLevel)
	if err != nil {
		return err
	}
	guard, err := nets.guard()
	if err != nil {
		return err
	}
	if db == "" && dsn == "" {
		db = "agentmcp.db"
	}
	if token == "" {
		token = os.Getenv(envToken)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErrorf("--addr %q: want HOST:PORT (127.0.0.1:8787)", addr)
	}
	if allowStdio && token == "" {
		return usageErrorf("--allow-stdio-servers needs an access token (--token or %s): adding a stdio server runs a command on this machine", envToken)
	}
	if !loopback(host) && token == "" {
		return usageErrorf("--addr %s is reachable from other machines: set an access token with --token or %s (or listen on 127.0.0.1)", addr, envToken)
	}
	if class, name, ok := strings.Cut(agentRef, "/"); !ok || !server.ValidClass(class) || !server.ValidName(name) {
		return usageErrorf("--agent %q: want class/name, the class in kebab-case", agentRef)
	}
	var oauthOpts *server.OAuthOptions
	if oauthIssuer != "" {
		if u, err := url.Parse(oauthIssuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" {
			return usageErrorf("--oauth-issuer %q: want the authorization server's issuer URL (https://auth.example.com)", redactURL(oauthIssuer))
		}
		if !loopback(host) && publicURL == "" && oauthAudience == "" {
			// The endpoints' URLs, the tokens' audience, would otherwise be
			// known only for loopback names.
			return usageErrorf("--oauth-issuer with --addr %s needs --public-url (the address MCP hosts reach, whose endpoints are the tokens' audience) or --oauth-audience", addr)
		}
		oauthOpts = &server.OAuthOptions{Issuer: oauthIssuer, Audience: oauthAudience}
	} else if oauthAudience != "" {
		return usageErrorf("--oauth-audience needs --oauth-issuer")
	}
	if err := cf.check(dsn); err != nil {
		return err
	}
	for _, ref := range keepAwake {
		if class, name, ok := strings.Cut(ref, "/"); !ok || !server.ValidClass(class) || !server.ValidName(name) {
			return usageErrorf("--keep-awake %q: want class/name, the class in kebab-case", ref)
		}
	}
	switch {
	case idleTimeout < 0:
		return usageErrorf("--idle-timeout %v: want a duration of 0 (never) or more", idleTimeout)
	case idleTimeout == 0:
		idleTimeout = -1 // never
	}
	if storeTimeout <= 0 {
		return usageErrorf("--store-timeout %v: want a duration above 0", storeTimeout)
	}
	switch {
	case maxAwake < 0:
		return usageErrorf("--max-awake %d: want 0 (no cap) or more", maxAwake)
	case maxAwake == 0:
		maxAwake = -1 // no cap
	}
	for _, n := range []*int{&mcpSessions, &mcpSessionsTotal} {
		switch {
		case *n < 0:
			return usageErrorf("--mcp-sessions %d: want 0 (no cap) or more", *n)
		case *n == 0:
			*n = -1 // no cap
		}
	}
	switch {
	case mcpSessionTimeout < 0:
		return usageErrorf("--mcp-session-timeout %v: want a duration of 0 (never) or more", mcpSessionTimeout)
	case mcpSessionTimeout == 0:
		mcpSessionTimeout = -1 // never
	}
	var allowedHosts []string
	if publicURL != "" {
		u, err := parsePublicURL(publicURL)
		if err != nil {
			return err
		}
		// OAuth callbacks arrive with the public URL's Host.
		allowedHosts = append(allowedHosts, u.Hostname())
		publicURL = strings.TrimSuffix(publicURL, "/")
	}
	for _, o := range origins {
		if err := http.NewCrossOriginProtection().AddTrustedOrigin(o); err != nil {
			return usageErrorf("--origin %q: want an origin, scheme://host[:port] with no path (http://localhost:5173)", o)
		}
	}

	// Bind first: a serve that cannot listen leaves nothing behind (no new
	// database, no lock file).
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer l.Close() // Serve closes it too, once it has it
	if dsn == "" {
		// One serve per SQLite database: two would each wake its agents,
		// connect their servers and fight over the sessions.
		release, err := sqlite.LockFile(db)
		if err != nil {
			return err
		}
		defer release()
	}
	tel, err := newServeTelemetry(ctx)
	if err != nil {
		return err
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := tel.shutdown(tctx); err != nil {
			logger.Warn("flushing telemetry", "error", err)
		}
	}()
	if strings.TrimSpace(os.Getenv(store.EnvSecretKey)) == "" {
		logger.Warn(store.EnvSecretKey + " is not set: header values, URL credentials and query strings, and OAuth tokens are stored in plaintext in the database")
	}
	for _, h := range allowedHosts {
		if token == "" && !loopback(h) && !strings.HasSuffix(strings.ToLower(h), ".localhost") {
			logger.Warn("--public-url without an access token: requests for " + h + " are served without one; set --token or " + envToken + " if others can reach that address")
		}
	}
	st, err := openServeStore(ctx, db, dsn, storeTimeout, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	replica, opened, err := cf.join(ctx, st, logger)
	if err != nil {
		return err
	}
	var clusterOpts *server.ClusterOptions
	if replica != nil {
		defer func() {
			if s := opened.Load(); s != nil && s.Host().Unclean() {
				// An agent did not close in time: its ownership must lapse
				// with this process (in a lease's time), not be released
				// while its connections may still be up.
				logger.Warn("leaving the cluster without releasing: an agent did not close in time")
				return
			}
			lctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			defer cancel()
			if err := replica.Leave(lctx); err != nil {
				logger.Warn("leaving the cluster", "error", err)
			}
		}()
		clusterOpts = &server.ClusterOptions{Replica: replica, Key: cf.key}
	}
	srv, err := server.Open(ctx, st, &server.Options{
		Cluster:           clusterOpts,
		Agent:             &agent.Options{CallbackHost: publicURL, TracerProvider: tel.tracer, MeterProvider: tel.meter, Manager: &mcpclient.Options{Guard: guard}},
		BlockedURLHint:    blockedHint,
		Metrics:           tel.metrics,
		Token:             token,
		AllowStdioServers: allowStdio,
		OAuth:             oauthOpts,
		AllowedHosts:      allowedHosts,
		TrustedOrigins:    origins,
		DefaultAgent:      agentRef,
		AgentIdleTimeout:  idleTimeout,
		MaxAwake:          maxAwake,
		KeepAwake:         keepAwake,
		Gateway: func(*agent.Agent) *gateway.Options {
			return &gateway.Options{MaxSessions: mcpSessions, SessionTimeout: mcpSessionTimeout}
		},
		MCPSessions: mcpSessionsTotal,
		Logger:      logger,
	})
	if err != nil {
		return err
	}
	opened.Store(srv)
	// hurry ends with a second Ctrl-C (below): a shutdown then stops
	// waiting.
	hurry, stopNow := context.WithCancel(context.Background())
	defer stopNow()
	interrupts := make(chan os.Signal, 4)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	closeServer := func() {
		cctx, cancel := context.WithTimeout(hurry, shutdownTimeout)
		defer cancel()
		if err := srv.Close(cctx); err != nil {
			logger.Warn("closing agents", "error", err)
		}
	}
	hs := srv.HTTPServer() // the connection limits; CloseStreams on Shutdown
	hs.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(l) }()
	var cs *http.Server // the cluster listener's
	if replica != nil {
		var err error
		cs, err = cf.listen(srv, logger)
		if err != nil {
			hs.Close()
			closeServer()
			return err
		}
		defer cs.Close()
		fmt.Fprintf(stdout, "agentmcp serve: replica %s, cluster listener at %s\n", replica.ID(), cf.url)
	}

	base := "http://" + l.Addr().String()
	if dsn == "" {
		// agentmcp add --db and import --db on this database hand their
		// changes to this serve (handover.go).
		defer writeServeFile(db, base, logger)()
	}
	where := db
	if dsn != "" {
		where = "PostgreSQL"
	}
	fmt.Fprintf(stdout, "agentmcp serve: agents from %s, %d kept awake; the others wake on their first request\n", where, len(srv.Agents()))
	if token != "" {
		fmt.Fprintf(stdout, "agentmcp serve: dashboard at %s/?token=%s\n", base, url.QueryEscape(token))
	} else {
		fmt.Fprintf(stdout, "agentmcp serve: dashboard at %s/\n", base)
	}
	mcpBase := base
	if publicURL != "" {
		mcpBase = publicURL
	}
	printMCPEndpoints(stdout, mcpBase, agentRef, srv.Agents())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	// A Ctrl-C after the signal that stopped serve stops it at once: the
	// drain and the shutdown stop waiting (SIGTERM, as from a service
	// manager, does not).
	go func() {
		seen := 0
		if c := context.Cause(ctx); c != nil && strings.HasPrefix(c.Error(), os.Interrupt.String()) {
			seen = -1 // the Ctrl-C that stopped serve comes here too
		}
		for {
			select {
			case <-interrupts:
				if seen++; seen > 0 {
					logger.Warn("stopping now: a second Ctrl-C; busy agents are closed without waiting")
					stopNow()
					return
				}
			case <-hurry.Done():
				return
			}
		}
	}()
	// Drain first: /readyz says so, streams end, idle agents are
	// hibernated (and, in a cluster, released for the other replicas)
	// while the requests in flight finish.
	if busy := srv.Host().Busy(); len(busy) > 0 {
		logger.Info("stopping: waiting for busy agents (Ctrl-C again to stop now)", "timeout", cf.drainTimeout.String(), "agents", busyList(busy))
	} else {
		logger.Info("stopping")
	}
	dctx, dcancel := context.WithTimeout(hurry, cf.drainTimeout)
	if err := srv.Drain(dctx); err != nil {
		logger.Warn("draining: agents still busy are closed", "error", err, "agents", busyList(srv.Host().Busy()))
	}
	dcancel()
	sctx, cancel := context.WithTimeout(hurry, shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		logger.Warn("shutting down the HTTP server", "error", err)
		hs.Close()
	}
	// The requests other replicas forwarded here finish too (a drained
	// replica still passes on those that arrive for agents it let go):
	// closing the listener under them would answer them interrupted.
	if cs != nil {
		if err := cs.Shutdown(sctx); err != nil {
			logger.Warn("shutting down the cluster listener", "error", err)
			cs.Close()
		}
	}
	closeServer()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	fmt.Fprintln(stdout, "agentmcp serve: stopped")
	return nil
}

// busyList names the busy agents and what keeps each awake, for a log:
// "team/bob: 1 call in flight; team/ann: 1 open stream".
func busyList(busy map[string]agent.Busyness) string {
	keys := slices.Sorted(maps.Keys(busy))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + busy[k].String()
	}
	return strings.Join(parts, "; ")
}

// parsePublicURL checks a --public-url value: an http(s) URL with a host.
func parsePublicURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return nil, usageErrorf("--public-url %q: want an http(s) URL", raw)
	}
	return u, nil
}

// loopback reports whether host, from --addr, is a loopback name or address.
// An empty host (all interfaces) is not.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// maxEndpointsShown bounds the MCP endpoints serve prints at start.
const maxEndpointsShown = 5

// printMCPEndpoints prints the MCP endpoint of the dashboard's agent and
// of the agents awake at start (the keep-awake ones), at most
// maxEndpointsShown, then where the others are: every agent is an MCP
// server. It reads nothing from the store, so that start-up takes the same
// time however many agents are stored.
func printMCPEndpoints(w io.Writer, base, dashboardAgent string, awake []api.AgentInfo) {
	refs := []string{dashboardAgent}
	for _, a := range awake {
		if ref := a.Class + "/" + a.Name; ref != dashboardAgent && len(refs) < maxEndpointsShown {
			refs = append(refs, ref)
		}
	}
	for _, ref := range refs {
		class, name, _ := strings.Cut(ref, "/")
		fmt.Fprintf(w, "agentmcp serve: MCP endpoint of agent %s at %s\n", ref, MCPEndpoint(base, class, name))
	}
	fmt.Fprintf(w, "agentmcp serve: every agent's MCP endpoint is %s/agents/{class}/{name}/mcp; agentmcp mcp-config --agent C/N prints the config for Claude Code, VS Code or Cursor\n", base)
}
