package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
)

// AddOptions are the seed's addMcpServer options. Every field is optional.
type AddOptions struct {
	// ID is a stable server id, normalised with NormalizeServerID. Empty
	// means the id of the same (name, URL) server if there is one, else a
	// random 8-character id (the name, with IDFromName). Giving an id to a server added earlier under a
	// random one moves it, its OAuth data and its connection to the new id.
	ID string

	// CallbackHost is the origin of the OAuth callback URL. Empty means
	// Options.CallbackHost.
	CallbackHost string
	// CallbackPath replaces the default callback path
	// {AgentsPrefix}/{class-in-kebab-case}/{name}/callback.
	CallbackPath string
	// AgentsPrefix replaces Options.AgentsPrefix in the default path.
	AgentsPrefix string

	// Client configures the MCP client side (protocol version pin, extra
	// capabilities).
	Client mcpclient.ClientOptions
	// Transport selects the transport (auto by default) and the headers
	// sent on every request. Header values are stored encrypted when the
	// store has a key.
	Transport mcpclient.TransportOptions
	// Retry configures reconnection after restarts and drops.
	Retry *mcpclient.RetryOptions

	// Command makes the server a stdio server: a program the agent runs
	// and speaks to over its stdin and stdout, instead of a URL (the URL
	// given to AddMCPServer must then be ""). Nil means a URL server.
	// See Command for how it is stored, compared and supervised.
	Command *Command

	// KeepAwake keeps the agent awake while it has this server: a Host
	// wakes it on Start and never hibernates it, so that it hears the
	// server's list_changed notifications and requests. Adding an
	// existing server with KeepAwake sets it; SetKeepAwake changes it.
	KeepAwake bool

	// IDFromName, with ID empty, gives a new server its name as its id,
	// normalised (NormalizeServerID), with a short suffix ("-2", "-3")
	// when another server has that id: ids a person can read. The zero
	// value gives the seed's random id.
	IDFromName bool
	// UniqueName refuses a name another server (another URL or command)
	// has, with a *NameInUseError, rather than adding a second server of
	// that name as the seed does.
	UniqueName bool
	// Replace, with UniqueName, replaces the server of that name instead:
	// it is removed (with its OAuth grant) before this one is added.
	Replace bool
	// RemoveIfFailed removes a new server again when its first connection
	// fails, so that nothing stays stored, and returns the error (a
	// *NotMCPEndpointError for a URL that answered as no MCP endpoint).
	// The zero value keeps the seed's behaviour: the server stays stored
	// and is retried in the background.
	RemoveIfFailed bool
	// KeepIfUnreachable, with RemoveIfFailed, keeps a server that could
	// not be reached (stored and retried in the background, as without
	// RemoveIfFailed): only one that answered as no MCP endpoint is
	// removed.
	KeepIfUnreachable bool
}

// Command is a stdio server's program (AddOptions.Command).
//
// The agent starts it when it connects or wakes, and stops it (its whole
// process group: stdin closed, then SIGTERM, then SIGKILL) when the server
// is removed, the agent hibernates or closes; on Linux it also dies with
// the process that started it. A stdio server has no session to resume:
// every wake starts the program again and makes a new handshake. A program
// that exits is started again with the server's retry backoff, never
// giving up, its last stderr lines kept in the error.
//
// Two stdio servers are the same server (AddMCPServer returns the existing
// one) when they have the same name, Path, Args and Dir; Env does not count.
// Env values are credentials: they are stored with the header values
// (encrypted when the store has a key) and never shown, only their names
// (MCPServer.EnvNames). Path and Args are shown: keep secrets in Env.
type Command struct {
	// Path is the program, looked up in PATH when it has no slash (at each
	// start, in the environment of the process that runs the agent).
	Path string
	// Args are its arguments, without the program name.
	Args []string
	// Env is the server's environment, besides the few variables of the
	// process that runs the agent that every server gets (PATH, HOME, the
	// locale, npm's and uv's settings: see mcpclient/stdio.Environ); the
	// rest of that process's environment is not passed on.
	Env map[string]string
	// Dir is its working directory; "" means the working directory of the
	// process that runs the agent.
	Dir string
}

// target is what an added server is: a normalised URL, or a command.
type target struct {
	url string
	cmd *store.Command
}

