package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// Environment variables the terminal commands read.
const (
	envServer = "AGENTMCP_SERVER" // default of --server
	envToken  = "AGENTMCP_TOKEN"  // default of --token
)

// postgresDisplay names a --postgres database in messages.
const postgresDisplay = "the PostgreSQL database"

// defaultServer is where agentmcp serve listens by default.
const defaultServer = "http://127.0.0.1:8787"

// targetFlags say which agent the terminal commands (add, rm, ls, tools,
// call, import) act on: one of a running agentmcp serve (the default) or
// a database opened directly.
type targetFlags struct {
	server    string
	db        string
	postgres  string
	token     string
	agent     string
	publicURL string
	timeout   time.Duration
	// mustExist says the command reads an agent rather than creating
	// one: an agent that does not exist is then an error, never a new
	// empty agent (only adding a server creates one).
	mustExist bool
	// command is the command's name, for the lock file (dblock.go).
	command string
	// access says what the command does with the agent of a SQLite
	// database: owning (the zero value), reading or handing (dblock.go).
	access access
	// beside is, once open returned, the process that holds the lock of
	// the SQLite database, when the command runs beside it (reading,
	// handing), nil otherwise.
	beside *sqlite.LockedError
}

const targetFlagsUsage = `Target flags (which agent the command acts on):
  --server URL     a running agentmcp serve (default $AGENTMCP_SERVER, else
                   http://127.0.0.1:8787)
  --token T        its access token (default $AGENTMCP_TOKEN)
  --db PATH        use this SQLite database directly instead of a server;
                   the command owns its agents while it runs (it holds
                   PATH.lock). While an agentmcp serve runs on it, the
                   commands that only read (ls, approvals, audit, tasks,
                   pins, policy and expose without changes) read it
                   read-only; add and import store their change and hand
                   it to that serve (with $AGENTMCP_TOKEN, if it has a
                   token); the others are refused: use --server
  --postgres DSN   use this PostgreSQL database directly instead. While an
                   agentmcp serve replica (--cluster) owns the agent (it is
                   awake there), the commands that only read read it
                   read-only and the others, add and import included, are
                   refused: use --server. Otherwise a command that acts
                   on the agent holds its lease while it runs (a replica
                   asked for it waits)
  --public-url URL
                   with --db or --postgres: the address of the agentmcp serve
                   that will run on the database (its --public-url, or its
                   --addr), for the OAuth callback URL of the servers added
                   (default http://127.0.0.1:8787, serve's default)
  --agent C/N      the agent, class/name (default agentmcp/default, the one
                   the dashboard shows). Another agent must exist (have
                   servers): only add and import create one
  --timeout D      bound the whole command, connecting included (default 60s)
`

func (f *targetFlags) register(fs *flag.FlagSet) {
	f.registerTarget(fs)
	fs.DurationVar(&f.timeout, "timeout", defaultTimeout, "")
}

// registerTarget registers the flags but --timeout, for call, whose
// connection flags have their own.
func (f *targetFlags) registerTarget(fs *flag.FlagSet) {
	f.command = fs.Name()
	fs.StringVar(&f.server, "server", "", "")
	fs.StringVar(&f.db, "db", "", "")
	fs.StringVar(&f.postgres, "postgres", "", "")
	fs.StringVar(&f.token, "token", "", "")
	fs.StringVar(&f.agent, "agent", server.DefaultAgent, "")
	fs.StringVar(&f.publicURL, "public-url", "", "")
}

// given reports whether a target flag was set, for call, which also takes
// a URL.
func (f *targetFlags) given() bool {
	return f.server != "" || f.db != "" || f.postgres != "" || f.token != "" || f.agent != server.DefaultAgent || f.publicURL != ""
}

