// Command agentmcp connects to MCP servers from the command line.
//
// # Usage
//
//	agentmcp inspect https://example.com/mcp
//	agentmcp inspect -- npx -y @modelcontextprotocol/server-everything
//	agentmcp call https://example.com/mcp echo --args '{"message":"hi"}'
//	agentmcp call echo --args '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything
//
// Run "agentmcp help" for the commands and "agentmcp help <command>" for the
// flags of one.
//
// # Structure
//
// main.go only sets up signals and calls run(ctx, args, stdout, stderr),
// which the tests call in-process. run.go holds the table of subcommands
// (one file each: inspect.go, call.go, version.go); interact.go the
// terminal side of a call (progress, elicitations); flags.go the connection
// flags they share; connect.go the connection through mcpclient.Manager;
// target.go the agent a terminal command acts on (a running serve, or a
// database), and dblock.go who owns the agents of a SQLite database while
// a command runs on it with --db.
// A new subcommand is a file with a func returning a [command] and one line
// in [commands].
//
// # Errors
//
// run reports a failure itself, as one line on stderr ("agentmcp: ..."),
// and returns it; main only turns it into the exit status (see [exitCode]).
// Header values, URL queries and passwords never reach that line.
//
// # Output
//
// The JSON of inspect, call, tools --json and ls --json goes through one
// writer (jsonout.go) that keeps server text from taking over the
// terminal: bidirectional and C1 controls are printed as \u escapes, and
// <, > and & as they are. Text output drops those characters (oneLine).
package main
