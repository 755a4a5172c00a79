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
	"github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
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

One process at a time owns the agents of a SQLite database: serve locks it
(the file PATH.lock holds its process id), and a second serve on it stops at
once, naming the first. The lock goes when the first stops or dies, even by
kill -9. A terminal command with --db that acts on the agents (call, tools,
rm, approve, ...) holds the lock while it runs: serve then stops before
serving, naming that command and its process id; start it once it ended. Beside a
running serve, the commands with --db that only read read the database
read-only; add --db and import --db store their change and hand it to serve
(which says where it listens in PATH.serve) through POST
/agents/{class}/{name}/reload; the others are refused, naming serve's
address for --server. A --postgres database is not locked.

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

// serveConfig is what serve's flags ask for; check validates it and fills
// in what follows from it.
type serveConfig struct {
	addr, db, dsn, token, agentRef, publicURL string
	origins, keepAwake                        rawHeaders // repeatable string flags
	idleTimeout, storeTimeout                 time.Duration
	maxAwake                                  int
	allowStdio                                bool
	cf                                        clusterFlags
	logFormat, logLevel                       string
	mcpSessions, mcpSessionsTotal             int
	mcpSessionTimeout                         time.Duration
	oauthIssuer, oauthAudience                string
	nets                                      netFlags

	// Set by check.
	oauth        *server.OAuthOptions
	allowedHosts []string
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServeFlags(args)
	if err != nil {
		return err
	}
	logger, err := newLogger(stderr, cfg.logFormat, cfg.logLevel)
	if err != nil {
		return err
	}
	guard, err := cfg.nets.guard()
	if err != nil {
		return err
	}
	if err := cfg.check(); err != nil {
		return err
	}
	return cfg.run(ctx, guard, logger, stdout)
}

// parseServeFlags parses serve's flags.
func parseServeFlags(args []string) (*serveConfig, error) {
	fs := newFlagSet("serve")
	c := &serveConfig{}
	fs.BoolVar(&c.allowStdio, "allow-stdio-servers", false, "")
	fs.StringVar(&c.logFormat, "log-format", "text", "")
	fs.StringVar(&c.logLevel, "log-level", "info", "")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8787", "")
	fs.StringVar(&c.db, "db", "", "")
	fs.StringVar(&c.dsn, "postgres", "", "")
	fs.DurationVar(&c.storeTimeout, "store-timeout", store.DefaultTimeout, "")
	fs.StringVar(&c.token, "token", "", "")
	fs.StringVar(&c.agentRef, "agent", server.DefaultAgent, "")
	fs.StringVar(&c.publicURL, "public-url", "", "")
	fs.Var(&c.origins, "origin", "")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", agent.DefaultIdleTimeout, "")
	fs.IntVar(&c.maxAwake, "max-awake", agent.DefaultMaxAwake, "")
	fs.Var(&c.keepAwake, "keep-awake", "")
	fs.IntVar(&c.mcpSessions, "mcp-sessions", gateway.DefaultMaxSessions, "")
	fs.IntVar(&c.mcpSessionsTotal, "mcp-sessions-total", server.DefaultMCPSessions, "")
	fs.DurationVar(&c.mcpSessionTimeout, "mcp-session-timeout", gateway.DefaultSessionTimeout, "")
	fs.BoolVar(&c.nets.private, "allow-private", false, "")
	fs.Var(&c.nets.allow, "allow-net", "")
	fs.StringVar(&c.oauthIssuer, "oauth-issuer", "", "")
	fs.StringVar(&c.oauthAudience, "oauth-audience", "", "")
	c.cf.register(fs)
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if len(positional) > 0 {
		return nil, usageErrorf("unexpected argument %s", quoteArg(positional[0]))
	}
	if c.db != "" && c.dsn != "" {
		return nil, usageErrorf("give --db or --postgres, not both")
	}
	return c, nil
}

