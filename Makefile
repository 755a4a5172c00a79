# agentmcp's entry points. Each target is a script under scripts/, which CI
# and a fresh machine run the same way.

.PHONY: test conformance build

# Every test, after installing what the tests need (npm packages, ...).
test:
	scripts/test

# The official MCP conformance suite, every client scenario, alone.
conformance:
	scripts/conformance

# The agentmcp program, into bin/.
build:
	go build -o bin/agentmcp ./cmd/agentmcp
