// Package stdio runs an MCP server as a child process and speaks to it
// over the process's stdin and stdout: the stdio transport of the MCP
// specification. [Transport] is an [mcp.Transport] of go-sdk, so a plain
// [mcp.Client] can use it alone; mcpclient's Manager uses it the same way,
// for every server registered with a command.
//
// # Usage
//
//	client := mcp.NewClient(&mcp.Implementation{Name: "app", Version: "1.0"}, nil)
//	t := &stdio.Transport{Command: exec.Command("npx", "-y", "@modelcontextprotocol/server-everything")}
//	session, err := client.Connect(ctx, t, nil)
//	if err != nil {
//		return fmt.Errorf("%w; %s", err, t.Output()) // what the server said before it failed
//	}
//	defer session.Close() // stops the server and all it started
//
// # What it adds to go-sdk's CommandTransport
//
//   - Lines the server writes to stdout that are not JSON-RPC messages
//     (banners, log lines) are skipped, as the TypeScript SDK does, rather
//     than failing the connection: the first 10 are logged, sanitised, the
//     rest counted. A line over MaxLineLength fails the connection,
//     quoting its start.
//   - The server's stderr is logged line by line, within a bound (a
//     [LineLimiter]: a burst of 200 lines, then 20 a second; the lines
//     past it are counted and the count logged), and [Transport.Output]
//     quotes the last lines of it, with the last stdout line that was not
//     a message, to explain a server that failed to start. A server that
//     went away by itself (during its handshake, typically) leaves how it
//     ended in [Transport.Exit], an [*ExitError]: its exit status or
//     signal and its last stderr line. A program that cannot be run (not
//     found, not executable, a working directory that is not there) fails
//     Connect with os/exec's *exec.Error or an *fs.PathError (op "chdir"),
//     under the supervisor too.
//   - Closing the connection closes the server's stdin, then sends SIGTERM
//     and SIGKILL, TerminateDuration apart, if it does not exit, to its
//     process group: whatever it started (npx's node, a shell's children)
//     stops with it.
//   - [Environ] builds a server's environment without the program's
//     secrets: what the server's entry names, plus a documented few of
//     the program's variables (PATH, HOME, the locale, npm's and uv's
//     settings). The Manager of mcpclient starts every server with it; a
//     Transport used alone starts its Command with the Command's Env as
//     exec.Cmd does (nil: the program's whole environment).
//   - On Linux the server runs under a supervisor, the program itself (see
//     [SupervisorEnv]), that kills every process the server started when
//     the server ends and when the program dies, even by SIGKILL. A
//     [Starter] starts the processes from a thread that lives as long as
//     they do, as their parent-death signal requires.
//
// # Concurrency
//
// A connection's Read, Write and Close may be called concurrently, as
// mcp.Connection requires; Close is idempotent (every call returns the
// first one's result), returns once the process has been reaped, and
// waits at most three TerminateDurations before the final SIGKILL.
package stdio

// SupervisorEnv is the environment variable that makes a program that
// imports this package a stdio server's supervisor rather than itself. On
// Linux a stdio server runs under a supervisor: the program itself,
// started again from /proc/self/exe with SupervisorEnv set (to its pid);
// an init function of the package's (in internal/stdiosup, which imports
// the standard library only, so that it runs before the inits of heavier
// packages) sees the variable before main runs, so every program that
// imports this package (mcpclient does) is its own supervisor without a
// separate binary or any call of its own. A program's own init functions
// that run before it (those of packages that sort before
// github.com/agentmcp and need nothing else) run in the supervisor too:
// keep them free of side effects.
//
// The supervisor makes itself a child subreaper, starts the server with
// its own stdin, stdout and stderr (the pipes of the client: nothing is
// relayed) and waits. When the server exits, when the client asks
// (SIGUSR1, from Close), or when the client's process dies (its
// parent-death signal, SIGUSR1 too), it kills every process the server
// left behind: the server's children, and the processes orphaned under it
// (a subreaper adopts them, even those that started a session or a
// process group of their own), until it has none left; then it exits as
// the server did. A parent-death signal alone reaches only the direct
// child: without the supervisor, `npx`'s node or a shell's children
// outlive a killed program.
//
// The supervisor reports to the client on a pipe of its own (its fd 3,
// which the server does not inherit): the processes under it with their
// start times, soon after the server starts and again at doubling
// intervals (50 ms to 30 s) and after an exit under it; and "exit" once it
// has killed them all. Should the supervisor die without saying "exit"
// (SIGKILL, the OOM killer), the client notices at once (the pipe ends),
// kills what it supervised (the supervisor's process group, and each
// reported process that still is the one reported: same pid, same start
// time) and ends the connection with an error that says so, so that its
// owner (mcpclient's Manager) starts the server anew. Without this, a
// wrapper's real server (`sh -c`, `npx`, `uvx`) would run on, re-parented
// to init, unsupervised, with the client still speaking to it.
//
// Programs built as c-shared or c-archive libraries, whose /proc/self/exe
// is another program, start servers directly, with only the parent-death
// signal; other systems start them directly too, and ignore SupervisorEnv.
const SupervisorEnv = "AGENTMCP_STDIO_SUPERVISOR"
