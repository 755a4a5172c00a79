package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"time"

	"github.com/agentmcp/agentmcp/cluster/lease"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

// The agents of a PostgreSQL database are owned through leases by the
// agentmcp serve replicas (--cluster) sharing it: the replica an agent is
// awake on connects its servers, runs and settles its calls, approvals
// and tasks. A terminal command opening the database with --postgres
// first reads the agent's lease. While a live replica (or another such
// command) owns the agent, a command that only reads opens the database
// read-only (postgres.Options.ReadOnly) and dormant, writing and settling
// nothing, and every other command (add and import included: an awake
// agent does not pick up a change stored beside it) is refused, naming
// the owner. Otherwise a command that acts as the owner holds the agent's
// lease for its duration (postgres.Store.Hold, renewed by Heartbeat):
// a replica asked for the agent meanwhile waits for it rather than wake
// it. An agentmcp serve without --cluster takes no lease, and is not seen.

// Holding a lease: the command's row lives holdTTL unless renewed, every
// holdTTL/3; a command killed holds the agent until then.
const holdTTL = 15 * time.Second

// ownedError refuses a command that would act as the owner of an agent a
// live agentmcp serve replica owns.
type ownedError struct {
	owner lease.Owner
}

func (e *ownedError) Error() string {
	o := e.owner
	if o.ClusterURL == "" { // a command's hold
		return fmt.Sprintf("agent %s is in use by a terminal command with --postgres (%s), which owns it: try again once it ends", o.Namespace, o.Replica)
	}
	return fmt.Sprintf("agent %s is owned by agentmcp serve replica %s (cluster listener %s), where it is awake: use --server with the address of any replica, which sends the command to it, or try again once the agent hibernates",
		o.Namespace, o.Replica, o.ClusterURL)
}

// checkLease settles the lease of the agent ns of the PostgreSQL store st
// for this command. It returns owned when a live replica or command owns
// the agent (then the command may only read), or an *ownedError when the
// command would act as the agent's owner beside it. A command that acts as
// the owner of an agent nobody owns holds its lease: unhold releases it
// (call it before closing st), nil otherwise.
func (f *targetFlags) checkLease(ctx context.Context, st store.Store, ns string) (owned bool, unhold func(), err error) {
	pg, ok := st.(*postgres.Store)
	if !ok {
		return false, nil, nil
	}
	if f.access != reading {
		holder := fmt.Sprintf("cmd-%s-%d-%s", f.command, os.Getpid(), rand.Text()[:8])
		fence, held, err := pg.Hold(ctx, ns, holder, mcpclient.Version, holdTTL)
		if err != nil {
			return false, nil, err
		}
		if held {
			return false, renewHold(pg, fence), nil
		}
	}
	o, err := pg.Resolve(ctx, ns)
	if err != nil {
		return false, nil, err
	}
	if o.Replica == "" || !o.Live {
		if f.access != reading { // released between Hold and Resolve
			return false, nil, fmt.Errorf("the lease of agent %s changed while it was read: try again", ns)
		}
		return false, nil, nil // hibernated, never claimed, or its owner died
	}
	if f.access != reading {
		return true, nil, &ownedError{owner: o}
	}
	return true, nil, nil
}

// renewHold renews the hold f every holdTTL/3 until the returned function
// is called, which then releases it and deletes the holder's row.
func renewHold(pg *postgres.Store, f store.Fence) (unhold func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(holdTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), holdTTL/3)
			pg.Heartbeat(ctx, f.Replica, holdTTL, 0) // a lost hold: its row expires, as a frozen replica's
			cancel()
		}
	}()
	return func() {
		close(done)
		<-stopped
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		pg.Release(ctx, f)
		pg.DeleteReplica(ctx, f.Replica)
	}
}
