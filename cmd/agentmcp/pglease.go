package main

import (
	"context"
	"fmt"

	"github.com/agentmcp/agentmcp/cluster/lease"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

// The agents of a PostgreSQL database are owned through leases by the
// agentmcp serve replicas (--cluster) sharing it: the replica an agent is
// awake on connects its servers, runs and settles its calls, approvals
// and tasks. A terminal command opening the database with --postgres
// first reads the agent's lease (Resolve). While a live replica owns the
// agent, a command that only reads opens the database read-only
// (postgres.Options.ReadOnly) and dormant, writing and settling nothing,
// and every other command (add and import included: a replica does not
// pick up a change stored beside it) is refused, naming the owner. When
// no replica owns the agent the command opens it as before, without a
// lease of its own: a replica that wakes the agent while the command runs
// (a request for it) is not stopped by it. An agentmcp serve without
// --cluster takes no lease, and is not seen.

// ownedError refuses a command that would act as the owner of an agent a
// live agentmcp serve replica owns.
type ownedError struct {
	owner lease.Owner
}

func (e *ownedError) Error() string {
	o := e.owner
	return fmt.Sprintf("agent %s is owned by agentmcp serve replica %s (cluster listener %s), where it is awake: use --server with the address of any replica, which sends the command to it, or try again once the agent hibernates",
		o.Namespace, o.Replica, o.ClusterURL)
}

// checkLease reads the lease of the agent ns of the PostgreSQL store st
// for this command. It returns whether a live replica owns the agent
// (then the command may only read), or an *ownedError when the command
// would act as the agent's owner beside it.
func (f *targetFlags) checkLease(ctx context.Context, st store.Store, ns string) (owned bool, err error) {
	pg, ok := st.(*postgres.Store)
	if !ok {
		return false, nil
	}
	o, err := pg.Resolve(ctx, ns)
	if err != nil {
		return false, err
	}
	if o.Replica == "" || !o.Live {
		return false, nil // hibernated, never claimed, or its owner died
	}
	if f.access != reading {
		return true, &ownedError{owner: o}
	}
	return true, nil
}
