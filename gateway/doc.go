// Package gateway makes an agent an MCP server: one streamable HTTP
// endpoint that fronts all of the agent's MCP servers, for Claude Code,
// Cursor, VS Code or any MCP client. agentmcp serve mounts one per agent
// at /agents/{class}/{name}/mcp.
//
//	g := gateway.New(a, &gateway.Options{
//		Expose: func(serverID, tool string) bool { return tool != "delete_repo" },
//	})
//	defer g.Close(ctx)
//	http.Handle("/mcp", g)
//
// # What a client sees
//
// The union of the catalogs of the agent's servers that are ready:
//
//   - tools under the keys of the agent's AITools (package aitools:
//     "tool_<server>_<tool>", or a hashed key where that is not a valid or
//     unique name), stable while other servers come and go, with the
//     server named in each title and description;
//   - prompts as "<server id>.<prompt>" (PromptName);
//   - resources and resource templates under their own URIs (the first
//     server listing a URI serves it), their servers named likewise; but
//     the ui:// resources of MCP Apps (a tool's view) under URIs of their
//     server's, ui://{server id}/{the rest of the URI}, in the resources
//     and in the tools' _meta.ui.resourceUri (and the older
//     _meta["ui/resourceUri"]) alike, so that two servers' views of the
//     same URI are each read from their own server (resources/read asks
//     the server for its own URI, and its contents come back under the
//     gateway's). The rest of a tool's _meta, and a view's (its CSP), pass
//     through as the server gave them.
//
// A server that is down, failed or waiting for authorisation shows
// nothing until it is ready again. Clients get list_changed (tools,
// prompts, resources) whenever what they would list changes: a server
// connected, disconnected, added or removed, an upstream list_changed,
// Options.Expose changed (after Refresh).
//
// # Calls
//
// A call is forwarded through the agent (Agent.CallTool, GetPrompt,
// ReadResource) to the server the name belongs to. The client's progress
// token gets the server's progress notifications (a 2026-07-28 client
// whose call may need its input: on the request of the call, or of its
// retry, that waits on it); cancelling the call (a
// notifications/cancelled, or the end of a 2026-07-28 request) cancels it
// on the server. A call that does not complete (the server went away
// during it, or asks for authorisation) is a tool result with IsError and
// the reason, which a model can read, rather than a protocol error. A
// result (of a tool, a prompt, a resource read, or a list) reaches each
// era's client in that era's shape, whatever the upstream server's era:
// "resultType", the gateway's own server info in _meta and, on lists and
// reads, the cache hints ttlMs and cacheScope for 2026-07-28, none of them
// in a session; an upstream server's info is never passed on.
//
// A request for input that an upstream server makes during a call
// (elicitation, sampling) goes to the client that made the call when it
// declared the capability (and the mode); otherwise to the fallback
// handlers (Options.Elicitation and Sampling; by default the agent's own,
// as without the gateway: agentmcp serve queues elicitations for its
// dashboard and API). A session's client (2025-11-25) is asked on
// its session. A 2026-07-28 client, which has none, gets an
// input-required result with the request and a state, and its retry with
// the answer resumes the call, which runs on meanwhile (for at most
// Options.InputTimeout, 2 minutes by default, without the retry: a
// question the client abandons is then cancelled upstream, and no longer
// keeps the agent busy). A 2026-07-28 server's request names its
// call; a 2025-11-25 server's does not, and goes to a client only when
// every request in flight on that server's session is that client's call
// (mcpclient.RequestOrigins). A request made during a call of the agent's
// own (its API, the dashboard), or while one is in flight, goes to the
// agent's handlers, as does one no client's call explains: the request
// may be someone else's. Sampling is
// offered to the upstream servers from their first session after New (an
// agent without a sampling handler of its own did not offer it before).
//
// # Tasks
//
// A tool that its upstream server runs as an MCP task (mcpclient's tasks,
// either era upstream) is a plain call for most clients: the gateway holds
// it until the task's result, with its status messages as progress where
// the client gave a progress token. A 2026-07-28 client that declares the
// tasks extension (io.modelcontextprotocol/tasks, which the gateway
// offers in its server/discover capabilities while one of the agent's
// servers offers tasks) gets the task of a call to such a server instead: its tools/call is
// answered with resultType "task" once the upstream task exists, under the
// id "{serverId}:{taskId}"; the agent polls the task and stores it (the
// agent's Tasks), and the client's tasks/get (with the result once
// completed) and tasks/cancel (which sends tasks/cancel upstream) are
// answered from the agent, across its restarts. Only the user who started
// a task (the request's auth.TokenInfo UserID) sees it; another gets
// -32602 unknown task, as for an id that names none. The task's requests
// for input go to the agent's own handlers (the client sees it working),
// and tasks/update is refused. Tasks are passed through on the gateway's
// own answer to a listed tool's call (see below), not on go-sdk's path
// (a tool with header parameters): there the call is held. 2025-11-25
// sessions are not offered tasks: go-sdk's server has none.
//
// A call the agent's stored policy asks about (for the gateway caller) is
// a task for such a client too, whatever its server, and the extension is
// offered while the policy may ask: the tools/call is answered at once
// with the task "{serverId}:{approvalId}", whose tasks/get says working
// (its status message names the approval) until the approval is answered
// and the approved call ran, then completed with the call's result (a
// tool result with isError and the reason for a deny, an expiry or a
// refusal); tasks/cancel of a pending one denies it. It lives as the
// approval does, in the store, and only its user sees it. Clients of
// 2025-11-25 sessions, and those without the extension, have their call
// held as above (and, when they declared elicitation, are asked).
//
// # Protocol eras
//
// ServeHTTP speaks both eras of go-sdk's server: requests whose
// MCP-Protocol-Version header is 2026-07-28 or later are served without a
// session (server/discover, subscriptions/listen for list_changed), all
// others in 2025-11-25 (or older) sessions.
//
// # Sessions
//
// A session lives until the client's DELETE, Options.SessionTimeout
// without a request (DefaultSessionTimeout), the caps, its agent's end or
// Close. It does not keep the agent awake (the caller holds the agent for
// each request it serves): an agent hibernated while its client is idle
// ends the session, and the client, told 404, starts another. Options.
// MaxSessions caps a gateway's sessions (DefaultMaxSessions) and a
// SessionCap those of several gateways together: a new session past a cap
// ends the one idle the longest (no request in flight), and with every
// session busy the new client's initialize is refused (503). A session is
// bound to the user that opened it, the UserID of the request's
// auth.TokenInfo (go-sdk's auth.RequireBearerToken puts it there): a
// request of another user (or of none) for it gets 404, as an unknown
// session does. Logs name a session by a hash of its id.
//
// # The common call, answered below go-sdk's server
//
// A tools/call that is one plain request (no progress token, no batch,
// no retry with input responses) for a listed tool is answered by the
// Gateway itself: decoded once with encoding/json, forwarded by the same
// code as go-sdk's path, its JSON-RPC response written as go-sdk's server
// writes it, as application/json. go-sdk v1.8.0's server would decode it
// five times, each with a fresh 32 KiB buffer. In a session this is done
// only for a session go-sdk made and whose client declared neither
// elicitation nor sampling (so nothing of the call needs the session's
// stream); a notifications/cancelled for such a call cancels it. Anything
// else, and any request the Gateway does not fully understand, goes to
// go-sdk's server unchanged, which answers it (errors included) as it
// would without this path.
//
// # Exposure
//
// Options.Expose decides which servers and tools are exposed (see
// ExposeFunc): a tool it refuses is neither listed nor callable, and it is
// asked again before each call, so a tool refused since the last list is
// refused too. Call Refresh after the rules behind it change.
//
// The agent's tool policy applies too, for the caller policy.Gateway: the
// tools it denies that caller are not listed (the list is
// Agent.ToolSet(policy.Gateway, ...)), and every call goes through
// Agent.CallTool with that caller, so a denied or rate-limited call is a
// result with isError that says why, and a call the policy asks about
// waits, within the client's own timeout, for a person's answer (a deny's
// reason is in the isError result). A client that declared form
// elicitation is asked too, with a form (approve, or deny with a reason,
// optionally remembering): its answer decides the stored approval as a
// person's would; declined, cancelled or unanswered, the approval stays
// pending for a person. A 2026-07-28 client that declares the tasks
// extension gets such a call as a task at once instead (see Tasks). The
// agent reports a policy change as an update, which brings the lists in
// line.
//
// # Lifetime
//
// New takes over the agent's elicitation and sampling handlers (passing
// on what no client takes to the fallback handlers); Close ends the
// sessions, stops following the agent and puts back the handlers the
// agent had before New, so that gateways made one after another on an
// agent never chain. A Gateway is an agent.Attachment: a program that
// hosts many agents attaches one to each (agent.Agent.Attach; agentmcp
// serve does on an agent's first MCP request), and the agent closes it
// when it closes (or is hibernated by its Host), before its connections;
// a wake makes a new one. Its questions waiting for a client's answer
// (PendingInputs) count in the agent's Busyness. A Gateway also closes
// itself when its agent is closed. Authentication is the caller's: wrap
// the handler.
package gateway
