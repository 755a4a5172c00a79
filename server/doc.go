// Package server hosts named agents over HTTP: what agentmcp serve runs.
// Its routes, their bodies and answers, its error codes and its streams
// are package api's documentation, which is the API's reference; this
// package serves them.
//
// # What belongs here
//
// Routes and their wiring: a handler decodes a request (api types), asks
// the agent (package agent) and writes the answer or the error. A JSON
// route is its function over the handler skeleton (handle, in api.go;
// callServer for a call on an MCP server) and one line in routes. The
// parts a route relies on are packages of their own under
// server/internal, each with its doc: the security layer every request
// passes first (guard: token, cookie, Host, CORS and cross-site checks,
// the MCP endpoints' OAuth tokens, body and write limits; limits.go tells
// it which routes are public, take a body or stream), the WebSocket and
// SSE writing of an agent's watch and of a call's events (stream), the proxy to the replica that
// holds an agent and the check of what other replicas send (forward),
// whether the server can serve now (ready: /healthz, /readyz), what the
// engine's errors are on the API (failure), the JSON bodies read and
// answers written (reply), the dashboard's pages (pages) and the policy a
// tool's MCP Apps view is served under (viewpolicy). Anything else
// has an owner elsewhere: wire types in api, the agent's values in their
// shape (tasks, approvals, server states, logs, a catalog's filter) and an
// add request's options in agent (agent/api.go, which agentmcp --db
// answers with too), the Go client in api/client, the agents'
// lifetime and which agents exist in agent (agent.Host), which replica
// wakes an agent and how long a request waits for its owner in cluster,
// access token checks in oauth/resource, the MCP endpoint in gateway,
// whether the store answers (/readyz) in store (store.Probe).
//
// # Replicas
//
// With Options.Cluster, the server is one replica of several on one
// Postgres store (package cluster): each agent is awake on one replica at
// a time, and any replica answers any request, forwarding it to the
// agent's owner over the owner's cluster listener (ClusterHandler, served
// by ClusterHTTPServer with the public listener's connection limits). Each
// forwarded request is signed with ClusterOptions.Key (cluster.SignRequest,
// header cluster.SignatureHeader: HMAC-SHA256 of its method, Host, path and
// query, body hash, time, signing replica and nonce); the owner serves it
// only within cluster.Skew of its clock and only once (a replay cache), so a
// recorded request cannot be sent again. Where a request goes, and how
// long it waits for an owner that does not answer, is cluster.Replica's
// Follow; package api lists the errors of its own. The cluster listener
// also answers GET /cluster/stats (StatsPath), signed the same way: the
// process's goroutines, live heap after a garbage collection and awake
// agents (api.RuntimeStats), for leak checks across failovers. Drain (on
// SIGTERM in agentmcp serve) prepares an exit without failing requests.
// Keep-awake agents that no replica holds are woken by the others
// (cluster.Replica.Rehome).
//
// # Calls
//
// A call through the API (a tool call, a resource read, a prompt get) is
// bounded by its request's timeoutMs, else by Options.CallTimeout, else by
// DefaultCallTimeout (2 minutes).
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
// scripts and connections only, frames of its own origin only); the MCP
// Apps views the dashboard frames (apps.go) have one of their own, which
// sandboxes them away from the dashboard, its cookies and the API. Without Options.Token only loopback Host
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
// Every error response is JSON with a stable code (api.ErrorResponse, the
// api.Code constants; package api says what each carries), and a message
// safe to show: no tokens, header values or URL queries.
package server
