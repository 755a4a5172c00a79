# agentmcp's entry points. Each target is a script under scripts/, which CI
# and a fresh machine run the same way.

.PHONY: test conformance build bench

# Every test, after installing what the tests need (npm packages, ...).
test:
	scripts/test

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