// same reports whether row is this server (given the same name).
func (t target) same(row store.Server) bool {
	rc := row.Options.Command
	if t.cmd == nil || rc == nil {
		return t.cmd == nil && rc == nil && SameServerURL(row.URL, t.url)
	}
	return rc.Path == t.cmd.Path && slices.Equal(rc.Args, t.cmd.Args) && rc.Dir == t.cmd.Dir
}

// describe names a stored server in messages: its URL without secrets, or
// its command without its environment.
func describe(row store.Server) string {
	if c := row.Options.Command; c != nil {
		return "command " + commandLine(append([]string{c.Path}, c.Args...))
	}
	return redact(row.URL)
}

// commandLine shows a command and its arguments as a shell would take
// them: an argument that is empty or holds spaces, quotes or other
// characters the shell reads is single-quoted.
func commandLine(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsFunc(a, func(r rune) bool { return strings.ContainsRune(" \t\n'\"\\$`&|;<>()*?[]{}~#!", r) }) {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// AddResult is the outcome of AddMCPServer.
type AddResult struct {
	ID string `json:"id"`
	// State is ready, or authenticating when the user must authorise at
	// AuthURL.
	State   mcpclient.State `json:"state"`
	AuthURL string          `json:"authUrl,omitempty"`
}

// ErrStorage is wrapped by the errors of AddMCPServer and RemoveMCPServer
// when the store failed (its error is wrapped too): nothing the caller
// asked for was wrong, and it may be retried.
var ErrStorage = errors.New("the store failed")

// ErrIDInUse is returned when a stable id belongs to another (name, URL).
var ErrIDInUse = errors.New("mcp server id is already in use")

// AddMCPServer adds an MCP server, connects to it and discovers its
// catalog, and stores it so that it comes back after a restart.
//
// It is idempotent: when a server with the same name and the same URL
// (SameServerURL: normalised, one trailing slash of the path ignored)
// exists, that server is returned and nothing new is created (concurrent
// calls share one connection attempt). The same name with another URL is
// another server.
//
// With opts.Command set, rawURL must be "" and the server is a stdio
// server (see Command): the same name with the same command is the same
// server.
//
// It fails, storing nothing, for an invalid or blocked URL or an id in use
// by another server, and for the refusals opts asks for (UniqueName,
// RemoveIfFailed). A server that cannot be reached or discovered stays
// stored and is retried in the background (mcpclient.RetryOptions); adding
// it again while it is failed, or Reconnect, retries it at once, as does
// a restart; its error is then a *ConnectError. Adding again a server that
// has no connection (closed with Manager().CloseConnection, or not
// connected yet in a Dormant agent) connects it, as Reconnect does; adding
// again one that is connecting or discovering in a retry waits for that
// attempt and reports its outcome.
func (a *Agent) AddMCPServer(ctx context.Context, name, rawURL string, opts *AddOptions) (AddResult, error) {
	defer a.hold()()
	var o AddOptions
	if opts != nil {
		o = *opts
	}
	tgt, callbackURL, err := a.checkTarget(name, rawURL, o)
	if err != nil {
		return AddResult{}, err
	}
	requested := ""
	if o.ID != "" {
		requested = NormalizeServerID(o.ID)
	}
	if o.UniqueName && o.Replace {
		if old := a.sameName(name, tgt); old != nil {
			if err := a.RemoveMCPServer(ctx, old.ID); err != nil {
				return AddResult{}, fmt.Errorf("replacing mcp server %s (%s): %w", old.Name, old.ID, err)
			}
		}
	}

	a.add.Lock()
	if o.UniqueName {
		if old := a.sameName(name, tgt); old != nil {
			a.add.Unlock()
			return AddResult{}, &NameInUseError{Name: name, ID: old.ID, Target: describe(*old)}
		}
	}
	existing, conflict := a.findLocked(name, tgt, requested)
	if conflict != nil {
		a.add.Unlock()
		return AddResult{}, fmt.Errorf("%w: %q is used by server %q (%s); stable ids must be unique per (name, URL)",
			ErrIDInUse, requested, conflict.Name, describe(*conflict))
	}
	if existing != nil && requested != "" && existing.ID != requested {
		if err := a.migrate(ctx, existing.ID, requested); err != nil {
			a.add.Unlock()
			return AddResult{}, err
		}
		existing.ID = requested
	}
	if existing != nil && o.KeepAwake && !existing.KeepAwake {
		if err := a.setKeepAwake(ctx, existing.ID, true); err != nil {
			a.add.Unlock()
			return AddResult{}, err
		}
	}
	if existing != nil {
		if _, live := a.m.Server(existing.ID); live {
			a.mu.Lock()
			op := a.inflight[existing.ID]
			a.mu.Unlock()
			a.add.Unlock()
			return a.existingResult(ctx, existing.ID, op)
		}
	}

	id := requested
	switch {
	case id != "":
	case existing != nil:
		id = existing.ID
	case o.IDFromName:
		id = a.nameID(name)
	default:
		id = a.freshID()
	}
	row := store.Server{
		Namespace:   a.ns,
		ID:          id,
		Name:        name,
		URL:         tgt.url,
		CallbackURL: callbackURL,
		Options:     storeOptions(o),
		KeepAwake:   o.KeepAwake || (existing != nil && existing.KeepAwake),
	}
	serverOpts, err := a.serverOptions(row)
	if err == nil {
		err = a.m.CheckServerOptions(serverOpts) // before anything is stored
	}
	if err != nil {
		a.add.Unlock()
		return AddResult{}, fmt.Errorf("add mcp server: %w", err)
	}
	if err := a.st.PutServer(ctx, row); err != nil {
		a.add.Unlock()
		return AddResult{}, fmt.Errorf("add mcp server %q: storing it: %w: %w", id, ErrStorage, err)
	}
	if existing == nil {
		a.audit.server(ctx, store.AuditServerAdded, row) // audit.go
	}
	a.mu.Lock()
	if _, ok := a.rows[id]; !ok {
		a.order = append(a.order, id)
	}
	a.rows[id] = row
	op := &addOp{done: make(chan struct{})}
	a.inflight[id] = op
	a.mu.Unlock()
	_, err = a.m.RegisterServer(ctx, id, serverOpts)
	a.add.Unlock()
	a.updates.stateChanged()

	if err == nil {
		op.res, op.err = a.connect(ctx, id, describe(row))
	} else {
		op.err = err
	}
	if drop, err := dropFailed(o, row, op.err); existing == nil && drop {
		// Not kept: nothing stays stored.
		op.err = err
		if rerr := a.RemoveMCPServer(context.WithoutCancel(ctx), id); rerr != nil {
			op.err = errors.Join(err, fmt.Errorf("removing mcp server %s (%s) again: %w", name, id, rerr))
		}
	}
	a.mu.Lock()
	delete(a.inflight, id)
	a.mu.Unlock()
	close(op.done)
	return op.res, op.err
}

// checkTarget checks the name and what the server is (a URL, allowed by
// the SSRF guard, or a command) and returns it with the callback URL (""
// for a stdio server, which has no OAuth).
func (a *Agent) checkTarget(name, rawURL string, o AddOptions) (target, string, error) {
	if name == "" {
		return target{}, "", errors.New("add mcp server: empty name")
	}
	if c := o.Command; c != nil {
		switch {
		case rawURL != "":
			return target{}, "", errors.New("add mcp server: both a URL and a command; a server has one of them")
		case c.Path == "":
			return target{}, "", errors.New("add mcp server: empty command")
		}
		for k := range c.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return target{}, "", fmt.Errorf("add mcp server: invalid environment variable name %q", k)
			}
		}
		return target{cmd: storeCommand(c)}, "", nil
	}
	normalized, err := NormalizeURL(rawURL)
	if err != nil {
		return target{}, "", fmt.Errorf("add mcp server: invalid URL: %w", err)
	}
	if err := a.m.CheckURL(normalized); err != nil {
		return target{}, "", err
	}
	callbackURL, err := a.callbackURL(o)
	if err != nil {
		return target{}, "", err
	}
	return target{url: normalized}, callbackURL, nil
}

