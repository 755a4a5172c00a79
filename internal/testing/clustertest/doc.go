// Package clustertest holds the cluster test of agentmcp serve: three
// replicas of the built program on one throwaway PostgreSQL, under load and
// faults, with the figures of the replicas' acceptance printed as
// name=value lines. It has no code of its own outside its test files.
//
// # What runs
//
// On 127.0.0.1 only: a PostgreSQL server (internal/testing/pgtest); three
// agentmcp serve --postgres DSN --cluster processes, each started and
// stopped by its process id; MCP test servers of both eras (go-sdk's
// stateless streamable HTTP, which speaks 2026-07-28, and its stateful one,
// the legacy era), some behind the fake OAuth server (internal/testing/oauthtest)
// with short-lived access tokens so that refreshes happen during the
// faults (it honours a rotated refresh token presented again within 60 s,
// as real servers can: a replica killed between the server's answer and
// its save cannot keep the rotated token); API clients that send each request to a random replica of the
// ones a load balancer would use; WebSocket subscribers through a small TCP
// balancer of the test's own.
//
// Faults, in rounds: kill -9 of the replica whose lease rows name the most
// agents, restarted a few seconds later (several times in a row); a rolling
// SIGTERM drain of all three, each restarted and ready before the next;
// SIGSTOP of one replica for longer than the lease, then SIGCONT;
// PostgreSQL stopped and started.
//
// # Telling replicas apart at the MCP servers
//
// Replicas share the servers' URLs and sessions (a session moves to the
// next owner of its agent), so neither says who sent a request. The test
// servers ask the kernel instead: a request's TCP connection, identified by
// its four-tuple, is a socket (looked up with NETLINK_SOCK_DIAG, as ss does,
// or in /proc/net/tcp) whose inode is one of the file descriptors in
// /proc/PID/fd of exactly one process. Every request is
// recorded with the process id that sent it and the time from its arrival to
// its end (the handler's return, or the client's connection closing), so a
// long-lived stream counts for as long as it is held. Two processes with
// overlapping activity on one server are two active owners. A process
// frozen by SIGSTOP cannot act: its activity is not counted while it is
// stopped, nor for a grace second after SIGCONT for the sockets it still
// holds to close (a request it starts after SIGCONT always counts).
//
// # Leaks
//
// After every kill cycle, with the test's requests and streams paused, the
// survivors' agents hibernated and their idle connections closed, each
// survivor reports its goroutines and live heap (server.StatsPath on its
// cluster listener); those of the survivor that lived through the most
// cycles, after its first and its last, must stay within ±10 % (one
// goroutine more or fewer passes: a process's own are about 14). Before
// the faults, every replica wakes every agent once, so that what a first
// wake fills for good does not count as growth.
//
// # Sessions under churn
//
// TestChurnSessions runs one agentmcp serve --db (SQLite) with many agents
// whose servers (go-sdk's stateful streamable HTTP: legacy sessions) are
// added and removed while the agents hibernate every fraction of a second,
// kills serve with SIGKILL and restarts it, then removes every server and
// checks that no session stays open on the upstream (those of handshakes
// given up and of refused resumes included), but those the killed process
// had not stored. It prints
// churn_sessions=N figures, runs in the same profiles (fast: seconds) and
// skips likewise.
//
// # A task across a failover
//
// TestClusterTaskFailover runs two replicas and a task server of the
// 2026-07-28 tasks extension (mcptest.TaskServer): a tool call through the
// API runs as a task, the replica that owns the agent is killed -9 while
// it runs, another one wakes the agent once the dead one's lease expired
// (agents whose owner died with a running task are rehomed as keep-awake
// ones are), resumes polling the task from the store, and stores its
// result once the server finishes it; the task server, telling replicas
// apart as above, sees no two processes at once. It runs with the fast
// profile's lease (make test; about ten seconds after the shared build),
// with the full one's under AGENTMCP_CLUSTER=full, and skips otherwise
// (control runs included). agentmcp is built once for the package's tests.
//
// # Profiles
//
// The fast profile (lease 3 s, about a minute and a half) runs with
// AGENTMCP_CLUSTER=fast (make test, or make cluster-fast alone), the full
// profile (lease 8 s, more cycles) with AGENTMCP_CLUSTER=full (make
// cluster); unset (or off), the test skips (a plain
// go test ./... does not start the replicas). It skips, saying why, when
// serve has no --cluster flag.
// AGENTMCP_CLUSTER=control runs the fast profile on three serves without
// --cluster, as a check of the test itself: it must fail with duplicate
// owners. AGENTMCP_CLUSTER_BIN runs a built agentmcp instead of building
// one; AGENTMCP_CLUSTER_LOGS=1 prints the ends of the replicas' logs even
// when the test passes (they are printed when it fails).
// AGENTMCP_CLUSTER_HEAPDIR=DIR saves each survivor's heap profile after
// every kill cycle in DIR (the replicas sample every 4 KiB allocated), for
// a leak hunt: go tool pprof -diff_base FIRST LAST.
package clustertest
