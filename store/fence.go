package store

import "context"

// Fence identifies one ownership of an agent (namespace): the replica
// holding its lease and the lease's epoch, a fencing token that is never
// reused. A replica that claims an agent gets a Fence and attaches it to
// the context of every write the agent makes (WithFence); a backend shared
// by several processes (store/postgres) then refuses, with ErrFenced, any
// write of that namespace made after the ownership ended. Backends used by
// one process only (store/sqlite) ignore fences.
type Fence struct {
	// Namespace is the agent, "class/instance".
	Namespace string
	// Replica is the id of the replica holding the lease.
	Replica string
	// Epoch is the lease's fencing token: every claim of any agent takes a
	// new, larger one.
	Epoch int64
}

// fenceKey is the context key of a Fence.
type fenceKey struct{}

// WithFence returns a copy of ctx that carries f. Server writes given this
// context (PutServer, PutServers, UpdateServer, DeleteServer, RenameServer,
// and ExposureStore.PutExposure)
// to rows of f.Namespace are fenced: they are made only if f is still the
// agent's current, live ownership, checked in the write's own transaction,
// and otherwise fail with ErrFenced. Writes to other namespaces, reads, and
// key-value and lock operations are not affected (OAuth tokens must be
// stored whoever refreshed them).
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceFrom returns the Fence that ctx carries, and whether it carries one.
func FenceFrom(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}
