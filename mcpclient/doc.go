// Package mcpclient connects to MCP servers and keeps those connections
// alive: the Go counterpart of the seed's MCPClientManager.
//
// A Manager registers servers by id, connects them over streamable HTTP,
// the 2024-11-05 HTTP+SSE transport, stdio or in-process, negotiates the
// protocol era per server (2026-07-28 first, then the legacy handshake down
// to 2024-11-05), discovers their catalogs (tools, prompts, resources and
// resource templates, every page; the tools alone with
// ClientOptions.ToolsOnly), keeps those catalogs current when servers
// announce list_changed, reconnects in the background when a connection
// drops, and routes calls.
//
// # Usage
//
//	m := mcpclient.New(nil)
//	defer m.Close(ctx)
//	m.RegisterServer(ctx, "docs", mcpclient.ServerOptions{Name: "Docs", URL: "https://mcp.example.com/mcp"})
//	if res, _ := m.ConnectToServer(ctx, "docs"); res.State == mcpclient.StateConnected {
//		m.DiscoverIfConnected(ctx, "docs", nil)
//	}
//	for _, t := range m.ListTools(mcpclient.Filter{}) {
//		fmt.Println(t.ServerID, t.Name)
//	}
//	res, err := m.CallTool(ctx, "docs", "search", map[string]any{"q": "mcp"}, nil)
//
// Each server moves through the seed's states: connecting, authenticating
// (on any 401), connected, discovering, ready, and failed (with its error);
// a failed discovery returns to connected, never failed, so it can be
// retried. Subscribe and OnServerStateChanged report every change.
//
// # Transports
//
// TransportAuto, the default for URLs, tries streamable HTTP and falls back
// to SSE only when the endpoint refuses the handshake with a 4xx that
// carries no JSON-RPC error (404 and 405 from servers that do not implement
// streamable HTTP, 400 from go-sdk's SSE server); a 401, 403, 429 or 5xx
// never falls back, and an explicit transport type never does. When both
// transports fail, the error says how each did. The HTTP transports are
// agentmcp's own, in package [github.com/agentmcp/agentmcp/mcpclient/transport]
// (go-sdk's session and protocol layers run on top of them, and a plain
// go-sdk client can use them alone): their failures are typed
// ([*HTTPError]), custom headers go on every request including the SSE GET,
// messages and events are size-capped, and the Manager sends every request
// through a netguard SSRF guard. They also do less work per message than
// go-sdk's (one validating pass over each message, pooled buffers, and the
// text of tool results decoded once rather than four times;
// docs/PERFORMANCE.md has the measurements). TransportOptions.Implementation
// selects go-sdk's own streamable HTTP transport instead, at the costs its
// documentation lists.
//
// A stdio server runs over the transport of package
// [github.com/agentmcp/agentmcp/mcpclient/stdio] (a plain go-sdk client can
// use it alone too): its stderr is logged line by line; lines it writes to
// stdout that are not JSON-RPC messages (banners, log lines) are skipped,
// as the TypeScript SDK does, rather than failing the connection: the
// first 10 of a session are logged, sanitised, the rest counted, and an
// error from a server that fails to start quotes the last one and the last
// lines of its stderr. A line over Options.MaxMessageSize fails the
// connection, quoting its start. Closing a stdio session closes the
// server's stdin, then sends SIGTERM and SIGKILL 2 seconds apart if it
// does not exit, to its process group. On Linux the server runs under a
// supervisor, the program itself (see stdio.SupervisorEnv), that kills
// every process the server started when the server ends and when the
// program dies, even by SIGKILL. A server that exits soon after each start
// is started again after a doubling delay. One that spoke a legacy version
// is started in that era (kept across restarts by ServerInfo.Resume).
//
// # Staying connected
//
// A legacy session that the server forgets is re-initialised once,
// transparently, and the request is repeated when that is safe: lists,
// resource reads, prompts, and tools annotated readOnlyHint or
// idempotentHint. Any other tool call caught by the loss returns an
// [*InterruptedCallError]: it may or may not have run. A server forgets a
// session when it answers 404 to it, 400 or 410 with a message naming the
// session (the TypeScript SDK's "No valid session ID provided"), or any
// 4xx but 401, 429 and a 403 with a Bearer error (which asks for
// authorisation) to the first request of a resumed one.
//
// A dropped connection reconnects in the background following the
// server's RetryOptions (3 attempts, 500 ms base, 5 s cap, full jitter by
// default), and WaitForConnections waits for that work to settle. When the
// attempts are spent the server is failed, with the error, and the Manager
// never gives up for good: it keeps retrying in the background, one attempt
// at a time, the backoff doubling up to RetryOptions.BackgroundMaxDelay (3
// minutes by default, with jitter; DisableBackground turns it off). This
// retry is not counted by WaitForConnections. While a failed server waits
// for its next attempt, ServerInfo.NextRetryAt says when it is due (each
// wait is announced by an EventRetryScheduled). A call, a resource read, a
// prompt or a discovery on a failed server makes one attempt at once
// first, bounded by the connect and discovery timeouts, and
// [Manager.Reconnect] makes one whatever the state. Nothing of this drops
// a server's OAuth tokens or registration.
//
// A session resumed from ServerOptions.Resume costs no handshake, and its
// first exchange decides what it is worth: the first list of its discovery
// (or a ping, for a server that advertises none) goes alone. A server that
// answers keeps the session; one that cannot be reached (refused, reset,
// timed out, a name that does not resolve) fails the attempt, and the
// retry policy goes on as for any failed connect; one that rejects the
// session gets exactly one fresh handshake (the session it gave up is
// ended with a DELETE, unless the server answered 404: it may live on). A
// resumed session's requests are numbered from a random offset above
// 2^32, never again from 1: the process that opened it may have left a
// request running on the server, which would refuse its id as a
// duplicate. A discovery that fails for a
// protocol reason on a live connection still leaves the server connected.
// So after a restore, WaitForConnections returns once each server is
// confirmed or failed.
//
// CloseConnection, CloseAllConnections and RemoveServer cancel the
// connection work in flight at once (a handshake, a retry waiting for its
// backoff, the background retry, a discovery); what was cancelled never
// brings the server back. A legacy handshake cancelled after the server
// may have made its session is not cut short on the wire: its answer is
// awaited in the background (at most two seconds more) and the session it
// names ended; those calls and Close do not wait for it, so a server that
// holds its answer to a handshake cannot hold up a close (or an agent's
// hibernation).
//
// # Elicitation, sampling and roots
//
// Servers may ask the user for input in the middle of a call: a form, or a
// URL to open (elicitation). ConfigureElicitationHandlers routes those
// requests to the application, in both eras (2026-07-28 input requests,
// retried with the answers until the result is complete; legacy
// elicitation/create requests, and -32042 URL elicitation required errors,
// which are retried once after the user is done). ConfigureSampling and
// ConfigureRoots do the same for sampling/createMessage and roots/list.
// The handler types, the request a handler gets and the errors are in
// package [github.com/agentmcp/agentmcp/mcpclient/input].
// Handlers apply to live sessions at once; a session advertises exactly
// what was configured when it started, and ServerInfo.Elicitation is what
// to store so that a restored server advertises the same modes before the
// application configures its handlers again.
//
// What a server can make the Manager hold by asking is bounded
// (Options.ServerRequests, [ServerRequestLimits]): by default a server has
// at most 4 requests for input (elicitation, sampling) waiting for their
// answer and 4 JSON-RPC requests of any kind being answered, the Manager
// at most 16 requests for input across its servers, an elicitation
// (message, form schema, URL) at most 64 KiB and a sampling request at
// most 1 MiB, all far below the 16 MiB message cap. A request past a limit
// is refused at once with a JSON-RPC error (a call whose input request is
// refused fails with [ErrServerRequestRefused]); nothing queues. How long a
// request for input may wait is up to its handler (agentmcp serve cancels
// it after 10 minutes by default). A 2026-07-28 server sends no JSON-RPC
// requests, so any it sends is dropped unread; a legacy server may send
// none but ping during the handshake, and may ask for roots only when
// roots are offered. Legacy requests may arrive with no call in flight
// (on the standalone stream, as 2025-11-25 allows), under the same limits.
//
// # Tasks
//
// A tool call may run as a task: the server answers at once with a task,
// and the client polls it until it ends, rather than holding the request
// open. Both eras are spoken: 2025-11-25 tasks (the server's
// capabilities.tasks, a tool's execution.taskSupport, params.task,
// tasks/get, tasks/result, tasks/cancel, notifications/tasks/status) and
// the 2026-07-28 extension io.modelcontextprotocol/tasks (declared in the
// client capabilities of the calls that may become tasks, resultType
// "task", tasks/get, tasks/update, tasks/cancel).
//
// A plain CallTool on a tool that must run as a task (taskSupport
// "required") just works: it creates the task, polls it at the interval
// the server suggests (within Options.Tasks' bounds, 250 ms to 30 s by
// default; a legacy status notification polls at once), answers its
// requests for input with the elicitation and sampling handlers (legacy:
// the server asks while tasks/result waits; 2026-07-28: the input requests
// of tasks/get, answered with tasks/update), and returns the result as if
// the call had been held; the status messages come to CallOptions.Progress
// and CallOptions.TaskStatus. A tool whose taskSupport is "optional" runs
// as a task when CallOptions.Task or Options.Tasks.Prefer asks; against a
// 2026-07-28 server that offers the extension every tools/call declares
// it, and the server decides. Cancelling the call's ctx sends tasks/cancel.
// A task that is cancelled, fails with an error, or is forgotten by the
// server (its TTL over) returns a [*TaskError] matching
// [ErrTaskCancelled], [ErrTaskFailed] or [ErrTaskExpired].
//
// StartTask creates a task and returns its [TaskHandle] (server, tool,
// task id, protocol, arguments hash, TTL and poll interval) without
// waiting; CallOptions.TaskStarted hands a call's handle over before its
// first poll. WaitTask resumes the wait from a handle, in this process or
// another after a restart, for as long as the server keeps the task;
// GetTask polls once and CancelTask cancels.
//
// The client also runs tasks for legacy servers: it declares
// capabilities.tasks for the elicitation and sampling it handles, answers
// a task-augmented elicitation/create or sampling/createMessage with a
// task at once, runs the handler in the background, and answers the
// server's tasks/get, tasks/result, tasks/list and tasks/cancel (at most
// 32 tasks per session, kept for their TTL, at most an hour). Those form
// answers are not checked against the schema as go-sdk checks those of
// plain elicitations.
//
// Tasks need a connection the Manager wraps: every transport but
// go-sdk's own streamable HTTP (ImplementationGoSDK), on which task tools
// fail with [ErrTasksUnsupported]. While it waits for a 2026-07-28 task,
// the client also listens for its status (subscriptions/listen with the
// task's id in notifications.taskIds): each notifications/tasks the server
// pushes is polled at once; a server that refuses or ends the listen
// leaves the task polled at its interval. The listen ends with the wait.
//
// # MCP Apps
//
// A tool may name a view (the MCP Apps extension, io.modelcontextprotocol/ui):
// a ui:// resource of its server holding an HTML document of type
// text/html;profile=mcp-app, which a host renders in a sandboxed frame
// with the tool's input and result. [ViewURI] tells whether a tool has
// one; [Manager.ToolView] reads it (URI, HTML and the content's _meta,
// with the Content-Security-Policy it asks for, [View.CSP]) and keeps it
// until the server's lists are listed again. A host that renders views
// sets [Options.Apps], and every server's client then advertises the
// extension ({"mimeTypes": ["text/html;profile=mcp-app"]} under
// extensions) in either era; without it nothing is advertised, and a
// server may leave its views out. A view is the server's code: render
// it only in a frame with no access to the host (package server's
// dashboard shows how).
//
// # Telemetry
//
// The Manager emits OpenTelemetry traces and metrics following the
// semantic conventions for MCP: a CLIENT span per request and notification
// sent, named "{mcp.method.name} {target}" (tools/call search), with
// mcp.method.name, mcp.session.id, mcp.protocol.version, gen_ai.tool.name,
// jsonrpc.request.id, network.transport and, on failure, error.type; the
// caller's trace context in every request's params._meta; a SERVER span per
// request a server sends, under the trace context in its _meta; spans for
// connections, discoveries, session renewals and elicitation waits; and
// mcp.client.operation.duration, mcp.client.session.duration and
// agentmcp's own instruments. Options.TracerProvider and
// Options.MeterProvider default to the global providers. Header values,
// tokens, URL userinfo and queries, and tool arguments and results are
// never recorded unless Options.RecordContent opts in to content.
// docs/OBSERVABILITY.md lists every name.
//
// ServerStats returns one registered server's tool calls over the last
// StatsWindow (calls, errors, p50 and p95 latency), recorded with
// mcp.client.operation.duration but kept per server, not per server id:
// what a dashboard of one agent's servers shows.
//
// # Concurrency
//
// A Manager is safe for concurrent use. Background work (reconnection,
// catalog refreshes, event delivery) runs on goroutines the Manager owns;
// Close stops and waits for them. Events are delivered in order on one
// goroutine, so a listener should return quickly. Calls honour their
// context: cancelling it cancels the request on the server.
//
// # Errors
//
// Errors wrap the sentinels in errors.go and are matched with errors.Is and
// errors.As: [ErrNotRegistered], [ErrNotConnected], [ErrSessionExpired],
// [ErrCallInterrupted], [ErrProtocol], [ErrUnauthorized] and
// [ErrTransportNotImplemented] (also through [IsUnauthorized] and
// [IsTransportNotImplemented], which never match on message text), and
// netguard.ErrBlockedURL for refused addresses; tasks add
// [ErrTasksUnsupported], [ErrTaskCancelled], [ErrTaskExpired] and
// [ErrTaskFailed] ([*TaskError]). A tool that fails returns a
// result with IsError set, for the model to read, not a Go error. A
// result whose structuredContent is missing or breaks the tool's
// outputSchema is a server's broken contract, not a tool failure: CallTool
// (a task's result too, and WaitTask's and StartTask's) returns an
// [*OutputSchemaError] ([ErrInvalidResult]) carrying the result, or only logs it with Options.OutputValidation set to
// OutputValidationWarn. Errors never contain header values, and URLs in
// them carry no query.
package mcpclient