// check validates the flags and fills in their defaults: the database,
// the token from the environment, the OAuth options, the hosts the public
// URL adds; a zero timeout or cap becomes the server's "none".
func (c *serveConfig) check() error {
	if c.db == "" && c.dsn == "" {
		c.db = "agentmcp.db"
	}
	if c.token == "" {
		c.token = os.Getenv(envToken)
	}
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil {
		return usageErrorf("--addr %q: want HOST:PORT (127.0.0.1:8787)", c.addr)
	}
	if c.allowStdio && c.token == "" {
		return usageErrorf("--allow-stdio-servers needs an access token (--token or %s): adding a stdio server runs a command on this machine", envToken)
	}
	if !loopback(host) && c.token == "" {
		return usageErrorf("--addr %s is reachable from other machines: set an access token with --token or %s (or listen on 127.0.0.1)", c.addr, envToken)
	}
	if class, name, ok := strings.Cut(c.agentRef, "/"); !ok || !server.ValidClass(class) || !server.ValidName(name) {
		return usageErrorf("--agent %q: want class/name, the class in kebab-case", c.agentRef)
	}
	if c.oauthIssuer != "" {
		if u, err := url.Parse(c.oauthIssuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" {
			return usageErrorf("--oauth-issuer %q: want the authorization server's issuer URL (https://auth.example.com)", redactURL(c.oauthIssuer))
		}
		if !loopback(host) && c.publicURL == "" && c.oauthAudience == "" {
			// The endpoints' URLs, the tokens' audience, would otherwise be
			// known only for loopback names.
			return usageErrorf("--oauth-issuer with --addr %s needs --public-url (the address MCP hosts reach, whose endpoints are the tokens' audience) or --oauth-audience", c.addr)
		}
		c.oauth = &server.OAuthOptions{Issuer: c.oauthIssuer, Audience: c.oauthAudience}
	} else if c.oauthAudience != "" {
		return usageErrorf("--oauth-audience needs --oauth-issuer")
	}
	if err := c.cf.check(c.dsn); err != nil {
		return err
	}
	for _, ref := range c.keepAwake {
		if class, name, ok := strings.Cut(ref, "/"); !ok || !server.ValidClass(class) || !server.ValidName(name) {
			return usageErrorf("--keep-awake %q: want class/name, the class in kebab-case", ref)
		}
	}
	switch {
	case c.idleTimeout < 0:
		return usageErrorf("--idle-timeout %v: want a duration of 0 (never) or more", c.idleTimeout)
	case c.idleTimeout == 0:
		c.idleTimeout = -1 // never
	}
	if c.storeTimeout <= 0 {
		return usageErrorf("--store-timeout %v: want a duration above 0", c.storeTimeout)
	}
	switch {
	case c.maxAwake < 0:
		return usageErrorf("--max-awake %d: want 0 (no cap) or more", c.maxAwake)
	case c.maxAwake == 0:
		c.maxAwake = -1 // no cap
	}
	for _, n := range []*int{&c.mcpSessions, &c.mcpSessionsTotal} {
		switch {
		case *n < 0:
			return usageErrorf("--mcp-sessions %d: want 0 (no cap) or more", *n)
		case *n == 0:
			*n = -1 // no cap
		}
	}
	switch {
	case c.mcpSessionTimeout < 0:
		return usageErrorf("--mcp-session-timeout %v: want a duration of 0 (never) or more", c.mcpSessionTimeout)
	case c.mcpSessionTimeout == 0:
		c.mcpSessionTimeout = -1 // never
	}
	if c.publicURL != "" {
		u, err := parsePublicURL(c.publicURL)
		if err != nil {
			return err
		}
		// OAuth callbacks arrive with the public URL's Host.
		c.allowedHosts = append(c.allowedHosts, u.Hostname())
		c.publicURL = strings.TrimSuffix(c.publicURL, "/")
	}
	for _, o := range c.origins {
		if err := http.NewCrossOriginProtection().AddTrustedOrigin(o); err != nil {
			return usageErrorf("--origin %q: want an origin, scheme://host[:port] with no path (http://localhost:5173)", o)
		}
	}
	return nil
}

// warn logs what the configuration leaves unprotected.
func (c *serveConfig) warn(logger *slog.Logger) {
	if strings.TrimSpace(os.Getenv(store.EnvSecretKey)) == "" {
		logger.Warn(store.EnvSecretKey + " is not set: header values, URL credentials and query strings, and OAuth tokens are stored in plaintext in the database")
	}
	for _, h := range c.allowedHosts {
		if c.token == "" && !loopback(h) && !strings.HasSuffix(strings.ToLower(h), ".localhost") {
			logger.Warn("--public-url without an access token: requests for " + h + " are served without one; set --token or " + envToken + " if others can reach that address")
		}
	}
}

// serverOptions are the server's options for cfg.
func (c *serveConfig) serverOptions(tel *serveTelemetry, guard *netguard.Guard, clusterOpts *server.ClusterOptions, logger *slog.Logger) *server.Options {
	mcpSessions, mcpSessionTimeout := c.mcpSessions, c.mcpSessionTimeout
	return &server.Options{
		Cluster:           clusterOpts,
		Agent:             &agent.Options{CallbackHost: c.publicURL, TracerProvider: tel.tracer, MeterProvider: tel.meter, Manager: &mcpclient.Options{Guard: guard}},
		BlockedURLHint:    blockedHint,
		Metrics:           tel.metrics,
		Token:             c.token,
		AllowStdioServers: c.allowStdio,
		OAuth:             c.oauth,
		AllowedHosts:      c.allowedHosts,
		TrustedOrigins:    c.origins,
		DefaultAgent:      c.agentRef,
		AgentIdleTimeout:  c.idleTimeout,
		MaxAwake:          c.maxAwake,
		KeepAwake:         c.keepAwake,
		Gateway: func(*agent.Agent) *gateway.Options {
			return &gateway.Options{MaxSessions: mcpSessions, SessionTimeout: mcpSessionTimeout}
		},
		MCPSessions: c.mcpSessionsTotal,
		Logger:      logger,
	}
}

