// Package stdiosup is the supervisor of stdio MCP servers on Linux (see
// SupervisorEnv in package mcpclient/stdio): a program that imports
// mcpclient/stdio (as every program that imports mcpclient does), started
// again with AGENTMCP_STDIO_SUPERVISOR set, becomes the supervisor in this
// package's init function. The package imports the standard library only,
// so that its init runs before those of the program's heavier packages and
// a supervisor starts fast.
// Elsewhere than Linux the package is empty.
package stdiosup
