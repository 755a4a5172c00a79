// Package sse reads server-sent events (the WHATWG "event stream"
// format) for agentmcp's HTTP transports: the streams of the streamable
// HTTP transport and the event stream of the HTTP+SSE transport.
//
// A [Reader] keeps one read buffer that grows to the longest line it
// meets, so that a line is never reassembled from pieces, and caps the
// bytes of one event. Readers made by [NewReader] take their buffers from
// a pool and return them on [Reader.Release]; [NewLongReader] starts
// small, for streams that stay open and mostly idle.
//
// A Reader is not safe for concurrent use. The Data of an event is valid
// until the next call of Next.
package sse