// run runs the server cfg describes until ctx ends (a signal), then stops
// it: it binds the address, locks a SQLite database, starts the
// telemetry, opens the store, joins the cluster, opens the server and
// serves it (and the cluster listener), says where, and stops.
func (c *serveConfig) run(ctx context.Context, guard *netguard.Guard, logger *slog.Logger, stdout io.Writer) error {
	// Bind first: a serve that cannot listen leaves nothing behind (no new
	// database, no lock file).
	l, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	defer l.Close() // Serve closes it too, once it has it
	if c.dsn == "" {
		// One serve per SQLite database: two would each wake its agents,
		// connect their servers and fight over the sessions.
		release, err := lockForServe(ctx, c.db) // dblock.go
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
	c.warn(logger)
	st, err := openServeStore(ctx, c.db, c.dsn, c.storeTimeout, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	replica, opened, err := c.cf.join(ctx, st, logger)
	if err != nil {
		return err
	}
	var clusterOpts *server.ClusterOptions
	if replica != nil {
		defer leaveCluster(replica, opened, logger)
		clusterOpts = &server.ClusterOptions{Replica: replica, Key: c.cf.key}
	}
	srv, err := server.Open(ctx, st, c.serverOptions(tel, guard, clusterOpts, logger))
	if err != nil {
		return err
	}
	opened.Store(srv)
	// hurry ends with a second Ctrl-C (stopServe): a shutdown then stops
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
		cs, err = c.cf.listen(srv, logger)
		if err != nil {
			hs.Close()
			closeServer()
			return err
		}
		defer cs.Close()
		fmt.Fprintf(stdout, "agentmcp serve: replica %s, cluster listener at %s\n", replica.ID(), c.cf.url)
	}
	base := "http://" + l.Addr().String()
	if c.dsn == "" {
		// agentmcp add --db and import --db on this database hand their
		// changes to this serve (handover.go).
		defer writeServeFile(c.db, base, logger)()
	}
	c.announce(stdout, srv, base)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	stopServe(ctx, srv, hs, cs, c.cf.drainTimeout, interrupts, hurry, stopNow, logger)
	closeServer()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	fmt.Fprintln(stdout, "agentmcp serve: stopped")
	return nil
}

// leaveCluster leaves the cluster as serve exits, unless an agent of
// the server opened did not close in time.
func leaveCluster(replica *cluster.Replica, opened *openServer, logger *slog.Logger) {
	if s := opened.Load(); s != nil && s.Host().Unclean() {
		// An agent did not close in time: its ownership must lapse with
		// this process (in a lease's time), not be released while its
		// connections may still be up.
		logger.Warn("leaving the cluster without releasing: an agent did not close in time")
		return
	}
	lctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := replica.Leave(lctx); err != nil {
		logger.Warn("leaving the cluster", "error", err)
	}
}

// announce says where serve serves: the database, the dashboard and the
// agents' MCP endpoints.
func (c *serveConfig) announce(stdout io.Writer, srv *server.Server, base string) {
	where := c.db
	if c.dsn != "" {
		where = "PostgreSQL"
	}
	fmt.Fprintf(stdout, "agentmcp serve: agents from %s, %d kept awake; the others wake on their first request\n", where, len(srv.Agents()))
	if c.token != "" {
		fmt.Fprintf(stdout, "agentmcp serve: dashboard at %s/?token=%s\n", base, url.QueryEscape(c.token))
	} else {
		fmt.Fprintf(stdout, "agentmcp serve: dashboard at %s/\n", base)
	}
	mcpBase := base
	if c.publicURL != "" {
		mcpBase = c.publicURL
	}
	printMCPEndpoints(stdout, mcpBase, c.agentRef, srv.Agents())
}

// stopServe stops serving once ctx ended: it drains the server (within
// drainTimeout), then shuts the HTTP server and the cluster listener cs
// (nil without) down, each request in flight finishing. A Ctrl-C after
// the signal that stopped serve stops it at once (stopNow ends hurry, and
// the drain and the shutdown stop waiting); SIGTERM, as from a service
// manager, does not.
func stopServe(ctx context.Context, srv *server.Server, hs, cs *http.Server, drainTimeout time.Duration, interrupts <-chan os.Signal, hurry context.Context, stopNow context.CancelFunc, logger *slog.Logger) {
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
		logger.Info("stopping: waiting for busy agents (Ctrl-C again to stop now)", "timeout", drainTimeout.String(), "agents", busyList(busy))
	} else {
		logger.Info("stopping")
	}
	dctx, dcancel := context.WithTimeout(hurry, drainTimeout)
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
