# agentmcp's entry points. Each target is a script under scripts/, which CI
# and a fresh machine run the same way.

.PHONY: test build

# Every test, after installing what the tests need (npm packages, ...).
test:
	scripts/test

# The agentmcp program, into bin/.
build:
	go build -o bin/agentmcp ./cmd/agentmcp
