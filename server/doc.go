// Package server hosts named agents over HTTP: what agentmcp serve runs.
//
// Each agent lives at /agents/{class}/{name}. An agent exists when it has
// servers in the store, while it is awake (created by adding a server to
// it, or by PUT /agents/{class}/{name}; one without servers is not stored
// and is gone once hibernated), and for the default agents (DefaultAgent,
// agentmcp/default, and Options.DefaultAgent), which always exist. Every
// other route of an agent that does not exist answers 404 unknown_agent,
// with the agents that exist in the error's "agents": a mistyped name
// never creates an empty agent, nor wakes anything. Its routes:
//
//	GET    /agents                                          the agents that exist: {"agents": [{class, name}], "more": true?}, default agents first, then
//	                                                        those with stored servers, then the other awake ones; at most 1000, "more" set when some were left out
//	PUT    /agents/{class}/{name}                           create the agent -> 201, or 200 when it exists
//	POST   /agents/{class}/{name}/hibernate                 hibernate it now, as its idle timeout would -> 204 (also when asleep already);
//	                                                        409 agent_busy while something keeps it awake, its message naming what (agent.Busyness: requests and calls in flight,
//	                                                        streams, pending elicitations, an OAuth sign-in, MCP clients' unanswered questions); never wakes an agent
//	GET    /agents/{class}/{name}/busy                      what keeps it awake now, without waking it nor counting as a request to it (api.BusyState): {awake, inUse?, work?,
//	                                                        watchers?, elicitations?, authorizing?, inputs?, keepAwake?, reason}, reason being "asleep", "idle" or
//	                                                        what hibernate's 409 names; the dashboard shows it on a line under its header
//	POST   /agents/{class}/{name}/reload                    take in what another process changed in the agent's stored servers (agentmcp add --db
//	                                                        on serve's database): new ones connect, deleted ones close -> {"added": [id], "removed": [id]}
//	GET    /agents/{class}/{name}                           WebSocket (Upgrade), else MCPServersState as JSON
//	GET    /agents/{class}/{name}/events                    the state as server-sent events
//	GET    /agents/{class}/{name}/servers                   {"servers": {id: MCPServer}, "order": [id, ...]} (agent.ServerOrder)
//	POST   /agents/{class}/{name}/servers                   add (api.AddRequest; "keepAwake": true marks the server keep-awake) -> {id, state, authUrl?};
//	                                                        201 new, 200 existing; creates the agent. The id defaults to the name, normalised
//	                                                        (-2, -3 on a collision). A failed first connection stores nothing (502 connect_failed)
//	                                                        unless "keepIfUnreachable": true (502 connect_failed with the serverId kept);
//	                                                        a URL answering 404/405/501 to both transports is 400 not_mcp_endpoint either way;
//	                                                        a name another server has is 409 name_in_use (its serverId), unless "replace": true
//	GET    /agents/{class}/{name}/servers/{id}              one server (api.ServerState): its id, its MCPServer fields, "serverInfo" (its handshake's name and
//	                                                        version), "session" (live, resumable or none) and "toolCount": what agentmcp get shows
//	DELETE /agents/{class}/{name}/servers/{id}              remove -> 204
//	POST   /agents/{class}/{name}/servers/{id}/reconnect    connect again now, keeping the OAuth grant -> {id, state, authUrl?}; 502 connect_failed when still unreachable
//	GET    /agents/{class}/{name}/servers/{id}/logs         the server's last 50 log messages (notifications/message) since the agent woke, oldest first -> {serverId, logs: [{time, level, logger?, data}]}
//	GET    /agents/{class}/{name}/logs                      every server's last log messages, by server id -> {servers: [{serverId, logs}]}
//	POST   /agents/{class}/{name}/servers/{id}/tools/call   {name, arguments, timeoutMs?, approval?} -> CallToolResult; with Accept: text/event-stream,
//	                                                        the call's events as server-sent events (see Calls); the agent's policy decides first (see Policy):
//	                                                        403 tool_denied, 429 rate_limited with Retry-After, 202 {"approval": {...}} for a call still waiting for approval
//	POST   /agents/{class}/{name}/servers/{id}/resources/read  {uri, timeoutMs?} -> ReadResourceResult
//	POST   /agents/{class}/{name}/servers/{id}/prompts/get  {name, arguments, timeoutMs?} -> GetPromptResult
//	GET    /agents/{class}/{name}/tools                     {"tools": [...]}; filter ?serverId=&serverName=&state= (repeatable)
//	GET    /agents/{class}/{name}/prompts                   {"prompts": [...]}, same filter
//	GET    /agents/{class}/{name}/resources                 {"resources": [...]}, same filter
//	GET    /agents/{class}/{name}/resource-templates        {"resourceTemplates": [...]}, same filter
//	GET    /agents/{class}/{name}/elicitations              {"elicitations": [...]}: servers' pending requests for input
//	POST   /agents/{class}/{name}/elicitations/{id}         {action, content} answers one -> 204
//	GET    /agents/{class}/{name}/stats                     {"windowSeconds": 300, "servers": {id: {calls, errors, errorRate, p50Ms, p95Ms, totalCalls, totalErrors}}}:
//	                                                        each server's tool calls over the last minutes (Stats); what the dashboard shows
//	GET/POST/DELETE /agents/{class}/{name}/mcp              the agent as an MCP server (package gateway): streamable HTTP, 2026-07-28 without
//	                                                        sessions and 2025-11-25 sessions; behind the token like the API (with Options.OAuth, or an access token of that authorization server
//	                                                        for the endpoint's URL at the public URL, or at a loopback or allowed Host and the listener's port: 403 host_not_allowed
//	                                                        for another Host); its exposure rules (below) choose what it exposes.
//	                                                        Sessions: at most gateway.DefaultMaxSessions per agent and Options.MCPSessions in all (the idle one used the longest ago
//	                                                        ends; 503 when all are busy); an idle session (its GET stream open or not) does not keep the agent awake, and
//	                                                        the agent's hibernation ends it (404); with Options.OAuth a session is bound to its token's subject (404 for another)
//	GET    /agents/{class}/{name}/exposure                  {"allow": [...], "deny": [...]}: what the agent's MCP endpoint exposes (agent.Exposure)
//	PUT    /agents/{class}/{name}/exposure                  replace them (api.Exposure) -> the rules now in force; 400 invalid_request names a bad pattern
//	GET    /agents/{class}/{name}/policy                    the agent's tool policy, {"default", "rules": [{"match", "action", "rate"?}], "pins"?} (package policy; see Policy)
//	PUT    /agents/{class}/{name}/policy                    replace it (api.Policy) -> the policy now in force; 400 invalid_request names the bad rule and field
//	GET    /agents/{class}/{name}/approvals                 {"approvals": [...]}: calls the policy asked about (api.Approval), pending first (oldest first), then the others, newest first
//	GET    /agents/{class}/{name}/approvals/{id}            {"approval": {...}}; 404 unknown_approval
//	POST   /agents/{class}/{name}/approvals/{id}            {"decision": "approve"|"deny", "remember"?, "reason"?} -> {"approval": {...}} as it is now (an approved call
//	                                                        runs in the background: GET it for its result); approving again is a no-op; 409 approval_answered
//	                                                        (approve of a denied one, deny of an approved one), 409 approval_expired
//	GET    /agents/{class}/{name}/pins                      {"pins": [...]}: the agent's pinned tool definitions (api.Pin), changed, new and rejected ones first
//	                                                        with their diffs ({field, old, new}), then removed ones, then the others (see Pins)
//	POST   /agents/{class}/{name}/pins/{server}/{tool}      {"decision": "accept"|"reject"} -> {"pin": {...}} as it is now; 404 unknown_pin
//	GET    /agents/{class}/{name}/callback                  OAuth callback (agent.Agent.HandleOAuthCallback); no token needed,
//	                                                        and it never creates an agent: unknown_agent unless the agent is awake or has stored servers; for an
//	                                                        agent not awake here the state is checked in the store first (agent.Host.CheckCallback), and one that is
//	                                                        not a pending authorisation of one of its servers gets the failure page without waking it
//	GET    /                                                the dashboard (package dashboard); /?agent=class/name picks the agent, /?token=T sets the token cookie
//	GET    /static/...                                      its assets
//	GET    /metrics                                         Options.Metrics, when set (serve: Prometheus text format); behind the token
//	GET    /.well-known/oauth-protected-resource/agents/{class}/{name}/mcp
//	                                                        with Options.OAuth: the MCP endpoint's protected resource metadata (RFC 9728); no token; 403 host_not_allowed
//	                                                        for a Host that is not the server's (see OAuthOptions.Audience)
//	GET    /healthz                                         200 while the process runs; no token
//	GET    /readyz                                          200 when the store answers (asked at most once a second) and accepts writes, and the server is neither draining,
//	                                                        closed nor (a replica) unsure of its ownership, else 503 with the reason ("database unavailable", "the store refuses
//	                                                        writes": the store's error is logged); no token
//
// # Policy
//
// Each agent has a tool policy (package policy, agent.Agent.SetPolicy):
// ordered rules, the first that matches a call deciding allow, deny or
// ask, with an optional rate ("10/m") per tool. It applies to every
// caller: the API and the CLI (caller "api"), the agent's MCP endpoint
// ("gateway", after its exposure rules, which keep applying there) and the
// agent's own model loop ("llm"). A tool the policy denies the caller is
// left out of GET .../tools and the MCP endpoint's list, and a call of it
// is 403 tool_denied (at the MCP endpoint, a result with isError that says
// why). A call over its rule's rate is 429 rate_limited, with Retry-After
// in seconds.
//
// A call the policy asks about is stored as an approval (api.Approval:
// {"id", "server", "tool", "arguments", "caller", "state", "requestedAt",
// "expiresAt", "result"?}) before anything is sent to the MCP server, and
// waits for a person's answer (POST .../approvals/{id}, agentmcp approve
// or deny) within the call's timeoutMs: approved, it runs once with its
// arguments and the request gets its result; denied, 403 approval_denied
// with the reason; still pending when the time is up, 202 {"approval":
// {...}}. The approval lives in the store: after a restart, a hibernation
// or a failover it is listed again and can be answered; approved, the call
// runs on the replica that holds the agent (its lease decides, and the
// store lets one answer win), and its result is stored with the approval.
// A call that presents the approval's id ("approval" in the request) runs
// nothing: it waits for the approval's outcome and answers it, when its
// tool and arguments are the approval's, else 409 approval_mismatch. An
// approval not answered within the agent's ApprovalLifetime (24 hours by
// default) expires (409 approval_expired to its caller and to an answer).
// A call with Accept: text/event-stream that is asked about ends with the
// error event when its time is up.
//
// # Pins
//
// The first listing of a server's tools pins each definition (package
// agent, Agent.Pins). A tool whose definition changed since is left out of
// GET .../tools and the MCP endpoint's list, and a call of it is 409
// tool_changed (at the MCP endpoint, a result with isError), until a
// person accepts it (POST .../pins/{server}/{tool}, agentmcp pins accept)
// or removes the server; the policy's "pins" field makes the reaction warn
// or accept, and holds new tools ("new": "hold"). The first call after a
// restart or a wake waits for the server's catalog, so that it is checked
// too.
//
// # Replicas
//
// With Options.Cluster, the server is one replica of several on one
// Postgres store (package cluster): each agent is awake on one replica at
// a time, and any replica answers any request above, forwarding it to the
// agent's owner over the owner's cluster listener (ClusterHandler, served
// by ClusterHTTPServer with the public listener's connection limits). Each
// forwarded request is signed with ClusterOptions.Key (cluster.SignRequest,
// header cluster.SignatureHeader: HMAC-SHA256 of its method, Host, path and
// query, body hash, time, signing replica and nonce); the owner serves it
// only within cluster.Skew of its clock and only once (a replay cache), so a
// recorded request cannot be sent again. Errors of its own: 503 owner_moved
// (the agent moved while the request was forwarded; retry), 503
// owner_unavailable (its replica does not answer and its lease has not
// lapsed yet; retry), 502 interrupted (its replica went away during a call:
// whether the call took effect is unknown, and it was not repeated). A
// request waiting for an owner that does not answer looks again when the
// owner's lease would expire (by the database's clock) or when the
// database notifies that the agent was given back; a WebSocket or SSE
// stream relayed to an owner ends when the owner's lease lapses or moves,
// so that its client reconnects to the new owner. The
// cluster listener also answers GET /cluster/stats (StatsPath), signed
// the same way: the process's goroutines, live heap after a garbage collection and
// awake agents (api.RuntimeStats), for leak checks across failovers. Drain
// (on SIGTERM in agentmcp serve) prepares an exit without failing requests.
// Keep-awake agents that no replica holds are woken by the others.
//
// # Calls
//
// A tool call, resource read or prompt get through the API is bounded by
// the request's timeoutMs (milliseconds, at most api.MaxCallTimeout, one
// hour), else by Options.CallTimeout, else by DefaultCallTimeout (2
// minutes); past it the answer is 504 timeout. When the bound passes, or
// the HTTP client goes away (the dashboard's Cancel button aborts its
// request), the call is cancelled on the MCP server: it gets
// notifications/cancelled. The Go client (package api/client) sends its
// context's deadline as timeoutMs.
//
// A tool call whose request says Accept: text/event-stream is answered,
// once its checks pass (a refused call is the JSON error it always is),
// with 200 and a stream of server-sent events, each named after its type
// with an api.CallEvent as its data (package api lists them): the call,
// its progress, its server's requests for input as they come and go, and
// the result or the error last.
//
// An elicitation event is a request of the call's server for the user's
// input, pending like any other (GET .../elicitations lists it, with the
// call's callId): answer it with POST .../elicitations/{id}. The agent
// links a request to the call it arrived within (2026-07-28), or to the
// only streamed call in flight on that server (a legacy server request
// names no call); one it cannot link is only in the list. Comments keep
// the stream alive (Options.KeepAlive). The Go client's CallToolWatched
// reads it; agentmcp call shows it in the terminal.
//
// Classes are kebab-case (ValidClass), so that an agent's default OAuth
// callback URL, /agents/{kebab(class)}/{name}/callback, routes back to it.
//
// # Many agents
//
// Agents live in the store and are awake only while used, through an
// agent.Host (Server.Host; Server.Use for a program's own handlers). A
// request to a sleeping agent wakes it: its servers come back at once,
// their saved sessions resumed without a handshake where the server
// allows, each connecting in the background, and a call waits only for its
// own server. An agent idle for Options.AgentIdleTimeout (5 minutes) is
// hibernated, its sessions kept for the next wake; past Options.MaxAwake
// awake agents (1,000) the least recently used idle one is hibernated
// instead of a request being refused. A WebSocket or SSE stream, a call in
// flight, a pending elicitation or an OAuth flow in progress keeps an
// agent awake (an MCP client's idle session does not), as does Options.KeepAwake or a server added with
// "keepAwake" (those agents are woken by Open). Open reads nothing else
// from the store: it takes the same time with 10 or 100,000 stored
// agents.
//
// # Streams
//
// The WebSocket and the SSE stream send {"type":"cf_agent_mcp_servers",
// "mcp": MCPServersState} on connect and after every change the agent
// reports (registration, connection, discovery, list_changed, OAuth,
// removal). Each stream is a watch of its agent (agent.Agent.Watch): the
// agent computes each state once and hands it to every stream's bounded
// buffer (Options.StreamBuffer); a client whose buffer is full is dropped
// (close status 1013, reason "fell behind"; SSE: "event: close"), so a
// slow client never holds up the agent or the others. A stream keeps its
// agent awake. Clients reconnect and get
// a fresh state. Options.ShouldSendProtocolMessages decides per connection
// whether frames are sent at all. The Go client's Dial follows them.
//
// A server's request for the user's input (an elicitation, form or URL
// mode) waits, up to Options.ElicitationTimeout, for an answer through
// POST .../elicitations/{id}; the streams carry the pending ones as
// {"type":"agentmcp_elicitations","elicitations":[...]} frames (on connect
// when there are some, and after every change), and the dashboard shows
// them as forms. A server has at most 4 pending and an agent 16, each of
// at most 64 KiB (mcpclient.ServerRequestLimits, through Options.Agent);
// the rest are refused with a JSON-RPC error to the server, so a flooding
// server cannot grow the list or the frames.
//
// On the SSE stream each frame is one event named after the frame's type:
// "event: cf_agent_mcp_servers" or "event: agentmcp_elicitations", with
// the frame as its data; "event: close" ends the stream.
//
// # Usage
//
//	st, _ := sqlite.Open(ctx, "agentmcp.db", nil)
//	srv, _ := server.Open(ctx, st, nil) // wakes only the keep-awake agents
//	hs := srv.HTTPServer() // the limits below; CloseStreams on Shutdown
//	hs.Addr = "127.0.0.1:8787"
//	go hs.ListenAndServe()
//	...
//	hs.Shutdown(ctx) // streams end, requests finish
//	srv.Close(ctx)   // awake agents closed, sessions kept resumable
//	st.Close()
//
// # Security
//
// Every response has a strict Content-Security-Policy (the dashboard's own
// scripts and connections only). Without Options.Token only loopback Host
// headers are served (no DNS rebinding); with it, the API and the streams
// need the token as a bearer token or as the cookie /?token= sets. Browser
// requests from other sites are refused (Fetch Metadata, and Origin for
// state-changing methods via http.CrossOriginProtection), except from
// Options.TrustedOrigins, which also get CORS.
//
// # Limits
//
// Slow and idle clients cannot hold connections, with or without the
// token. The defaults, each an Options field:
//
//	HeaderTimeout  10s   a request's headers (at most 64 KiB) must arrive within it
//	BodyTimeout    30s   its body must arrive within it, else 408 request_timeout
//	WriteTimeout   60s   a response must be written within it once it starts
//	IdleTimeout    60s   a keep-alive connection waiting for its next request is closed
//	KeepAlive      30s   WebSocket ping / SSE comment interval on the streams
//
// Bodies are read before the handler runs, only after the token check,
// and only where a route takes one: the API's POST routes and PUT .../exposure, at most 1 MiB;
// anywhere else a body is never read: the route answers as without one,
// and the connection is closed. A request refused
// before its body is read (no token, a wrong host or origin, too large,
// too slow) is answered at once and its connection closed, without
// waiting for the rest of the body. WriteTimeout counts from the first
// byte of the response, so a tool call may work longer before it answers.
// The WebSocket and SSE streams are exempt from the request limits and
// live as long as their client keeps up: a frame or ping that cannot be
// written, or a WebSocket ping not answered, within 10 seconds closes the
// stream. HeaderTimeout, IdleTimeout and the header size are connection
// settings: Server.HTTPServer returns an http.Server with them; a program
// that builds its own http.Server sets them itself (and never ReadTimeout
// or WriteTimeout, which would cut the streams).
//
// # Concurrency
//
// A Server is safe for concurrent use. A sleeping agent is woken once
// however many requests want it at the same moment. Close is idempotent and bounded
// by its ctx.
//
// # Errors
//
// Every error response is JSON, {"error": {"code": "...", "message":
// "...", "serverId": "..."}} (api.ErrorResponse), with a stable code (the
// api.Code constants) and a message safe to show: no tokens, header values
// or URL queries. Bad input is refused before anything is stored. Package
// api says what a connect_failed error adds; the Go client returns such
// errors as *api.APIError.
//
// # Packages
//
// The wire types of the API (bodies, answers, error codes, stream frames,
// call events) are in package api, and its Go client in package
// api/client, which imports nothing of the engine. The MCP endpoints'
// access tokens (Options.OAuth) are verified by package oauth/resource.
// With replicas, this package forwards requests and signs them; which
// replica wakes an agent and how long a request waits for its owner is
// package cluster's policy.
package server
