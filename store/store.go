package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentmcp/agentmcp/internal/protocol"
)

// Server is one stored MCP server of one agent: the row that lets the agent
// reconnect to it after a restart. The zero value of every field but
// Namespace and ID means "none".
type Server struct {
	// Namespace is the agent the server belongs to, "class/instance". Every
	// operation is scoped by it; agents never see each other's servers.
	Namespace string
	// ID is the server id, unique within Namespace: a generated id or a
	// normalised stable one. The OAuth key-value entries of the server are
	// filed under it.
	ID string
	// Name is the caller's display name (not unique).
	Name string
	// URL is the server URL as normalised by the agent. Its userinfo, query
	// and fragment are stored with Options, encrypted when the Store has a
	// Cipher; the rest is stored readable. It is "" for a stdio server
	// (Options.Command).
	URL string
	// CallbackURL is the full OAuth redirect URI, "" when the server was added
	// without a callback host (no OAuth).
	CallbackURL string
	// ClientID is the OAuth client id once known (from dynamic registration
	// or a client metadata document).
	ClientID string
	// AuthURL is the authorization URL while an OAuth flow is pending, ""
	// when none is. A restored server with an AuthURL waits for the user
	// instead of connecting.
	AuthURL string
	// Options are the connection options needed to reconnect.
	Options ServerOptions
	// KeepAwake marks a server whose agent is woken when the program
	// starts and never hibernated, for agents that must hear list_changed
	// or server-initiated requests. It is stored in a column of its own,
	// so that KeepAwakeLister finds the few such agents among many.
	KeepAwake bool
	// CreatedAt is when the row was first written, set by the store (UTC,
	// microsecond precision). PutServer and UpdateServer ignore the value
	// they are given.
	CreatedAt time.Time
	// UpdatedAt is when the row was last written, set by the store like
	// CreatedAt.
	UpdatedAt time.Time
}

// ServerOptions are the connection options of a stored server. They are
// stored as one JSON document, encrypted when the Store has a Cipher (header
// values and session ids are credentials). Unknown JSON fields from newer
// versions are dropped on read.
type ServerOptions struct {
	// TransportType is "auto" (or ""), "streamable-http", "sse", ...
	TransportType string `json:"transportType,omitempty"`
	// PinnedProtocolVersion is the protocol version the caller pinned, if
	// any (ProtocolVersion below is the one negotiated).
	PinnedProtocolVersion string `json:"pinnedProtocolVersion,omitempty"`
	// Headers are sent with every request to the server.
	Headers map[string]string `json:"headers,omitempty"`
	// Retry configures reconnection on restore; nil means the defaults.
	Retry *Retry `json:"retry,omitempty"`
	// Capabilities are the client capabilities advertised to the server (for
	// example the elicitation modes), as JSON.
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	// SessionID is the MCP session to resume (legacy protocol versions).
	SessionID string `json:"sessionId,omitempty"`
	// ProtocolVersion is the negotiated protocol version of SessionID or
	// DiscoverResult.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// DiscoverResult is the server/discover result of a resumable stateless
	// (2026-07-28) session, as JSON.
	DiscoverResult json.RawMessage `json:"discoverResult,omitempty"`
	// Props is caller data restored with the server, as JSON.
	Props json.RawMessage `json:"props,omitempty"`
	// Command is the program of a stdio server, which the agent runs and
	// speaks to over its stdin and stdout; nil for a URL server. Being part
	// of the options, it is encrypted with them when the Store has a
	// Cipher (its Env values are credentials, as header values are).
	Command *Command `json:"command,omitempty"`
}

// Command is a stored stdio server's program.
type Command struct {
	// Path is the program, looked up in PATH when it has no slash.
	Path string `json:"path"`
	// Args are its arguments, without the program name.
	Args []string `json:"args,omitempty"`
	// Env is added to the environment of the process that runs it.
	Env map[string]string `json:"env,omitempty"`
	// Dir is its working directory; "" means the working directory of the
	// process that runs it.
	Dir string `json:"dir,omitempty"`
}

// Retry is the persisted retry policy of a server. Zero fields mean the
// defaults of the code that retries.
type Retry struct {
	MaxAttempts int   `json:"maxAttempts,omitempty"`
	BaseDelayMS int64 `json:"baseDelayMs,omitempty"`
	MaxDelayMS  int64 `json:"maxDelayMs,omitempty"`
	// BackgroundMaxDelayMS caps the wait between background attempts.
	BackgroundMaxDelayMS int64 `json:"backgroundMaxDelayMs,omitempty"`
	// DisableBackground turns the background retry off.
	DisableBackground bool `json:"disableBackground,omitempty"`
}

// StatelessProtocolVersion is the MCP protocol version whose sessions are
// resumed from a discover result rather than a session id.
const StatelessProtocolVersion = protocol.Stateless

// Resumable returns o with the session fields cleared when they must not be
// resumed, following the reference's decode rules: a SessionID without a
// ProtocolVersion (written by older versions) is dropped with the
// DiscoverResult, and a StatelessProtocolVersion session without a
// DiscoverResult is dropped entirely ("unsafe stateless session"). Other
// fields are kept. The Store returns what was stored; the caller applies
// this on restore.
func (o ServerOptions) Resumable() ServerOptions {
	switch {
	case o.SessionID != "" && o.ProtocolVersion == "":
		o.SessionID, o.DiscoverResult = "", nil
	case o.ProtocolVersion == StatelessProtocolVersion && len(o.DiscoverResult) == 0:
		o.SessionID, o.ProtocolVersion, o.DiscoverResult = "", "", nil
	}
	return o
}