// storeCommand copies a command into its stored form.
func storeCommand(c *Command) *store.Command {
	sc := &store.Command{Path: c.Path, Args: slices.Clone(c.Args), Dir: c.Dir}
	if len(c.Env) > 0 {
		sc.Env = maps.Clone(c.Env)
	}
	return sc
}

// findLocked returns the stored server with this name and target, and the
// server that already holds the requested id, if it is another one.
func (a *Agent) findLocked(name string, tgt target, requested string) (existing, conflict *store.Server) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range a.order {
		row := a.rows[id]
		same := row.Name == name && tgt.same(row)
		if same && existing == nil {
			existing = &row
		}
		if requested != "" && id == requested && !same {
			conflict = &row
		}
	}
	return existing, conflict
}

// freshID returns a random id no stored server has.
func (a *Agent) freshID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		if id := newServerID(); a.rows[id].ID == "" {
			return id
		}
	}
}

// existingResult is what AddMCPServer returns for a server that is already
// there: the outcome of its connection in flight (an add's, or a restore's
// first attempt), its pending authorisation, or ready; a server with no
// connection (failed, closed with CloseConnection, or dormant) is connected
// again, as Reconnect does, and one whose connection or discovery is in
// flight with no restore under way (a retry) reports how that ends.
func (a *Agent) existingResult(ctx context.Context, id string, op *addOp) (AddResult, error) {
	if op != nil {
		select {
		case <-op.done:
			return op.res, op.err
		case <-ctx.Done():
			return AddResult{}, ctx.Err()
		}
	}
	a.mu.Lock()
	dormant := a.dormant[id]
	a.mu.Unlock()
	if dormant {
		return a.Reconnect(ctx, id)
	}
	a.WaitRestored(ctx, id)
	info, _ := a.m.Server(id)
	switch info.State {
	case mcpclient.StateNotConnected:
		return a.Reconnect(ctx, id)
	case mcpclient.StateAuthenticating:
		if a.redeemable(ctx, id, info.AuthURL) {
			return AddResult{ID: id, State: mcpclient.StateAuthenticating, AuthURL: info.AuthURL}, nil
		}
		// No usable authorisation URL (none, or its state expired): start
		// the flow again.
		a.mu.Lock()
		row := a.rows[id]
		a.mu.Unlock()
		return a.connect(ctx, id, describe(row))
	case mcpclient.StateFailed, mcpclient.StateConnecting:
		// Adding it again is asking for it: one attempt now, or the one in
		// flight (a retry's), whose outcome is the answer.
		return a.Reconnect(ctx, id)
	case mcpclient.StateConnected, mcpclient.StateDiscovering:
		// Connected, its catalog not (yet) known: the discovery in flight
		// (a retry's, which Reconnect joins) or a new one answers.
		d, err := a.m.DiscoverIfConnected(ctx, id, nil)
		switch {
		case err != nil:
			return AddResult{}, err
		case d.Success:
			return AddResult{ID: id, State: mcpclient.StateReady}, nil
		case d.State == mcpclient.StateAuthenticating:
			return a.existingResult(ctx, id, nil)
		case d.State == mcpclient.StateConnected:
			return AddResult{}, a.connectError(id, fmt.Errorf("failed to discover MCP server capabilities: %w", d.Err))
		}
		return a.Reconnect(ctx, id)
	}
	return AddResult{ID: id, State: mcpclient.StateReady}, nil
}