// backend is the agent a terminal command acts on.
type backend interface {
	state(ctx context.Context) (agent.MCPServersState, error)
	add(ctx context.Context, req api.AddRequest) (agent.AddResult, error)
	remove(ctx context.Context, id string) error
	reconnect(ctx context.Context, id string) (agent.AddResult, error)
	tools(ctx context.Context, f mcpclient.Filter) ([]mcpclient.Tool, error)
	// server returns one server as GET .../servers/{id} shows it.
	server(ctx context.Context, id string) (api.ServerState, error)
	// call calls a tool; term shows its progress and answers its
	// elicitations, where the backend can (in this process).
	call(ctx context.Context, serverID, tool string, args json.RawMessage, term *terminal) (*mcp.CallToolResult, error)
	// exposure and setExposure read and replace the agent's exposure
	// rules (expose.go).
	exposure(ctx context.Context) (agent.Exposure, error)
	setExposure(ctx context.Context, e agent.Exposure) (agent.Exposure, error)
	close()
	// where names the backend in messages.
	where() string
}

// connectMode says what a command opening a database needs of the
// agent's stored servers.
type connectMode int

const (
	// dormant: no connection; the servers show their stored states
	// (not-connected, or authenticating) until the command connects one
	// (ls, rm, reconnect).
	dormant connectMode = iota
	// background: the stored servers reconnect in the background, not
	// waited for (add, import).
	background
	// connected: the stored servers reconnect, and open waits for them,
	// with a progress indicator, so that their states are current (ls
	// --connect, tools, call).
	connected
)

// open returns the backend the flags name; mode says, for a database,
// what the command needs of the agent's stored servers. A running
// agentmcp serve has its agents' live states.
func (f *targetFlags) open(ctx context.Context, stderr io.Writer, mode connectMode) (backend, error) {
	if f.timeout <= 0 {
		return nil, usageErrorf("--timeout must be positive")
	}
	class, name, ok := strings.Cut(f.agent, "/")
	if !ok || !server.ValidClass(class) || !server.ValidName(name) {
		return nil, usageErrorf("--agent %q: want class/name, the class in kebab-case (agentmcp/default)", f.agent)
	}
	n := 0
	for _, s := range []string{f.server, f.db, f.postgres} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return nil, usageErrorf("give one of --server, --db and --postgres")
	}
	if f.db == "" && f.postgres == "" {
		if f.publicURL != "" {
			return nil, usageErrorf("--public-url is for --db and --postgres; a running agentmcp serve has its own")
		}
		base := f.server
		if base == "" {
			base = os.Getenv(envServer)
		}
		if base == "" {
			base = defaultServer
		}
		token := f.token
		if token == "" {
			token = os.Getenv(envToken)
		}
		c, err := client.New(client.AgentURL(base, class, name), &client.Options{Token: token})
		if err != nil {
			return nil, usageErrorf("--server: %v", err)
		}
		return &remote{c: c, base: strings.TrimSuffix(base, "/"), agent: f.agent, token: token}, nil
	}
	if f.token != "" {
		return nil, usageErrorf("--token is for --server, not for a database")
	}
	// Servers added here that need OAuth get the callback URL of the
	// agentmcp serve that will run on this database, so that it can
	// complete their authorization.
	publicURL := f.publicURL
	if publicURL == "" {
		publicURL = defaultServer
	}
	if _, err := parsePublicURL(publicURL); err != nil {
		return nil, err
	}
	var (
		release  func() error
		readOnly bool
	)
	if f.db != "" {
		var err error
		if release, readOnly, err = f.lockTarget(); err != nil { // dblock.go
			return nil, err
		}
		if f.beside != nil || readOnly {
			// Not the agent's owner: it connects, resumes and settles
			// nothing (add connects the server it adds).
			mode = dormant
		}
	}
	unlock := func() {
		if release != nil {
			release()
		}
	}
	st, err := openStore(ctx, f.db, f.postgres, readOnly)
	if err != nil {
		unlock()
		return nil, err
	}
	// unhold releases the lease of the agent this command holds on
	// Postgres (pglease.go), before the store closes; nil when it holds
	// none.
	var unhold func()
	closeStore := func() {
		if unhold != nil {
			unhold()
		}
		st.Close()
	}
	if f.postgres != "" {
		// A live replica owning the agent: refused, or read read-only
		// and dormant; otherwise an owning command holds its lease
		// (pglease.go).
		var owned bool
		owned, unhold, err = f.checkLease(ctx, st, f.agent)
		if err != nil || owned {
			st.Close()
		}
		if err != nil {
			return nil, err
		}
		if owned {
			mode = dormant
			if st, err = openStore(ctx, "", f.postgres, true); err != nil {
				return nil, err
			}
		}
	}
	display := f.db
	if f.postgres != "" {
		display = postgresDisplay
	}
	if f.mustExist {
		if err := checkAgent(ctx, st, f.agent, display); err != nil {
			closeStore()
			unlock()
			return nil, err
		}
	}
	a, err := agent.Open(ctx, st, class, name, &agent.Options{
		CallbackHost: strings.TrimSuffix(publicURL, "/"),
		Dormant:      mode == dormant,
	})
	if err != nil {
		closeStore()
		unlock()
		return nil, err
	}
	d := &direct{a: a, st: st, display: display, release: release, unhold: unhold}
	if mode == connected && len(a.MCPServers().Servers) > 0 {
		stop := startProgress(stderr, fmt.Sprintf("connecting to the servers of %s", f.agent))
		a.WaitForConnections(ctx)
		stop()
	}
	return d, nil
}

