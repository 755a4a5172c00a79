package mcpclient

// State is the connection state of one server, as in the seed.
type State string

const (
	// StateConnecting: a handshake is under way, or about to be (every
	// registered server starts here).
	StateConnecting State = "connecting"
	// StateAuthenticating: the server answered 401 (or 403 with an OAuth
	// error); the connection waits for authorisation.
	StateAuthenticating State = "authenticating"
	// StateConnected: the session is up; its catalog is not (yet) known.
	StateConnected State = "connected"
	// StateDiscovering: the catalog is being fetched.
	StateDiscovering State = "discovering"
	// StateReady: the session is up and its catalog is known.
	StateReady State = "ready"
	// StateFailed: the last handshake failed; see the server's Error.
	StateFailed State = "failed"
	// StateNotConnected: the server is registered but has no connection,
	// after CloseConnection. (The seed reports this pseudo-state for stored
	// servers without a connection.)
	StateNotConnected State = "not-connected"
)

// EventKind says what an Event is about.
type EventKind string

const (
	EventRegistered       EventKind = "registered"
	EventStateChanged     EventKind = "state"
	EventToolsChanged     EventKind = "tools"
	EventPromptsChanged   EventKind = "prompts"
	EventResourcesChanged EventKind = "resources"
	EventRemoved          EventKind = "removed"
	// EventRetryScheduled: a failed server waits for its next connection
	// attempt, due at ServerInfo.NextRetryAt; its state is unchanged.
	EventRetryScheduled EventKind = "retry"
)

// An Event reports a change to one server.
type Event struct {
	Kind     EventKind
	ServerID string
	// State is the server's state after the change.
	State State
	// Err is the error that came with the change, if any (a failed
	// handshake or discovery).
	Err error
}