// Reconnect connects a stored server again at once, whatever its state, and
// discovers it (mcpclient.Manager.Reconnect): a failed server does not wait
// for its background retry. Its OAuth tokens and registration are kept. The
// result is ready, or authenticating with the AuthURL the user must visit;
// a server that is still unreachable (or whose discovery failed) returns an
// error (a *ConnectError), and is retried in the background. An unknown id
// is an error that wraps mcpclient.ErrNotRegistered.
func (a *Agent) Reconnect(ctx context.Context, id string) (AddResult, error) {
	defer a.hold()()
	a.woken(id)
	a.mu.Lock()
	row, ok := a.rows[id]
	a.mu.Unlock()
	if !ok {
		return AddResult{}, fmt.Errorf("%w: %q", mcpclient.ErrNotRegistered, id)
	}
	res, err := a.m.Reconnect(ctx, id)
	if err != nil {
		return AddResult{}, err
	}
	switch res.State {
	case mcpclient.StateReady:
		a.saveAuthURL(ctx, id)
		return AddResult{ID: id, State: mcpclient.StateReady}, nil
	case mcpclient.StateAuthenticating:
		if res.AuthURL == "" {
			return AddResult{}, a.connectError(id, fmt.Errorf("MCP server at %s requires authorization, and no OAuth flow could start: %w", describe(row), res.Err))
		}
		a.saveAuthURL(ctx, id)
		return AddResult{ID: id, State: mcpclient.StateAuthenticating, AuthURL: res.AuthURL}, nil
	case mcpclient.StateConnected:
		a.saveAuthURL(ctx, id)
		return AddResult{}, a.connectError(id, fmt.Errorf("failed to discover MCP server capabilities: %w", res.Err))
	default:
		if res.Err == nil {
			return AddResult{}, a.connectError(id, fmt.Errorf("MCP server %q is %s", row.Name, res.State))
		}
		return AddResult{}, a.connectError(id, fmt.Errorf("failed to connect to MCP server at %s: %w", describe(row), res.Err))
	}
}