// checkAgent fails unless the agent ref ("class/name") exists in st: it
// has stored servers, or it is the default agent, which always exists.
// The error lists the agents that do exist.
func checkAgent(ctx context.Context, st store.Store, ref, display string) error {
	if ref == server.DefaultAgent {
		return nil
	}
	servers, err := st.ListServers(ctx, ref)
	if err != nil {
		return err
	}
	if len(servers) > 0 {
		return nil
	}
	known := []string{server.DefaultAgent}
	if lister, ok := st.(server.NamespaceLister); ok {
		namespaces, err := lister.ListNamespaces(ctx)
		if err != nil {
			return err
		}
		for _, ns := range namespaces {
			if ns != server.DefaultAgent {
				known = append(known, ns)
			}
		}
	}
	return unknownAgentError(ref, display, known)
}

// unknownAgentError says that agent ref does not exist, which do, and how
// to create one.
func unknownAgentError(ref, where string, known []string) error {
	list := "none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return fmt.Errorf("there is no agent %s in %s (agents: %s); adding a server creates one: agentmcp add --agent %s NAME URL",
		ref, where, list, ref)
}

// openStore opens the SQLite file at path, or the Postgres database at
// dsn (either read-only, writing nothing, when readOnly), with the cipher
// of AGENTMCP_SECRET_KEY.
func openStore(ctx context.Context, path, dsn string, readOnly bool) (store.Store, error) {
	cipher, err := store.CipherFromEnv()
	if err != nil {
		return nil, err
	}
	if dsn != "" {
		return postgres.Open(ctx, dsn, &postgres.Options{Cipher: cipher, ReadOnly: readOnly})
	}
	return sqlite.Open(ctx, path, &sqlite.Options{Cipher: cipher, ReadOnly: readOnly})
}

// remote is an agent of a running agentmcp serve.
type remote struct {
	c     *client.Client
	base  string
	agent string
	token string
}

func (r *remote) where() string { return fmt.Sprintf("agent %s at %s", r.agent, r.base) }

// explain turns a connection refused into advice.
func (r *remote) explain(err error) error {
	var aerr *api.APIError
	if errors.As(err, &aerr) {
		if aerr.Code == api.CodeUnauthorized {
			return fmt.Errorf("%s wants an access token: give --token or set %s", r.base, envToken)
		}
		if aerr.Code == api.CodeUnknownAgent {
			return unknownAgentError(r.agent, "agentmcp serve at "+r.base, aerr.Agents)
		}
		if aerr.Code == api.CodeConnectFailed {
			return &remoteFailure{aerr} // for failureText
		}
		return errors.New(aerr.Message)
	}
	if isConnRefused(err) {
		return fmt.Errorf("no agentmcp serve at %s (start one with 'agentmcp serve', or use --db to open a database directly)", r.base)
	}
	return err
}

func (r *remote) state(ctx context.Context) (agent.MCPServersState, error) {
	st, err := r.c.MCPServers(ctx)
	if err != nil {
		return agent.MCPServersState{}, r.explain(err)
	}
	return fromWire[agent.MCPServersState](st)
}

