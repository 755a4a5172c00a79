// Package lease is the model of a cluster's membership and ownership: a
// replica's row and its states, and the lease of one agent as it was read.
// Package cluster acts on these (cluster.Replica, cluster.LeaseStore);
// a store backend that keeps them (store/postgres) returns them. It holds
// types alone and imports nothing of agentmcp's but the standard library,
// so that a backend can return them without depending on the engine.
package lease

import "time"

// The states of a replica (Replica.State, Owner.State).
const (
	// ReplicaLive is a replica that takes new agents.
	ReplicaLive = "live"
	// ReplicaDraining is a replica that is handing its agents off before it
	// exits: it claims none.
	ReplicaDraining = "draining"
)

// Replica is one replica of a cluster, as its row was read.
type Replica struct {
	// ID identifies the replica's incarnation (a process start); it is never
	// reused.
	ID string
	// ClusterURL is the URL of the replica's internal listener.
	ClusterURL string
	// Version is the replica's build, for mixed-version deploys.
	Version string
	// State is ReplicaLive or ReplicaDraining.
	State string
	// AwakeAgents is the load the replica reported with its last heartbeat.
	AwakeAgents int
	// ExpiresAt is when the replica stops being live unless it heartbeats
	// first, on the database's clock.
	ExpiresAt time.Time
	// Live reports whether ExpiresAt was in the future when the row was
	// read (on the database's clock).
	Live bool
}

// Owner is the lease of one agent as it was read.
type Owner struct {
	// Namespace is the agent.
	Namespace string
	// Replica is the id of the replica named as the owner; "" when the agent
	// is hibernated (its lease was released) or was never claimed.
	Replica string
	// ClusterURL is the owner's internal listener; "" when Replica is "" or
	// its row is gone.
	ClusterURL string
	// Epoch is the fencing token of the current ownership, or of the last
	// one when the lease was released; 0 when the agent was never claimed.
	Epoch int64
	// Live reports whether the lease is valid: Replica's row exists and had
	// not expired when read. A Replica whose row expired or is gone owns
	// nothing: the agent can be claimed.
	Live bool
	// State is the owner's state (ReplicaLive, ReplicaDraining); "" when its
	// row is gone.
	State string
	// ExpiresIn is how long the lease had left when it was read, by the
	// database's clock: the owner's row expires then unless it is renewed
	// first. Zero when the lease is not live. A replica waiting for the
	// agent of an owner it cannot reach claims it once this has passed.
	ExpiresIn time.Duration
}