// redeemable reports whether an authorisation URL can still be used: an
// absolute http(s) URL whose state, if it has one, the server's provider
// would accept.
func (a *Agent) redeemable(ctx context.Context, id, authURL string) bool {
	u, err := url.Parse(authURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	state := u.Query().Get("state")
	if state == "" {
		return true
	}
	p, err := a.provider(id)
	return err == nil && p != nil && p.CheckState(ctx, state) == nil
}

// connect makes the first connection of an added server and discovers it.
// display names the server in messages (describe).
func (a *Agent) connect(ctx context.Context, id, display string) (AddResult, error) {
	a.woken(id)
	res, err := a.m.ConnectToServer(ctx, id)
	if err != nil {
		return AddResult{}, err
	}
	switch res.State {
	case mcpclient.StateAuthenticating:
		if res.AuthURL == "" {
			return AddResult{}, a.connectError(id, fmt.Errorf("MCP server at %s requires authorization, and no OAuth flow could start: %w", display, res.Err))
		}
		a.saveAuthURL(ctx, id)
		return AddResult{ID: id, State: mcpclient.StateAuthenticating, AuthURL: res.AuthURL}, nil
	case mcpclient.StateConnected:
		d, err := a.m.DiscoverIfConnected(ctx, id, nil)
		if err != nil {
			return AddResult{}, err
		}
		if !d.Success {
			return AddResult{}, a.connectError(id, fmt.Errorf("failed to discover MCP server capabilities: %w", d.Err))
		}
		a.pinListed(id) // pins.go: before the add returns, not when its event arrives
		return AddResult{ID: id, State: mcpclient.StateReady}, nil
	default:
		return AddResult{}, a.connectError(id, fmt.Errorf("failed to connect to MCP server at %s: %w", display, res.Err))
	}
}

// migrate moves a server from a generated id to a stable one: its row, its
// OAuth data and its live connection, with no remove step.
func (a *Agent) migrate(ctx context.Context, oldID, newID string) error {
	if err := a.st.RenameServer(ctx, a.ns, oldID, newID); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("cannot migrate MCP server id %q to %q: %w", oldID, newID, ErrIDInUse)
		}
		return fmt.Errorf("migrating MCP server id %q to %q: %w", oldID, newID, err)
	}
	if err := a.m.RenameServer(oldID, newID); err != nil && !errors.Is(err, mcpclient.ErrNotRegistered) {
		a.logger.Warn("renaming the live connection", "from", oldID, "to", newID, "error", err)
	}
	a.mu.Lock()
	row := a.rows[oldID]
	row.ID = newID
	delete(a.rows, oldID)
	a.rows[newID] = row
	for i, id := range a.order {
		if id == oldID {
			a.order[i] = newID
		}
	}
	if op, ok := a.inflight[oldID]; ok {
		delete(a.inflight, oldID)
		a.inflight[newID] = op
	}
	a.mu.Unlock()
	a.renamePins(ctx, oldID, newID) // pins.go: the store moved them with the row
	a.forgetProvider(oldID)
	a.forgetCatalog(oldID)
	a.noteCatalog(mcpclient.Event{Kind: mcpclient.EventToolsChanged, ServerID: newID})
	if sa, ok := a.auths.LoadAndDelete(oldID); ok {
		sa.(*serverAuth).id.Store(&newID)
		a.auths.Store(newID, sa)
	}
	a.updates.stateChanged()
	return nil
}