// fromWire decodes v, an answer of the API in package api's shape, into
// T, the engine's type of the same JSON, which the terminal commands
// share with the backend that opens a database.
func fromWire[T any](v any) (T, error) {
	var out T
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		err = fmt.Errorf("decoding the answer of agentmcp serve: %w", err)
	}
	return out, err
}

// addResult is res as the agent returns it.
func addResult(res api.AddResult) agent.AddResult {
	return agent.AddResult{ID: res.ID, State: mcpclient.State(res.State), AuthURL: res.AuthURL}
}

func (r *remote) add(ctx context.Context, req api.AddRequest) (agent.AddResult, error) {
	res, err := r.c.AddMCPServer(ctx, req)
	var aerr *api.APIError
	if errors.As(err, &aerr) && (aerr.Code == api.CodeNameInUse || aerr.Code == api.CodeConnectFailed || aerr.Code == api.CodeNotMCPEndpoint) {
		return addResult(res), err // addPolicy.explain says what to do
	}
	return addResult(res), r.explain(err)
}

func (r *remote) remove(ctx context.Context, id string) error {
	return r.explain(r.c.RemoveMCPServer(ctx, id))
}

func (r *remote) reconnect(ctx context.Context, id string) (agent.AddResult, error) {
	res, err := r.c.Reconnect(ctx, id)
	return addResult(res), r.explain(err)
}

func (r *remote) server(ctx context.Context, id string) (api.ServerState, error) {
	st, err := r.c.Server(ctx, id)
	return st, r.explain(err)
}

func (r *remote) tools(ctx context.Context, f mcpclient.Filter) ([]mcpclient.Tool, error) {
	wf := client.Filter{ServerID: f.ServerID, ServerName: f.ServerName}
	for _, s := range f.State {
		wf.State = append(wf.State, string(s))
	}
	t, err := r.c.ListTools(ctx, wf)
	if err != nil {
		return nil, r.explain(err)
	}
	return fromWire[[]mcpclient.Tool](t)
}

// call calls the tool through the API, with its events streamed
// (remoteCall): term shows its progress and asks its questions.
func (r *remote) call(ctx context.Context, id, tool string, args json.RawMessage, term *terminal) (*mcp.CallToolResult, error) {
	res, err := r.watchedCall(ctx, id, tool, args, term)
	return res, r.explain(err)
}

func (r *remote) close() {}

// direct is an agent opened in this process, on a database.
type direct struct {
	a       *agent.Agent
	st      store.Store
	display string
	// release releases the lock of the SQLite database, nil when the
	// command does not hold it.
	release func() error
	// unhold releases the lease of the agent on Postgres, nil when the
	// command does not hold it (pglease.go).
	unhold func()
}

func (d *direct) where() string { return fmt.Sprintf("agent %s in %s", d.a.Namespace(), d.display) }

func (d *direct) state(ctx context.Context) (agent.MCPServersState, error) {
	return d.a.MCPServers(), nil
}

func (d *direct) add(ctx context.Context, req api.AddRequest) (agent.AddResult, error) {
	opts, aerr := agent.AddOptionsFor(&req)
	if aerr != nil {
		return agent.AddResult{}, &usageError{msg: aerr.Message}
	}
	if err := d.a.CheckAdd(req.Name, req.URL, &opts); err != nil {
		var aerr *api.APIError
		if errors.As(err, &aerr) {
			return agent.AddResult{}, &usageError{msg: aerr.Message}
		}
		return agent.AddResult{}, err
	}
	return d.a.AddMCPServer(ctx, req.Name, req.URL, &opts)
}

func (d *direct) remove(ctx context.Context, id string) error {
	return d.a.RemoveMCPServer(ctx, id)
}

func (d *direct) reconnect(ctx context.Context, id string) (agent.AddResult, error) {
	return d.a.Reconnect(ctx, id)
}

func (d *direct) server(ctx context.Context, id string) (api.ServerState, error) {
	st, ok := d.a.ServerState(id)
	if !ok {
		return st, fmt.Errorf("no server %q", id)
	}
	return st, nil
}

func (d *direct) tools(ctx context.Context, f mcpclient.Filter) ([]mcpclient.Tool, error) {
	return d.a.ListTools(f), nil
}

