# agentmcp's entry points. Each target is a script under scripts/, which CI
# and a fresh machine run the same way.

.PHONY: test test-long conformance build bench

# Every test, after installing what the tests need (npm packages, ...).
test:
	scripts/test

# The long tests, which make test skips: the reference server killed for
# 10 s under a connected Manager comes back ready by itself (TestDownTenSeconds);
# both stores seeded with 500,000 rows (TestLarge).
test-long:
	scripts/test-long

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
