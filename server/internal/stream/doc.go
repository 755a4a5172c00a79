// Package stream writes an agent's watch (agent.Agent.Watch) to a client:
// as WebSocket messages (WebSocket) or as server-sent events (SSE). Each
// update of the watch becomes frames of the API (api.Frame, the state, and
// api.ElicitationsFrame, the pending elicitations), encoded once.
//
// A stream lives as long as its client keeps up: a frame or ping that
// cannot be written within WriteTimeout, or a WebSocket ping not answered
// in that time, ends it. When the watch drops a client that fell behind
// (agent.ErrWatcherTooSlow), the stream ends with close status 1013 and
// reason "fell behind" (SSE: "event: close" with that reason); when the
// server goes away (Options.Done, or the watch ending otherwise), with
// status 1001 and "server shutting down". Messages from a WebSocket
// client are not expected: one closes the connection (policy
// violation). Idle streams get a WebSocket ping or an SSE comment every
// Options.KeepAlive.
//
// A tool call whose client asked for its events is a stream too: Events
// writes them (api.CallEvent) as server-sent events, and ProgressQueue
// holds the call's progress notifications until they are written.
//
// Which clients get frames at all, and whether a stream may open, is the
// server's to decide: a nil watch gives a stream that only pings.
//
// # Concurrency
//
// WebSocket and SSE block until their stream ends; each serves one
// connection and may run concurrently with any other.
package stream
