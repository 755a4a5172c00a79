package store

import "errors"

// ErrNotFound is wrapped by the error a Store returns when the server or key
// asked for does not exist (or, for a key, has expired). Test for it with
// errors.Is.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is wrapped by the error RenameServer returns when the new id is
// already used by another server of the same namespace.
var ErrConflict = errors.New("store: id already in use")

// ErrDecrypt is wrapped by the error a read returns when a stored value is
// encrypted and the Store has no Cipher, or a Cipher with a different key, or
// when the stored bytes are not a value this package wrote. Nothing is
// returned for such a value: configure the key it was written with.
var ErrDecrypt = errors.New("store: cannot decrypt stored value (wrong or missing AGENTMCP_SECRET_KEY?)")

// ErrFenced is wrapped by the error a write returns when it was made under a
// Fence (see WithFence) that is no longer the agent's current, live
// ownership: another replica has claimed the agent since, or the lease was
// released, or the replica holding it has expired. Nothing was written. The
// caller has lost the agent and must stop acting for it.
var ErrFenced = errors.New("store: write fenced: this replica no longer owns the agent")

// ErrUnavailable is wrapped by the error of an operation the database could
// not serve now: it did not answer within the Store's deadline (the
// backends' Options.Timeout, DefaultTimeout unless set), the connection to
// it failed, it is shutting down or starting, or it refuses writes (disk
// full, read-only file system). The operation may be retried later. A write
// that fails this way wrote nothing, but for one case a backend documents
// (store/postgres: a commit whose answer did not arrive in time).
var ErrUnavailable = errors.New("store: the database is unavailable")
