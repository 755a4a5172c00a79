// Package benchopt is the type of mcpclient.Options.Bench: settings that
// turn parts of the library off so that agentmcp's benchmark
// (cmd/agentmcp-bench) can measure what they cost in the same run. The
// package is internal, so nothing outside this module can set them; the
// library reads them from the options of one Manager, never from a
// package variable.
package benchopt

// Options turns parts of a Manager off. The zero value turns nothing off.
type Options struct {
	// NoRequestTelemetry builds the Manager without its per-request
	// telemetry (the span middleware, which also keeps the servers' call
	// figures, and the JSON-RPC id noted on spans): "telemetry off",
	// against which the default (the global no-op providers) is compared.
	NoRequestTelemetry bool
}