func (d *direct) call(ctx context.Context, id, tool string, args json.RawMessage, term *terminal) (*mcp.CallToolResult, error) {
	// This process answers the server's elicitations for now. A session
	// advertises the modes configured when it started: one restored
	// without them (no stamp stored yet) is connected again, so that the
	// server may ask.
	d.a.ConfigureElicitationHandlers(term.handlers())
	// What the session advertised is in the live server's snapshot (the
	// Agent's stored state has no session capabilities).
	if info, ok := d.a.ServerInfo(id); ok && info.State == mcpclient.StateReady && !advertisesElicitation(info.Advertised) {
		if _, err := d.a.Reconnect(ctx, id); err != nil {
			return nil, err
		}
	}
	return d.a.CallTool(ctx, id, tool, args, term.callOptions())
}

// advertisesElicitation reports whether a session advertised both
// elicitation modes.
func advertisesElicitation(c *mcp.ClientCapabilities) bool {
	return c != nil && c.Elicitation != nil && c.Elicitation.Form != nil && c.Elicitation.URL != nil
}

func (d *direct) close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	d.a.Close(ctx)
	if d.unhold != nil {
		d.unhold() // once the agent's last writes are in
	}
	d.st.Close()
	if d.release != nil {
		d.release() // once the agent's last writes are in
	}
}

// openState opens the agent the flags name, which must exist (mode as
// for open), and reads its state. The caller closes the backend.
func (f *targetFlags) openState(ctx context.Context, stderr io.Writer, mode connectMode) (backend, agent.MCPServersState, error) {
	f.mustExist = true
	b, err := f.open(ctx, stderr, mode)
	if err != nil {
		return nil, agent.MCPServersState{}, err
	}
	st, err := b.state(ctx)
	if err != nil {
		b.close()
		return nil, agent.MCPServersState{}, err
	}
	return b, st, nil
}

// openServer is openState, then finds the server ref (an id, or a name
// only one server has): resolveServer. The caller closes the backend.
func (f *targetFlags) openServer(ctx context.Context, stderr io.Writer, mode connectMode, ref string) (backend, agent.MCPServersState, string, error) {
	b, st, err := f.openState(ctx, stderr, mode)
	if err != nil {
		return nil, st, "", err
	}
	id, err := resolveServer(st, ref)
	if err != nil {
		b.close()
		return nil, st, "", err
	}
	return b, st, id, nil
}

// runOnServer runs a command that takes the target flags and one SERVER
// (rm, reconnect): it parses args, opens the agent without connecting
// its servers (dormant: the command connects the one it acts on, if it
// must), finds the server and calls do with them, all within --timeout.
func runOnServer(ctx context.Context, name string, args []string, stderr io.Writer, do func(ctx context.Context, b backend, st agent.MCPServersState, id string) error) error {
	fs := newFlagSet(name)
	var tf targetFlags
	tf.register(fs)
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usageErrorf("want one SERVER (an id or a name), got %d arguments", len(positional))
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	b, st, id, err := tf.openServer(ctx, stderr, dormant, positional[0])
	if err != nil {
		return err
	}
	defer b.close()
	return do(ctx, b, st, id)
}

// resolveServer finds a server by id, or by a name that only one server
// has.
func resolveServer(st agent.MCPServersState, ref string) (string, error) {
	if _, ok := st.Servers[ref]; ok {
		return ref, nil
	}
	var ids []string
	for id, s := range st.Servers {
		if s.Name == ref {
			ids = append(ids, id)
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return "", fmt.Errorf("no server %q (ids and names: agentmcp ls)", ref)
	}
	return "", fmt.Errorf("%d servers are named %q: give an id (%s)", len(ids), ref, strings.Join(ids, ", "))
}

// isConnRefused reports whether err is a refused TCP connection.
func isConnRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// startProgress shows label with a spinner and the elapsed time on w while
// the work goes on, when w is a terminal; stop clears it. Elsewhere (pipes,
// files, tests) it does nothing.
func startProgress(w io.Writer, label string) (stop func()) {
	f, ok := w.(*os.File)
	if !ok {
		return func() {}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		start := time.Now()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(f, "\r%c %s (%ds)\033[K", frames[i%len(frames)], oneLine(label), int(time.Since(start).Seconds()))
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
