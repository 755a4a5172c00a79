# agentmcp's entry points. Each target is a script under scripts/, which CI
# and a fresh machine run the same way.

.PHONY: test test-long cluster cluster-fast conformance build bench

# Every test, after installing what the tests need (npm packages, ...).
test:
	scripts/test

# The long tests, which make test skips: the reference server killed for
# 10 s under a connected Manager comes back ready by itself (TestDownTenSeconds);
# both stores seeded with 500,000 rows (TestLarge).
test-long:
	scripts/test-long

# The cluster test's full profile: three serve --cluster replicas on one
# PostgreSQL under kill -9, rolling drains, SIGSTOP past the lease and a
# database outage (lease 8 s, about 5 to 7 minutes); prints its name=value figures
# and fails when a hold is missed. The log is kept in artifacts/cluster.txt.
cluster:
	scripts/cluster

# The cluster test's fast profile (lease 3 s, about a minute and a half).
cluster-fast:
	AGENTMCP_CLUSTER=fast scripts/cluster

# The official MCP conformance suite, every client scenario, alone.
conformance:
	scripts/conformance

# The agentmcp program, into bin/.
build:
	go build -o bin/agentmcp ./cmd/agentmcp

# Every benchmark figure in one run (about 3 minutes), with the table and the
# name=value lines of docs/PERFORMANCE.md; also kept in artifacts/bench.txt.
bench:
	scripts/bench
