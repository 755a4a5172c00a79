package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmcp/agentmcp/store"
)

// Directory decides which of several processes sharing a store owns each
// agent: the replicas of agentmcp serve on one Postgres. A Host with a
// Directory claims an agent before it opens it and releases it only after
// it closed it, so that two processes never hold an agent's connections at
// once; and the agent's writes carry the claim's fence, so that a process
// that lost an agent cannot change it.
type Directory interface {
	// Claim makes this process the owner of the agent ns ("class/name")
	// and returns the fence its writes carry, or an error wrapping
	// ErrOwnedElsewhere (an *OwnedElsewhereError says where) when another
	// live process owns it.
	Claim(ctx context.Context, ns string) (store.Fence, error)
	// Release ends the ownership f, once its agent is closed. Releasing an
	// ownership already lost is not an error.
	Release(ctx context.Context, f store.Fence) error
	// Gate reports whether this process may still act for the agents it
	// owns; while it returns an error, their outbound requests are stopped
	// unsent (mcpclient.Options.Gate). It must be fast.
	Gate() error
}

// ClaimGater is implemented by a Directory whose trust can lapse and
// return (a replica that could not reach its database for a while).
// ClaimGate is called before an agent is claimed and returns the gate of
// that agent: closed whenever Gate is, and for good once the trust has
// lapsed after the call, even when it returns, since the agent may then
// be claimed elsewhere while this copy is still closing. Host uses it,
// when the Directory has it, instead of Gate.
type ClaimGater interface {
	ClaimGate() func() error
}

// ErrOwnedElsewhere is wrapped by Host.Use's error for an agent another
// process owns.
var ErrOwnedElsewhere = errors.New("agent: owned by another process")

// OwnedElsewhereError names the process that owns an agent.
type OwnedElsewhereError struct {
	Namespace string
	// Owner is the owner's id, and URL where it takes requests for its
	// agents (the cluster listener), when known.
	Owner, URL string
}

func (e *OwnedElsewhereError) Error() string {
	return fmt.Sprintf("agent %s is owned by process %s (%s)", e.Namespace, e.Owner, e.URL)
}

func (e *OwnedElsewhereError) Unwrap() error { return ErrOwnedElsewhere }

// fencedStore is the store of an agent opened under a Directory claim:
// every write of its servers carries the fence, and a write refused as
// fenced tells the host that the agent is lost.
type fencedStore struct {
	store.Store
	fence store.Fence
	lost  func()
}

func (s *fencedStore) ctx(ctx context.Context) context.Context { return store.WithFence(ctx, s.fence) }

func (s *fencedStore) check(err error) error {
	if errors.Is(err, store.ErrFenced) {
		s.lost()
	}
	return err
}

func (s *fencedStore) PutServer(ctx context.Context, srv store.Server) error {
	return s.check(s.Store.PutServer(s.ctx(ctx), srv))
}

func (s *fencedStore) UpdateServer(ctx context.Context, ns, id string, fn func(*store.Server) error) error {
	return s.check(s.Store.UpdateServer(s.ctx(ctx), ns, id, fn))
}

func (s *fencedStore) DeleteServer(ctx context.Context, ns, id string) error {
	return s.check(s.Store.DeleteServer(s.ctx(ctx), ns, id))
}

func (s *fencedStore) RenameServer(ctx context.Context, ns, oldID, newID string) error {
	return s.check(s.Store.RenameServer(s.ctx(ctx), ns, oldID, newID))
}

// fencedStore keeps store.ExposureStore visible through the wrapper, and
// fences its writes; a store without it gets errors from both.
var _ store.ExposureStore = (*fencedStore)(nil)

func (s *fencedStore) GetExposure(ctx context.Context, ns string) (store.Exposure, error) {
	es, ok := s.Store.(store.ExposureStore)
	if !ok {
		return store.Exposure{}, nil
	}
	return es.GetExposure(ctx, ns)
}

func (s *fencedStore) PutExposure(ctx context.Context, ns string, e store.Exposure) error {
	es, ok := s.Store.(store.ExposureStore)
	if !ok {
		return ErrExposureUnsupported
	}
	return s.check(es.PutExposure(s.ctx(ctx), ns, e))
}

// taskStore returns the tasks of the underlying store, when it keeps
// them, with their writes fenced: a replica that lost the agent stores no
// task of it, and learns it lost it (the lease decides who polls).
func (s *fencedStore) taskStore() (store.TaskStore, bool) {
	ts, ok := s.Store.(store.TaskStore)
	if !ok {
		return nil, false
	}
	return fencedTasks{s: s, ts: ts}, true
}

// fencedTasks is the TaskStore of a fencedStore.
type fencedTasks struct {
	s  *fencedStore
	ts store.TaskStore
}

func (f fencedTasks) PutTask(ctx context.Context, t store.Task) error {
	return f.s.check(f.ts.PutTask(f.s.ctx(ctx), t))
}

func (f fencedTasks) ListTasks(ctx context.Context, ns string) ([]store.Task, error) {
	return f.ts.ListTasks(ctx, ns)
}

func (f fencedTasks) DeleteTask(ctx context.Context, ns, serverID, taskID string) error {
	return f.s.check(f.ts.DeleteTask(f.s.ctx(ctx), ns, serverID, taskID))
}

// fencedStore keeps store.CatalogStore visible through the wrapper, and
// fences its writes; a store without it keeps no catalogs.
var _ store.CatalogStore = (*fencedStore)(nil)

func (s *fencedStore) PutCatalog(ctx context.Context, c store.Catalog) error {
	cs, ok := s.Store.(store.CatalogStore)
	if !ok {
		return nil
	}
	return s.check(cs.PutCatalog(s.ctx(ctx), c))
}

func (s *fencedStore) ListCatalogs(ctx context.Context, ns string) ([]store.Catalog, error) {
	cs, ok := s.Store.(store.CatalogStore)
	if !ok {
		return []store.Catalog{}, nil
	}
	return cs.ListCatalogs(ctx, ns)
}

func (s *fencedStore) DeleteCatalog(ctx context.Context, ns, serverID string) error {
	cs, ok := s.Store.(store.CatalogStore)
	if !ok {
		return nil
	}
	return s.check(cs.DeleteCatalog(s.ctx(ctx), ns, serverID))
}
