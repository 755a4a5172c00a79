// Package agent is the Agent: one named agent instance and the MCP servers
// it uses, kept in a store so that it comes back after a restart or a
// hibernation. It is the Go counterpart of the seed's Agent (addMcpServer,
// removeMcpServer, getMcpServers, onMcpUpdate), built on an
// mcpclient.Manager, and the front door of an API: the calls, catalogs,
// pending elicitations and state changes a program needs are methods of
// the Agent. Host keeps any number of agents on one store, each awake only
// while it is used.
//
// # Usage
//
//	st, _ := sqlite.Open(ctx, "agents.db", nil)
//	a, _ := agent.Open(ctx, st, "assistant", "alice", &agent.Options{
//		CallbackHost: "https://agents.example.com", // for servers behind OAuth
//	})
//	defer a.Close(ctx)
//	res, _ := a.AddMCPServer(ctx, "Docs", "https://mcp.example.com/mcp", &agent.AddOptions{ID: "docs"})
//	if res.State == mcpclient.StateAuthenticating {
//		// send the user to res.AuthURL; the callback finishes the flow
//	}
//	for _, t := range a.ListTools(mcpclient.Filter{}) {
//		fmt.Println(t.ServerID, t.Name)
//	}
//	out, err := a.CallTool(ctx, "docs", "search", map[string]any{"q": "mcp"}, nil)
//
// An agent is named by a class and an instance name ("assistant",
// "alice"); "class/name" is its namespace in the store, and agents never
// see each other's servers. AddMCPServer connects a server, discovers its
// catalog and stores it; it is idempotent (the same name and URL, compared
// as SameServerURL does, is the same server, and concurrent adds share one
// connection attempt), and a stable id (AddOptions.ID, NormalizeServerID)
// makes a server's id predictable; adding again a server that has no
// connection (failed, closed, dormant) connects it, as Reconnect does,
// and adding again one whose retry is connecting or discovering answers
// with that attempt's outcome.
// RemoveMCPServer forgets a server with its OAuth data and ends its session
// on the server, a stored one the agent holds no connection for included (a
// DELETE with its session id, no handshake); Reconnect connects one again
// at once. CheckAdd makes
// AddMCPServer's checks without storing anything, for an API that refuses
// bad input first.
//
// # Stdio servers
//
// AddOptions.Command makes a server a local program spoken to over stdio
// (the URL given to AddMCPServer is then ""):
//
//	a.AddMCPServer(ctx, "GitHub", "", &agent.AddOptions{ID: "github", Command: &agent.Command{
//		Path: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
//		Env:  map[string]string{"GITHUB_TOKEN": token},
//	}})
//
// The same name, Path, Args and Dir is the same server. Env values are
// stored with the header values (encrypted with the store's key) and never
// shown: MCPServer carries the command line and the env names only. The
// process is started on connect and on every restore (a stdio server has
// no session to resume: each wake is a process start and a handshake; the
// legacy era a server spoke is stored, so that its handshake skips the
// 2026-07-28 probe, which some legacy servers exit on),
// stopped with its process group on RemoveMCPServer and Close (so on
// hibernation), killed with the program on Linux (with all it started:
// see SupervisorEnv in package mcpclient/stdio), and started again with
// backoff when it exits; see Command. Whoever may call AddMCPServer may run
// commands: a program that takes servers from the network must gate
// Command (server does, with Options.AllowStdioServers).
//
// # Storage
//
// Open reads the agent's servers from a store.Store (store/sqlite,
// store/postgres) and restores their connections in the background;
// WaitForConnections waits for them. What is stored per server: its name,
// URL (or stdio command), callback URL and options (headers, transport,
// retry, protocol pin), the session to resume, the pending authorization URL of a server
// waiting for sign-in, its keep-awake mark, and its OAuth registration and
// tokens. Header values, URL credentials and queries, sessions and tokens
// are encrypted when the store has a key (store.CipherFromEnv). The writes
// a connection causes (a new session, a pending authorization) are queued
// off the event path and made by a goroutine that ends when they are done;
// WaitForConnections and Close flush them.
//
// A restored server resumes its saved session without a handshake where
// the server allows it (a legacy session id, or the stored server/discover
// result of a 2026-07-28 server); the first request confirms it, and a
// server that forgot the session gets exactly one fresh handshake. A
// server that was waiting for sign-in stays authenticating, without
// network I/O. Close closes the connections and keeps the sessions alive
// for the next Open (Options.Manager.EndSessionsOnClose ends them, for a
// program that will not come back). Options.Dormant opens an agent
// without connecting anything, for programs that only read or edit the
// stored servers ("agentmcp ls --db").
//
// Each server's last tools, prompts and resources lists are stored too,
// where the store keeps catalogs (store.CatalogStore: SQLite and
// Postgres; readable, at most store.MaxCatalogBytes per server; a larger
// catalog is not kept), written when a discovery or a list_changed
// refresh changes them. A woken or restored agent offers them at once
// (ListTools, AITools, the gateway's lists), marked stale (Tool.Stale,
// MCPServer.CatalogStale) until the server lists them again; a call to a
// stale tool goes to the server, connecting first. Each stored tool keeps
// its definition's fingerprint (see ToolDefinition), so that a woken
// agent compares its stored catalogs with its pins without computing
// them. WaitCatalogs waits only for restored servers without a stored
// catalog.
// Options.NoStoredCatalogs turns this off. MCPServer.ToolBytes and
// ToolTokens say what a server's tool definitions cost a model's context.
//
// # OAuth
//
// A server added with a callback host (AddOptions.CallbackHost, else
// Options.CallbackHost) can sign in with OAuth: AddMCPServer returns
// authenticating with the AuthURL the user must visit, and the
// authorization server sends the browser back to the server's callback
// URL, by default
//
//	{CallbackHost}/{AgentsPrefix}/{class in kebab-case}/{name}/callback
//
// (AgentsPrefix is "agents" unless set), or {CallbackHost}/{CallbackPath}.
// Options.HideIdentity keeps the agent's names out of callback URLs and
// then requires a CallbackPath. The application routes callbacks to the
// agent: IsCallbackRequest reports whether a request is one of its
// callbacks (a GET whose state names one of its servers, on that server's
// callback host and path), and HandleOAuthCallback finishes the flow
// (HandleCallbackRequest without the HTTP answer) and answers as
// ConfigureOAuthCallback says: a redirect, an error page, or a handler of
// the application's. A callback exchanges the code, stores the tokens and
// connects the server in the background; a failed one fails the server
// with the reason in its error; a stray, forged or reused one changes
// nothing. Host.CheckCallback judges a callback for a sleeping agent from
// the store alone (its state must be a pending authorisation of one of the
// agent's servers), so that an application wakes the agent only for one
// that can complete a flow. Options.CreateOAuthProvider replaces the default provider
// (package oauth: dynamic registration, PKCE, single-flight refresh) for
// pre-registered clients and the like.
//
// # Many agents
//
// A Host keeps the agents of one store, awake only while they are used:
// what agentmcp serve runs. Use wakes an agent (two concurrent uses of a
// sleeping agent open it once) and holds it until the use is released. An
// agent idle for HostOptions.IdleTimeout (5 minutes by default) is
// hibernated: closed as Close does, its sessions kept resumable, nothing of
// it left in memory. Waking one more agent than HostOptions.MaxAwake
// (1,000 by default) hibernates the least recently used idle one instead
// of refusing the request. An agent is never hibernated while it is in use
// or Busy (a call, an add or a reconnection in flight, an open Watch, a
// pending elicitation, an OAuth flow started less than
// oauth.StateLifetime ago, so that its callback finds it), nor when it is
// kept awake: named in HostOptions.KeepAwake, or with a server added with
// AddOptions.KeepAwake (SetKeepAwake changes it), for agents that must hear
// list_changed notifications and server requests. Start wakes those.
//
// A wake costs one read of the agent's servers from the store: they come
// back at once, each connecting in the background, their saved sessions
// resumed without a handshake, so a call waits only for its own server.
// Their catalogs are listed again as their discoveries finish. An agent
// without servers is not stored: it exists only while awake.
// Host.HandleOAuthCallback finds the awake agent of a callback on a custom
// path; a callback on the default path names its agent, which Use wakes.
//
// # Watching
//
// Watch starts a watch of the agent's state (MCPServersState, the seed's
// getMcpServers) and pending elicitations: the state at the start first,
// then an update after every change (registration, connection, discovery,
// list_changed, authorization, removal), quick changes coalesced. Its
// buffer is bounded: a watcher that does not keep up is dropped with
// ErrWatcherTooSlow rather than allowed to hold the agent back; closing
// or hibernating the agent ends every watch with ErrClosed. OnMCPUpdate
// is the seed's onMcpUpdate, a callback with the new state after every
// change. One goroutine per agent computes each state once for all of
// them.
//
// With Options.ElicitationTimeout set, the agent answers its servers'
// requests for the user's input itself: each waits as a pending
// Elicitation (Elicitations, Watch) until AnswerElicitation, the end of
// its call or the timeout, for an API or a dashboard to answer.
//
// # Calls
//
// CallTool, ReadResource and GetPrompt call one of the agent's servers;
// ListTools, ListPrompts, ListResources and ListResourceTemplates list
// the catalogs of its stored servers, each item tagged with its server id
// (mcpclient.Filter selects servers and states). A call to a server still
// connecting, after Open or a wake, waits for that server alone. AITools
// gives the tools as LLM tools (keys unique over every server), and
// Servers each live server with its name and state (ServerInfo one).
// ToolView reads a tool's MCP Apps view (mcpclient.Manager.ToolView);
// set Options.Manager.Apps when the program renders views, so that the
// servers' clients advertise the extension (package server's agents do).
// ConfigureElicitationHandlers and ConfigureSampling set the handlers of
// the servers' requests for input (ElicitationHandlers and SamplingHandler
// read them). Manager gives the mcpclient.Manager underneath, for what the
// Agent does not offer (events, roots).
//
// Attach gives an agent parts that live as long as it does (package
// gateway's MCP endpoint): one per key, made on first use, closed first by
// the agent's Close; an InputAsker's questions count in Busyness.Inputs.
//
// # Tasks
//
// A call that runs as an MCP task (a tool whose taskSupport is required,
// one asked for with CallOptions.Task, any call to a 2026-07-28 server that
// offers the tasks extension; see mcpclient) is durable when the store
// keeps tasks (store.TaskStore; SQLite and Postgres do): its handle
// (server, tool, task id, protocol, arguments hash, TTL and poll interval)
// and the caller's correlation (WithTaskCorrelation) are stored before its
// first poll, its status as it changes, and its result or error when it
// ends. An agent opened (after a restart, or woken) with tasks that had
// not ended resumes polling each once its server's first connection
// attempt settled, and stores the outcome; TaskResult waits for it, Tasks
// and Task list what is stored, and CancelTask sends tasks/cancel. A call
// to a server that never offered tasks pays one atomic load for this.
// StartTaskCall makes a call for a request that may end before it
// (TaskCall): the call is the request's until the server creates a task,
// and the agent's from then on (package server answers 202 with the task),
// no longer keeping the agent Busy. A Dormant agent resumes no task: it
// connects nothing, and leaves them to the agent that will.
//
// An outcome the store refuses (the server answered, the write failed)
// leaves the task running: it is polled again, with a growing wait, until
// the outcome is stored, or resumed by the next process if this one dies.
// So does a poll that fails (the server unreachable for now, a closed
// gate): only the server's end of the task (completed, failed, cancelled,
// expired), the caller's cancel, or a protocol error is an outcome; a task
// past its ttl is stored expired.
//
// A Host wakes an agent it hibernated while tasks it polled still ran, to
// poll them: after their poll interval, or HostOptions.TaskWake (30
// seconds by default) if longer, it opens the agent, waits for each
// task's first poll (an ended one's outcome stored), and hibernates it
// again unless it is in use; agents without running tasks are never woken
// so. Under a Directory (the replicas of a cluster), task writes carry the
// agent's fence and the Directory's gate stops every poll of a replica
// that lost its lease, so the lease decides who polls; an agent whose
// replica died with a task running is woken elsewhere (the cluster's
// rehoming) and resumes it. Host.Start wakes the agents whose tasks were
// still running when the previous process ended, to poll them likewise.
// Not yet: in a cluster, an agent hibernated with running tasks by a
// replica that then drains or exits cleanly (its leases released) waits
// for its next use, or the next start of a replica.
//
// # Exposure
//
// Every agent can be an MCP server of its own (package gateway). Its
// exposure rules say which servers and tools that endpoint exposes:
// Exposure holds allow and deny patterns ("SERVER", "SERVER/TOOL", with *
// and ? wildcards; deny wins; no rule exposes everything), SetExposure
// stores them with the agent and reports the change as an update, and
// Exposes, which reads them in memory without a lock, is the gateway's
// Expose hook.
//
// # Policy and approvals
//
// Each agent has a tool policy (package policy): ordered rules, the first
// that matches a call deciding allow, deny or ask, with an optional rate
// per tool; it matches tools and servers by pattern (as the exposure
// rules do), tools by their annotations (with the specification's
// defaults when absent) and calls by their caller. SetPolicy stores it
// with the agent; Policy returns it; the zero policy allows everything.
// It is enforced where calls are made: CallTool decides for the caller its
// context carries (WithCaller: the API sets policy.API, the gateway
// policy.Gateway, the AITools executor policy.LLM; a context without one
// is policy.API, a Go program's own call), so every surface (the library,
// the API, the CLI, the gateway, a model adapter) is held to it. AITools
// and ListTools leave out the tools the policy denies their caller (the
// model, the API), and ToolSet(caller, f) gives any caller's tools;
// Decide says a tool's effective action without counting a call. For the
// gateway caller, the exposure rules apply first: what they hide is
// denied. A denied call is an error wrapping ErrToolDenied (a
// *ToolDeniedError names the rule); a call over its rate, ErrRateLimited
// (a *RateLimitedError has the wait). Options.PolicyHook makes dynamic
// decisions after the stored rules; it can make a decision stricter, never
// looser. Through AITools, a refused call is a tool failure the model
// reads. Rates are counted in the agent's memory: a restart or a
// hibernation starts them afresh.
//
// A call the policy asks about becomes an Approval, stored before
// anything is sent: the tool, its exact arguments (canonical JSON: an
// approval runs those and no others), the caller, when it was requested
// and when it expires (Options.ApprovalLifetime, 24 hours by default). The
// call waits while its context lasts; when it ends first the error is an
// *ApprovalPendingError, and the approval stays pending. Approvals lists
// them (pending first), Approval gets one; Approve runs the call once, in
// the background, and stores its result with the approval (state done;
// approving again changes nothing, and of two processes that approve, the
// store lets one win), optionally remembering (an allow rule for the tool
// ahead of the others); Deny refuses it with a reason its caller gets
// (*ApprovalDeniedError, wrapping ErrApprovalDenied). Expiry follows the
// agent's clock: an approval past it is marked expired when next read,
// and its waiting caller gets ErrApprovalExpired. A call made with
// WithApproval(ctx, id) runs nothing: it waits for that approval's outcome
// and returns it, if its tool and arguments are the approval's (else
// ErrApprovalMismatch). Approvals live in the store (store.ApprovalStore),
// so a restart, a hibernation or a failover loses none; a pending approval
// whose caller is gone does not keep the agent awake, an approved call
// running does. A caller can be asked too (WithApprovalAsker: the gateway
// asks a client that declared elicitation with a form); its answer
// decides the approval as a person's would, and no answer leaves it
// pending.
//
// An approved call runs once, never twice: it is stored running (with
// StartedAt; the API shows it approved) before anything is sent, and of
// the processes that would run it the store lets one do so. Its pin is
// checked first: a tool whose definition changed since the ask is not
// run, and the approval is done with Code store.ApprovalToolChanged (its
// caller gets an error wrapping ErrToolChanged). An agent opened (not
// Dormant) settles what a stopped process left: an approval approved but
// never started runs then; one running may have run, so it is marked done
// with Code store.ApprovalInterrupted and the reason, never run again (its
// caller gets ErrApprovalInterrupted); one cut short by Close is marked
// interrupted likewise. The agent that opens is the agent's owner: serve
// holds a lock on a SQLite database, a replica the agent's lease on
// PostgreSQL. Approvals that ended (denied, expired, done) are pruned when
// one is asked, when the agent opens, and at most hourly when they are
// listed: those older than Options.ApprovalRetention (30 days) on the
// agent's clock, and those past the Options.MaxApprovals (1,000) most
// recent. The agent's meter records
// agentmcp.approvals.requested, .answered (by decision), .expired and
// .decision_time.
//
// # Pinned tool definitions
//
// The first listing of a server's tools pins each definition with the
// agent (store.PinStore): ToolDefinition gives its pinned form (canonical JSON
// of its name, title, description, input and output schemas and
// annotations) and fingerprint (SHA-256). Every later listing
// (list_changed, a reconnection, a wake, a restore) is compared with the
// pins, and so is the catalog wherever a list is made or a call admitted.
// A tool whose definition differs is changed: under the policy's pins
// reaction block (policy.Pins; the default) it is left out of AITools,
// ListTools, ToolSet and so the gateway, and CallTool refuses it with an
// error wrapping ErrToolChanged (a *ToolChangedError), until DecidePin
// accepts the new definition or the server is removed; under warn it
// stays, marked changed; under accept it is re-pinned silently. A tool
// listed after the server's first listing is new (allowed, or held under
// "new": "hold"); one no longer listed is marked removed; DecidePin with
// PinReject keeps a tool out whatever the reaction. Pins lists them,
// those that need a look first, with the changed fields' old and new text
// (the pinned definition stays for display); the agent's state carries
// them in its Pins field, so that watchers are told. CheckPin is what
// CallTool asks first; it waits for a restored server's catalog, so that
// the first call after a restart or a wake is checked too, and lists the
// tools of a server whose restore could not (a call is never checked
// against a stale definition only; a server that cannot list its tools is
// not called: mcpclient.ErrNotConnected). A server moved
// from a generated id to a stable one (AddMCPServer with an ID) keeps its
// pins under the new id (store.Store's RenameServer moves them). The agent's
// meter records agentmcp.pins.changes (by state and reaction) and
// agentmcp.pins.decisions (by decision).
//
// # Audit log
//
// When its store keeps one (store.AuditStore: store/sqlite and
// store/postgres do), the agent records in its audit log every tool call
// made through it, whoever the caller (CallTool, StartTaskCall, the
// AITools executor, and so the API, the CLI and the gateway), every
// decision on one (allowed, denied, rate_limited, tool_changed, asked;
// approved and rejected by a person, expired), every pin decision (a
// person's accept or reject, the agent's reaction to a changed, new or
// removed tool) and every server added or removed: one
// store.AuditRecord each, with the time on the agent's clock, the server's
// id and name, the tool, the caller, the decision, a call's outcome (ok,
// is_error, or error with its class), its duration and the SHA-256 of its
// arguments as canonical JSON. The arguments themselves are kept only when
// the policy says so ("audit": {"arguments": "full"}, policy.Audit), and
// then sealed by the store's cipher: a store without a key keeps their
// hash only. The run of an approved call is an allowed record that names
// its approval, with the original caller.
//
// Records are written off the call's path: a call hands its record to a
// buffered channel (8192 records) and returns; a flusher goroutine gathers
// them for Options.AuditWindow (100ms by default, or up to 1000 records)
// and appends them in one transaction. When the buffer is full (the store
// is slower than the calls) a record is dropped, counted in the
// agentmcp.audit.dropped metric and logged once, rather than slow the
// call down. After a write the flusher prunes the agent's log to
// Options.AuditKeep records (100,000; once a tenth of them was written)
// and Options.AuditMaxAge (30 days, on the agent's clock; once a
// minute). Audit reads the log (by time, server, tool, decision, with a
// cursor, oldest or newest first); it writes this process's pending
// records first. Close writes every record made
// before it (a clean shutdown, or a hibernation, loses none); a process
// killed without Close (kill -9) loses the records of its last batch
// window: those made in the AuditWindow before it died, and a batch whose
// write had not committed; the records kept are those of the calls before,
// without a gap (TestAuditKill measures it: the last 9 to 61 ms of calls
// in three runs). Options.NoAudit turns the log off. Across
// replicas (store/postgres), each replica appends the records of the
// calls it made, unfenced, and every replica reads them all, in the order
// they were appended.
//
// # The HTTP API's shapes
//
// The agent's values as agentmcp serve's HTTP API shows them (package
// api's wire types: TaskAPI, TaskListAPI, Approval.API, MCPServer.API,
// Agent.ServerState, ServerLogsAPI), a catalog filter from the API's query
// (Agent.APIFilter) and an API add request as AddOptions (AddOptionsFor)
// are here, so that package server and agentmcp without a server answer
// the same. Package api imports nothing of the engine.
//
// # Concurrency
//
// Agent and Host are safe for concurrent use. An Agent's background work
// (connections, state computation, database writes) runs on goroutines it
// owns, stopped by Close; a hibernated agent leaves none. Close, on an
// Agent or a Host, is idempotent and bounded by its ctx. OnMCPUpdate
// callbacks run in order on one goroutine and must not block.
//
// # Errors
//
// AddMCPServer fails with nothing stored for an invalid or blocked URL
// (wrapping netguard.ErrBlockedURL) or an id that another server has
// (ErrIDInUse); a server that cannot be reached is stored and retried in
// the background, and the error is a *ConnectError (as is Reconnect's for
// a server still unreachable), unless AddOptions.RemoveIfFailed asks that
// nothing stay (the error then wraps ErrNotSaved; a *NotMCPEndpointError,
// wrapping ErrNotMCPEndpoint, for a URL that answered 404, 405 or 501).
// With AddOptions.UniqueName, a name another server has is a
// *NameInUseError. When the store fails, AddMCPServer and RemoveMCPServer
// wrap ErrStorage and the store's error (store.ErrUnavailable when it
// could not serve: retry) and change nothing: a remove refused so leaves
// the server stored and connected. Reconnect of an unknown id wraps
// mcpclient.ErrNotRegistered. ErrClosed is returned by a closed agent and
// ends its watches; ErrHostClosed by Host.Use after Close. A tool that
// fails is a result with IsError, for the model; an error means the call
// did not complete (mcpclient's errors). Errors and states never carry
// header values, tokens, or URL credentials and queries.
package agent
