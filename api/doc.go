// Package api is agentmcp serve's HTTP API: its routes, the JSON bodies
// of its requests and answers, its error codes, the frames of the agents'
// WebSocket and SSE streams and the events of a streamed tool call.
// Package server answers with these types; package api/client sends them.
// This documentation is the API's reference: a route added to the server
// is listed here, in the same change.
//
// The types here import nothing of the engine (agent, mcpclient) nor
// go-sdk: where an answer carries an MCP definition or result as the MCP
// server sent it (a tool's schemas, a CallToolResult), the type keeps
// that JSON as a json.RawMessage, for the caller to decode into MCP types
// of its choice. The JSON of every type is the server's: a field added
// here is added there.
//
// # Routes
//
// Each agent lives at /agents/{class}/{name}; classes are kebab-case, so
// that an agent's default OAuth callback URL,
// /agents/{kebab(class)}/{name}/callback, routes back to it. An agent
// exists when it has servers in the store, while it is awake (created by
// adding a server to it, or by PUT /agents/{class}/{name}; one without
// servers is not stored and is gone once hibernated), and for the default
// agents (agentmcp/default, and the server's own default), which always
// exist. Every other route of an agent that does not exist answers 404
// unknown_agent, with the agents that exist in the error's "agents": a
// mistyped name never creates an empty agent, nor wakes anything. The
// routes:
//
//	GET    /agents                                          the agents that exist: {"agents": [{class, name}], "more": true?}, default agents first, then
//	                                                        those with stored servers, then the other awake ones; at most 1000, "more" set when some were left out
//	PUT    /agents/{class}/{name}                           create the agent -> 201, or 200 when it exists
//	POST   /agents/{class}/{name}/hibernate                 hibernate it now, as its idle timeout would -> 204 (also when asleep already);
//	                                                        409 agent_busy while something keeps it awake, its message naming what (agent.Busyness: requests and calls in flight,
//	                                                        streams, pending elicitations, an OAuth sign-in, MCP clients' unanswered questions); never wakes an agent
//	GET    /agents/{class}/{name}/busy                      what keeps it awake now, without waking it nor counting as a request to it (BusyState): {awake, inUse?, work?,
//	                                                        watchers?, elicitations?, authorizing?, inputs?, keepAwake?, reason}, reason being "asleep", "idle" or
//	                                                        what hibernate's 409 names; the dashboard shows it on a line under its header
//	POST   /agents/{class}/{name}/reload                    take in what another process changed in the agent's stored servers (agentmcp add --db
//	                                                        on serve's database): new ones connect, deleted ones close -> {"added": [id], "removed": [id]}
//	GET    /agents/{class}/{name}                           WebSocket (Upgrade), else MCPServersState as JSON
//	GET    /agents/{class}/{name}/events                    the state as server-sent events
//	GET    /agents/{class}/{name}/servers                   {"servers": {id: MCPServer}, "order": [id, ...]} (agent.ServerOrder)
//	POST   /agents/{class}/{name}/servers                   add (AddRequest; "keepAwake": true marks the server keep-awake) -> {id, state, authUrl?};
//	                                                        201 new, 200 existing; creates the agent. The id defaults to the name, normalised
//	                                                        (-2, -3 on a collision). A failed first connection stores nothing (502 connect_failed)
//	                                                        unless "keepIfUnreachable": true (502 connect_failed with the serverId kept);
//	                                                        a URL answering 404/405/501 to both transports is 400 not_mcp_endpoint either way;
//	                                                        a name another server has is 409 name_in_use (its serverId), unless "replace": true
//	GET    /agents/{class}/{name}/servers/{id}              one server (ServerState): its id, its MCPServer fields, "serverInfo" (its handshake's name and
//	                                                        version), "session" (live, resumable or none), "toolCount", "toolBytes" and "toolTokens" (what
//	                                                        its tool definitions cost a model's context) and "catalogStale": what agentmcp get shows
//	DELETE /agents/{class}/{name}/servers/{id}              remove -> 204
//	POST   /agents/{class}/{name}/servers/{id}/reconnect    connect again now, keeping the OAuth grant -> {id, state, authUrl?}; 502 connect_failed when still unreachable
//	GET    /agents/{class}/{name}/servers/{id}/logs         the server's last 50 log messages (notifications/message) since the agent woke, oldest first -> {serverId, logs: [{time, level, logger?, data}]}
//	GET    /agents/{class}/{name}/logs                      every server's last log messages, by server id -> {servers: [{serverId, logs}]}
//	POST   /agents/{class}/{name}/servers/{id}/tools/call   {name, arguments, timeoutMs?, approval?} -> CallToolResult; with Accept: text/event-stream,
//	                                                        the call's events as server-sent events (see Calls); the agent's policy decides first (see Policy):
//	                                                        403 tool_denied, 429 rate_limited with Retry-After, 202 {"approval": {...}} for a call still waiting for approval. A call the MCP server runs as a task
//	                                                        answers with the result when the task ends within the call's time, else 202 with the task
//	                                                        (Task) and Location: .../tasks/{id}; the task runs on, the agent's (see Tasks)
//	POST   /agents/{class}/{name}/servers/{id}/resources/read  {uri, timeoutMs?} -> ReadResourceResult
//	GET    /agents/{class}/{name}/servers/{id}/view?tool=NAME  the tool's MCP Apps view (its ui:// resource's text/html;profile=mcp-app document) as an HTML page, for
//	                                                        the dashboard to frame: Content-Security-Policy "sandbox allow-scripts" (an opaque origin), frame-ancestors 'self',
//	                                                        inline scripts and styles, and only the https (loopback http) origins its _meta.ui.csp lists, never this server's host;
//	                                                        404 no_view for a tool without one, unknown_tool, unknown_server; read once per list version of the server
//	POST   /agents/{class}/{name}/servers/{id}/prompts/get  {name, arguments, timeoutMs?} -> GetPromptResult
//	GET    /agents/{class}/{name}/tools                     {"tools": [...]}; filter ?serverId=&serverName=&state= (repeatable)
//	GET    /agents/{class}/{name}/tools?q=QUERY&limit=N     {"tools": [api.ToolMatch...]}: the tools that match QUERY, best first, each with its key and score (limit 1-100, default 10); same filters
//	GET    /agents/{class}/{name}/prompts                   {"prompts": [...]}, same filter
//	GET    /agents/{class}/{name}/resources                 {"resources": [...]}, same filter
//	GET    /agents/{class}/{name}/resource-templates        {"resourceTemplates": [...]}, same filter
//	                                                        (these four lists, right after a wake: a server's stored catalog at once, its items "stale": true
//	                                                        until it lists them again; a server without one is waited for, up to 10 s)
//	GET    /agents/{class}/{name}/elicitations              {"elicitations": [...]}: servers' pending requests for input
//	POST   /agents/{class}/{name}/elicitations/{id}         {action, content} answers one -> 204
//	GET    /agents/{class}/{name}/tasks                     {"tasks": [Task], "more": true?}: the running tasks and the most recent ended ones (at most 100 in all),
//	                                                        running first, then most recent first: {id, serverId, taskId, tool, status, statusMessage?, done, error?,
//	                                                        createdAt, updatedAt, serverCreatedAt?}
//	GET    /agents/{class}/{name}/tasks/{id}                one task, with "result" (its CallToolResult) once completed; 404 unknown_task. {id} is "{serverId}:{taskId}"
//	POST   /agents/{class}/{name}/tasks/{id}/cancel         cancel it on its MCP server (tasks/cancel) -> the task as stored; it is stored cancelled once the
//	                                                        agent's next poll hears so. An ended task is left as it is
//	GET    /agents/{class}/{name}/stats                     {"windowSeconds": 300, "servers": {id: {calls, errors, errorRate, p50Ms, p95Ms, totalCalls, totalErrors}}}:
//	                                                        each server's tool calls over the last minutes (Stats); what the dashboard shows
//	GET/POST/DELETE /agents/{class}/{name}/mcp              the agent as an MCP server (package gateway): streamable HTTP, 2026-07-28 without
//	                                                        sessions and 2025-11-25 sessions (a 2026-07-28 client declaring the tasks extension gets tasks,
//	                                                        the others a call held to the task's result: package gateway, "Tasks"); behind the token like the API (with server.Options.OAuth, or an access token of that authorization server
//	                                                        for the endpoint's URL at the public URL, or at a loopback or allowed Host and the listener's port: 403 host_not_allowed
//	                                                        for another Host); its exposure rules (below) choose what it exposes.
//	                                                        Sessions: at most gateway.DefaultMaxSessions per agent and server.Options.MCPSessions in all (the idle one used the longest ago
//	                                                        ends; 503 when all are busy); an idle session (its GET stream open or not) does not keep the agent awake, and
//	                                                        the agent's hibernation ends it (404); with server.Options.OAuth a session is bound to its token's subject (404 for another)
//	GET    /agents/{class}/{name}/exposure                  {"allow": [...], "deny": [...]}: what the agent's MCP endpoint exposes (agent.Exposure)
//	PUT    /agents/{class}/{name}/exposure                  replace them (Exposure) -> the rules now in force; 400 invalid_request names a bad pattern
//	GET    /agents/{class}/{name}/policy                    the agent's tool policy, {"default", "rules": [{"match", "action", "rate"?}], "pins"?, "audit"?} (package policy; see Policy)
//	PUT    /agents/{class}/{name}/policy                    replace it (Policy) -> the policy now in force; 400 invalid_request names the bad rule and field
//	GET    /agents/{class}/{name}/approvals                 {"approvals": [...]}: calls the policy asked about (Approval), pending first (oldest first), then the others, newest first
//	GET    /agents/{class}/{name}/approvals/{id}            {"approval": {...}}; 404 unknown_approval
//	POST   /agents/{class}/{name}/approvals/{id}            {"decision": "approve"|"deny", "remember"?, "reason"?, "by"?} -> {"approval": {...}} as it is now (an approved
//	                                                        call runs in the background: GET it for its result); approving again is a no-op; 409 approval_answered
//	                                                        (approve of a denied one, deny of an approved one), 409 approval_expired; "by" names who answers (a label,
//	                                                        see Approvals), 400 invalid_request when it is not a valid one
//	GET    /agents/{class}/{name}/pins                      {"pins": [...]}: the agent's pinned tool definitions (Pin), changed, new and rejected ones first
//	                                                        with their diffs ({field, old, new}), then removed ones, then the others (see Pins)
//	POST   /agents/{class}/{name}/pins/{server}/{tool}      {"decision": "accept"|"reject", "by"?} -> {"pin": {...}} as it is now; 404 unknown_pin; "by" as an approval's
//	GET    /agents/{class}/{name}/policy/tools              {"tools": [{serverId, name, "decisions": {"llm"|"api"|"gateway": {action, rule, rate?, reason?}}}]}: each tool of the
//	                                                        connected servers (denied ones too) with its effective action per caller and the rule that decided (-1: the default)
//	GET    /agents/{class}/{name}/policy/presets/{preset}   the preset "open" or "cautious" as a policy to PUT (policy.Preset); 404 not_found for another name
//	GET    /agents/{class}/{name}/audit                     {"records": [AuditRecord], "cursor", "more"}: the agent's audit log, oldest first (?order=newest for newest first);
//	                                                        ?since=&until= (RFC 3339), ?server=&tool=&decision=, ?limit= (1-1000, default 100), ?cursor= (the answer's, to go on
//	                                                        in the same order); with ?format=jsonl or Accept: application/x-ndjson, every record selected as JSON lines
//	                                                        (at most ?limit= when given); 501 when the store keeps no log (see Audit)
//	GET    /agents/{class}/{name}/callback                  OAuth callback (agent.Agent.HandleOAuthCallback); no token needed,
//	                                                        and it never creates an agent: unknown_agent unless the agent is awake or has stored servers; for an
//	                                                        agent not awake here the state is checked in the store first (agent.Host.CheckCallback), and one that is
//	                                                        not a pending authorisation of one of its servers gets the failure page without waking it
//	GET    /                                                the dashboard (package dashboard); /?agent=class/name picks the agent, /?token=T sets the token cookie
//	GET    /static/...                                      its assets
//	GET    /metrics                                         server.Options.Metrics, when set (serve: Prometheus text format); behind the token
//	GET    /.well-known/oauth-protected-resource/agents/{class}/{name}/mcp
//	                                                        with server.Options.OAuth: the MCP endpoint's protected resource metadata (RFC 9728); no token; 403 host_not_allowed
//	                                                        for a Host that is not the server's (see server.OAuthOptions.Audience)
//	GET    /healthz                                         200 while the process runs; no token
//	GET    /readyz                                          200 when the store answers (asked at most once a second) and accepts writes, and the server is neither draining,
//	                                                        closed nor (a replica) unsure of its ownership, else 503 with the reason ("database unavailable", "the store refuses
//	                                                        writes": the store's error is logged); no token
//
// # Errors
//
// Every error response is JSON, {"error": {"code": "...", "message":
// "...", "serverId": "..."}} (ErrorResponse), with a stable code (the
// Code constants) and a message safe to show: no tokens, header values or
// URL queries. Bad input is refused before anything is stored. A
// connect_failed error (an add or reconnect whose server could not be
// reached) names the server by its name and also has "serverName",
// "summary" (what failed in a few words, as the server's state's
// error_summary says it) and "detail" (the whole error), for a client to
// say the next step its own way; the server's state then has
// "nextRetryAt", when it is next tried. A request refused because the
// store cannot serve it now is 503 unavailable with Retry-After: nothing
// was changed. The client returns errors as *APIError.
//
// With replicas (package cluster), any replica answers any route above,
// forwarding the request to the agent's owner, and three errors are their
// own: 503 owner_moved (the agent moved while the request was forwarded;
// retry), 503 owner_unavailable (its replica does not answer and its
// lease has not lapsed yet; retry), 502 interrupted (its replica went away
// during a call: whether the call took effect is unknown, and it was not
// repeated). A WebSocket or SSE stream relayed to an owner ends when the
// owner's lease lapses or moves, so that its client reconnects to the new
// owner.
//
// # Calls
//
// A tool call, resource read or prompt get is bounded by the request's
// timeoutMs (milliseconds, at most MaxCallTimeout, one hour), else by the
// server's own bound (server.Options.CallTimeout, 2 minutes by default);
// past it the answer is 504 timeout. When the bound passes, or the HTTP
// client goes away (the dashboard's Cancel button aborts its request),
// the call is cancelled on the MCP server: it gets
// notifications/cancelled; a call the server made a task is not (see
// Tasks). The Go client sends its context's deadline as timeoutMs.
//
// A tool call whose request says Accept: text/event-stream is answered,
// once its checks pass (a refused call is the JSON error it always is),
// with 200 and a stream of server-sent events, each named after its type
// with a CallEvent as its data:
//
//	event: call                {"type":"call","callId":"...","serverId":"...","tool":"..."}
//	event: progress            {"type":"progress","progress":2,"total":5,"message":"..."}   (each progress notification)
//	event: elicitation         {"type":"elicitation","elicitation":{id, serverId, mode, message, requestedSchema|url, callId}}
//	event: elicitation_ended   {"type":"elicitation_ended","id":"..."}   (answered, here or elsewhere, or given up)
//	event: task                {"type":"task","task":Task}   (the server runs the call as a task; its status messages come as progress)
//	event: result              {"type":"result","result":CallToolResult}   (last)
//	event: task_running        {"type":"task_running","status":202,"task":Task}   (last, instead of result: the call's time ran out, the task runs on)
//	event: error               {"type":"error","status":504,"error":{code, message, serverId}}   (last, instead of result)
//
// An elicitation event is a request of the call's server for the user's
// input, pending like any other (GET .../elicitations lists it, with the
// call's callId): answer it with POST .../elicitations/{id}. The agent
// links a request to the call it arrived within (2026-07-28), or to the
// only streamed call in flight on that server (a legacy server request
// names no call); one it cannot link is only in the list. Comments keep
// the stream alive. The Go client's CallToolWatched reads it; agentmcp
// call shows it in the terminal.
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
// A call the policy asks about is stored as an approval (Approval:
// {"id", "server", "tool", "arguments", "caller", "state", "requestedAt",
// "expiresAt", "decidedAt"?, "decidedBy"?, "result"?, "error"?, "code"?,
// "startedAt"?}) before
// anything is sent to the MCP server, and
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
// A call with Accept: text/event-stream that is asked about ends, when its
// time is up, with an error event approval_pending (status 202) whose
// message names the approval. An approved call is stored as started
// ("startedAt") before it is sent, and checks the tool's pin first: one
// whose tool changed since the ask is not run (done, "code":
// "tool_changed"; its caller gets 409 tool_changed). An approval a stopped
// process left is settled when the agent opens again: approved and never
// started, it runs then, once; started, it may have run, and is done with
// "code": "interrupted" and the reason in "error", never run again.
// An answer may name who gives it: "by" in POST .../approvals/{id} (at
// most 128 printable characters, no control characters, no spaces at
// either end), which agentmcp approve and deny send (--by, by default the
// OS user name) and the dashboard too (its "Answer as" field, kept in the
// browser). It is stored as the approval's "decidedBy" and in its audit
// record. It is a label the caller states, not an identity: whoever holds
// the server's token may write any name, so with a token shared by
// several people it tells them apart only as far as they say who they
// are. The exception is an answer from a gateway client in OAuth mode
// (see Signing in), through elicitation or by cancelling the approval's
// task: its decidedBy is the subject of the client's verified access
// token ("sub:..." its sub claim, else "client:..." its client, else
// "token:..." a hash; one too long for a label, "subject-sha256:..."
// its hash), and its record's caller is "gateway", which a
// "by" sent to the API (caller "api") never is.
// Approvals that ended (denied, expired, done) are deleted after the
// agent's ApprovalRetention (30 days by default) and past its MaxApprovals
// most recent (1,000).
//
// # Pins
//
// The first listing of a server's tools pins each definition (package
// agent, Agent.Pins). A tool whose definition changed since is left out of
// GET .../tools and the MCP endpoint's list, and a call of it is 409
// tool_changed (at the MCP endpoint, a result with isError), until a
// person accepts it (POST .../pins/{server}/{tool}, agentmcp pins accept;
// an optional "by" names who decided in the decision's audit record, a
// label as an approval's answer's "by" is) or removes the server; the policy's "pins" field makes the reaction warn
// or accept, and holds new tools ("new": "hold"). The first call after a
// restart or a wake waits for the server's catalog, so that it is checked
// too.
//
// # Audit
//
// Each agent keeps an audit log (package agent, Agent.Audit): every tool
// call through it, whoever the caller (the API, the CLI, the gateway, a
// model through AITools), every decision on a call (allowed, denied,
// rate_limited, tool_changed, asked; approved or rejected by a person,
// expired), every pin decision and every server added or removed is one
// AuditRecord, with its time, server, tool, caller (and, for an answer to
// an approval, "decidedBy": who answered, as the answer named them; see
// Approvals), decision, a call's
// outcome (ok, is_error, error with its class) and duration, and the
// SHA-256 of its arguments (canonical JSON); the arguments themselves
// only when the policy says "audit": {"arguments": "full"}, sealed by the
// store's key (a store without a key keeps the hash only). Records are
// written in batches off the calls' path: a record appears in GET
// .../audit once its batch is written (within the agent's AuditWindow,
// 100ms by default; at once for the process that serves the request). The
// log keeps 100,000 records and 30 days per agent by default. A follower
// (agentmcp audit --follow) polls with the cursor of its last answer.
// Across replicas sharing a Postgres store, each writes its own records
// and every one reads them all; no record ever appears behind a cursor
// already given (the appends of one agent's log commit in the order of
// their seq), so a follower misses none, whichever replica wrote it.
//
// # Tasks
//
// A tool call that its MCP server runs as a task (MCP tasks: 2025-11-25's,
// or the 2026-07-28 extension; see package mcpclient) is the request's only
// until the server creates the task. From then on it is the agent's: the
// agent stores it and polls it until it ends, whether the request waits or
// not. A request whose time runs out, or whose client goes away, leaves
// the task running: the JSON answer is then 202 with the task, and a
// streamed call ends with a task_running event. Streamed calls say when
// they become a task (a task event) and show its status messages as
// progress. GET .../tasks lists the tasks, GET .../tasks/{id} fetches one
// with its result, POST .../tasks/{id}/cancel cancels it on its server. A
// task's id in the API is "{serverId}:{taskId}" (TaskID): a server's task
// ids are its own, and a server id holds no ":". Tasks are stored in the
// agent's store and survive a restart of serve: polling resumes once the
// agent opens again (a hibernated agent is woken to poll). So a task that
// runs on past its request does not keep the agent busy: hibernate and
// serve's drain do not wait for it.
//
// # Streams
//
// The WebSocket and the SSE stream of an agent send Frame
// ({"type":"cf_agent_mcp_servers","mcp":MCPServersState}) on connect and
// after every change the agent reports (registration, connection,
// discovery, list_changed, OAuth, removal), and ElicitationsFrame
// ({"type":"agentmcp_elicitations","elicitations":[...]}) on connect when
// some are pending and after every change. On the SSE stream each frame is
// one event named after the frame's type; "event: close" ends the stream.
// A client that falls behind is dropped (WebSocket close status 1013,
// reason "fell behind"; SSE: "event: close"); clients reconnect and get a
// fresh state. A stream keeps its agent awake. The Go client's Dial
// follows them.
package api