// Store keeps agents' MCP servers and their OAuth data. It is the union of
// the abilities below plus Close.
//
// A Store is safe for concurrent use by many goroutines. Backends shared by
// processes (Postgres, or several processes on one SQLite file) keep every
// operation atomic across processes too; WithLock documents its own scope
// per backend. Every method that blocks takes a ctx that bounds only that
// call.
type Store interface {
	Servers
	KV
	Locker
	// Close releases the database. It is idempotent and safe to call
	// concurrently; calls after the first return the first call's error.
	// Other methods fail after Close.
	Close() error
}

// Servers stores server rows. Rows are listed in the order they were first
// written; replacing, updating or renaming a row keeps its place.
type Servers interface {
	// ListServers returns the servers of namespace ns in insertion order;
	// an empty slice when there are none.
	ListServers(ctx context.Context, ns string) ([]Server, error)
	// GetServer returns one server, or an error wrapping ErrNotFound.
	GetServer(ctx context.Context, ns, id string) (Server, error)
	// PutServer inserts s, or replaces the row with the same (Namespace,
	// ID), keeping its CreatedAt and its place in the list. Namespace and
	// ID must not be empty.
	PutServer(ctx context.Context, s Server) error
	// UpdateServer reads the row, calls fn with it and writes what fn left
	// in it, in one transaction: concurrent updates of different fields
	// never lose each other. fn is called at most once, must be quick and
	// must not use the Store (it runs inside the transaction); if it
	// returns an error nothing is written and UpdateServer returns that
	// error wrapped. fn must not change Namespace or ID (use RenameServer);
	// CreatedAt and UpdatedAt are set by the store. A missing row is an
	// error wrapping ErrNotFound and fn is not called.
	UpdateServer(ctx context.Context, ns, id string, fn func(*Server) error) error
	// DeleteServer deletes the row and every key-value entry filed under
	// the id, atomically. An unknown id is not an error (its entries are
	// still deleted).
	DeleteServer(ctx context.Context, ns, id string) error
	// RenameServer changes a server's id from oldID to newID and moves
	// every key-value entry filed under oldID to newID (and, in a
	// PinStore, the server's pins), atomically; the
	// row keeps its place and CreatedAt. Entries already filed under newID
	// (which has no row) are replaced. It fails with ErrConflict when newID
	// has a row and with ErrNotFound when oldID has none; then nothing
	// changes. Renaming a row to its own id does nothing.
	RenameServer(ctx context.Context, ns, oldID, newID string) error
}

// KV is a key-value store for a server's OAuth data (client information,
// tokens, discovery state, PKCE verifiers, state nonces), scoped by
// namespace and server id. Values are encrypted when the Store has a Cipher.
//
// An entry may expire: it is then invisible to every read and to KVTake,
// exactly as if deleted, and the backend deletes it lazily. Expiry is judged
// against the Store's clock (Options.Now of the backend). Entries may exist
// for a server id that has no row; DeleteServer and RenameServer act on them
// all the same.
type KV interface {
	// KVGet returns the value, or an error wrapping ErrNotFound.
	KVGet(ctx context.Context, ns, serverID, key string) ([]byte, error)
	// KVPut sets the value of key. A zero expiresAt means the entry never
	// expires; one at or before the Store's now makes it invisible at once.
	KVPut(ctx context.Context, ns, serverID, key string, value []byte, expiresAt time.Time) error
	// KVDelete deletes key; a missing key is not an error.
	KVDelete(ctx context.Context, ns, serverID, key string) error
	// KVTake deletes key and returns the value it had, atomically: of
	// concurrent callers (in any process sharing the database) exactly one
	// gets the value and the others get ErrNotFound. This makes OAuth
	// state nonces and verifiers single-use.
	KVTake(ctx context.Context, ns, serverID, key string) ([]byte, error)
	// KVList returns the entries of the server whose key starts with
	// prefix ("" lists them all), keyed by the full key.
	KVList(ctx context.Context, ns, serverID, prefix string) (map[string][]byte, error)
}

// KeepAwakeLister is implemented by stores that can list the agents with a
// keep-awake server (store/sqlite and store/postgres do).
type KeepAwakeLister interface {
	// ListKeepAwake returns the namespaces that have at least one server
	// with KeepAwake set, in the order their first server was written (the
	// order in which the backends' ListNamespaces lists them); an empty
	// slice when there are none. It reads an index of the keep-awake rows
	// only, so it stays quick with many agents.
	ListKeepAwake(ctx context.Context) ([]string, error)
}

// BatchPutter is implemented by stores that can write many servers at once
// (store/sqlite and store/postgres do), for seeding large databases.
type BatchPutter interface {
	// PutServers writes every server of servers as PutServer would, in
	// order (a later row with the same Namespace and ID replaces an earlier
	// one and keeps its place), all in one transaction: either every row is
	// written or none is. An invalid row fails the whole call, naming it.
	PutServers(ctx context.Context, servers []Server) error
}

// Locker runs functions under named locks, so that work such as an OAuth
// token refresh happens once per server even when several goroutines (and,
// with a shared database, several processes) want it at the same moment.
type Locker interface {
	// WithLock waits for the lock named by (ns, serverID, name), calls fn,
	// and releases the lock when fn returns, even if it panics. It returns
	// fn's error, or ctx's error if ctx ends before the lock is held (then
	// fn is not called). fn gets ctx and may use the Store. Locks are not
	// reentrant: fn must not take the same lock again. Which callers a lock
	// excludes depends on the backend: every process using the database
	// (Postgres), or the callers of one Store (SQLite). serverID may be
	// empty for a lock of the whole namespace.
	WithLock(ctx context.Context, ns, serverID, name string, fn func(ctx context.Context) error) error
}
