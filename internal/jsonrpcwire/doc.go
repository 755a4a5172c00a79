// Package jsonrpcwire decodes and encodes JSON-RPC messages for agentmcp's
// HTTP transports with less work than go-sdk's jsonrpc.DecodeMessage and
// encoding/json.
//
// go-sdk builds a streaming JSON decoder for every message, which allocates
// a 32 KiB buffer before it reads a byte and copies a large message several
// times as that buffer grows, and then decodes a tool result twice more
// (docs/PERFORMANCE.md). [Decode] validates a message in one pass over its
// bytes, without allocating, and copies out only the raw params or result;
// [SplitText] decodes the plain text items of a tools/call result in one
// more pass and leaves the rest of the result to go-sdk.
//
// [MarshalParams] encodes a request's params to the bytes go-sdk's
// jsonrpc2 sends (encoding/json without HTML escaping), and [DecodeAny]
// decodes JSON to the values json.Unmarshal makes of it in an any (the
// _meta and structuredContent of a tools/call result), both without
// reflection for the common shapes; FuzzAppendJSON and FuzzDecodeAny
// compare them with encoding/json.
//
// Decode and SplitText are differential: they accept exactly what go-sdk
// accepts and decode it to the same values (the fuzz tests FuzzDecodeMessage and
// FuzzSplitText compare them with go-sdk), and they leave to go-sdk what
// decoders may differ on (\u escapes in texts, escaped keys, invalid
// UTF-8). docs/UPSTREAM.md states the go-sdk changes that would make this
// package unnecessary.
//
// Every function is safe for concurrent use.
package jsonrpcwire