// RemoveMCPServer deletes the server with all its OAuth data from the
// store, then closes its connection, ending its session; a stored session
// the connection does not hold (the agent just woke, or was opened
// dormant) is ended too, with a DELETE to the server and no handshake. An
// unknown id is not an error.
//
// When the store refuses the delete, nothing changes: the server stays
// stored, registered and connected, and the error wraps ErrStorage and
// the store's error (store.ErrUnavailable when the store could not serve:
// retry later). A delete whose answer did not arrive in time may still
// have been made (store/postgres documents when): the server then stays
// until the remove is retried, which finds nothing to delete and
// completes, or until the agent is opened again.
func (a *Agent) RemoveMCPServer(ctx context.Context, id string) error {
	a.add.Lock()
	defer a.add.Unlock()
	a.mu.Lock()
	row, stored := a.rows[id]
	a.mu.Unlock()
	var sess *storedSession
	if stored {
		sess = a.sessionToEnd(ctx, row)
	}
	if err := a.st.DeleteServer(ctx, a.ns, id); err != nil {
		return fmt.Errorf("remove mcp server %q: %w: %w (it was not removed, and works as before)", id, ErrStorage, err)
	}
	a.audit.server(ctx, store.AuditServerRemoved, row) // audit.go
	a.forgetCatalog(id)
	a.mu.Lock()
	if _, ok := a.rows[id]; ok {
		delete(a.rows, id)
		for i, x := range a.order {
			if x == id {
				a.order = append(a.order[:i:i], a.order[i+1:]...)
				break
			}
		}
	}
	a.mu.Unlock()
	err := a.m.RemoveServer(ctx, id)
	if perr := a.forgetPins(ctx, id); perr != nil { // pins.go
		a.logger.Warn("cannot delete a removed server's pins", "server", id, "error", perr)
	}
	if sess != nil {
		a.endSession(ctx, id, sess)
	}
	a.forgetProvider(id)
	a.auths.Delete(id)
	a.updates.stateChanged()
	return err
}

// SetKeepAwake sets or clears the keep-awake mark of a stored server (see
// AddOptions.KeepAwake).
func (a *Agent) SetKeepAwake(ctx context.Context, id string, keep bool) error {
	a.add.Lock()
	defer a.add.Unlock()
	return a.setKeepAwake(ctx, id, keep)
}

func (a *Agent) setKeepAwake(ctx context.Context, id string, keep bool) error {
	err := a.st.UpdateServer(ctx, a.ns, id, func(row *store.Server) error {
		if row.KeepAwake == keep {
			return errUnchanged
		}
		row.KeepAwake = keep
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged):
		return nil
	case err != nil:
		return fmt.Errorf("mcp server %q: setting keep-awake: %w", id, err)
	}
	a.mu.Lock()
	if row, ok := a.rows[id]; ok {
		row.KeepAwake = keep
		a.rows[id] = row
	}
	a.mu.Unlock()
	return nil
}

// KeepAwake reports whether the agent has a keep-awake server.
func (a *Agent) KeepAwake() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, row := range a.rows {
		if row.KeepAwake {
			return true
		}
	}
	return false
}

// callbackURL is where the OAuth provider sends the user back:
// {host}/{prefix}/{class-in-kebab-case}/{name}/callback, or
// {host}/{CallbackPath}. It is "" when no host is known.
func (a *Agent) callbackURL(o AddOptions) (string, error) {
	host := o.CallbackHost
	if host == "" {
		host = a.opts.CallbackHost
	}
	if a.opts.HideIdentity && o.CallbackPath == "" {
		return "", errors.New("add mcp server: CallbackPath is required when the agent hides its identity (the default callback URL contains the agent's class and name)")
	}
	if host == "" {
		return "", nil
	}
	u, err := url.Parse(host)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("add mcp server: invalid callback host %q", host)
	}
	host = strings.TrimSuffix(host, "/")
	if o.CallbackPath != "" {
		return host + "/" + strings.TrimPrefix(o.CallbackPath, "/"), nil
	}
	prefix := o.AgentsPrefix
	if prefix == "" {
		prefix = a.opts.AgentsPrefix
	}
	return fmt.Sprintf("%s/%s/%s/%s/callback", host, prefix, kebab(a.class), url.PathEscape(a.name)), nil
}

// storeOptions turns add options into stored ones.
func storeOptions(o AddOptions) store.ServerOptions {
	so := store.ServerOptions{TransportType: string(o.Transport.Type), PinnedProtocolVersion: o.Client.ProtocolVersion}
	if o.Command != nil {
		so.Command = storeCommand(o.Command)
	}
	if o.Client.Capabilities != nil {
		so.Capabilities, _ = json.Marshal(o.Client.Capabilities)
	}
	if len(o.Transport.Headers) > 0 {
		so.Headers = map[string]string{}
		for k := range o.Transport.Headers {
			so.Headers[http.CanonicalHeaderKey(k)] = o.Transport.Headers.Get(k)
		}
	}
	if r := o.Retry; r != nil {
		so.Retry = &store.Retry{MaxAttempts: r.MaxAttempts, BaseDelayMS: r.BaseDelay.Milliseconds(), MaxDelayMS: r.MaxDelay.Milliseconds(),
			BackgroundMaxDelayMS: r.BackgroundMaxDelay.Milliseconds(), DisableBackground: r.DisableBackground}
	}
	return so
}

// redact drops userinfo and query from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
