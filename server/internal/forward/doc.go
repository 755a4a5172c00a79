// Package forward carries the HTTP API's requests between the replicas of
// a cluster (package cluster): a request for an agent another replica
// owns is proxied to the owner's cluster listener (Forwarder.Forward),
// signed for once with the cluster key (cluster.Signer), and the owner
// checks that signature on the requests it receives (Forwarder.Receive).
//
// One hop only: a request that came through the cluster listener is
// served there or refused (503 owner_moved, with a header that makes the
// forwarding replica follow the agent rather than pass the refusal on),
// never forwarded again. An owner that cannot be reached is waited for
// until its lease lapses (cluster.Replica.Follow decides whom to try and
// how long to wait), and the agent is then woken on the forwarding replica
// (Forward reports false). A request that got no answer is sent again
// only when it is safe to repeat; else it is answered 502 interrupted. A
// forwarded stream ends when the forwarding replica's streams end, and
// when its owner's lease lapses or moves on (cluster.Replica.WatchLease):
// its client reconnects, and finds the agent's new owner.
//
// The client's Authorization header and cookies are not passed on (the
// forwarding replica checked them; the owner trusts the signature), and
// the client's Host and scheme are (X-Forwarded-Proto), so that the
// owner builds the same callback URLs.
//
// # Concurrency
//
// A Forwarder is safe for concurrent use. CloseIdleConnections may be
// called at any time.
//
// # Errors
//
// Forward and Receive answer with the API's JSON errors (package reply):
// owner_unavailable, owner_moved, interrupted, unauthorized (a signature
// missing, wrong, stale or replayed), unavailable (the replay cache is
// full: retry).
package forward
