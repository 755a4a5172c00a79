// Package benchknob holds switches for cmd/agentmcp-bench alone: they turn
// parts of the library off, so that the benchmark can measure what those
// parts cost in the same run. Nothing else sets them.
package benchknob

import "sync/atomic"

// NoRequestTelemetry, while set, makes mcpclient.New build Managers
// without their per-request telemetry (the span middleware, which also
// keeps the servers' call figures, and the JSON-RPC id noted on spans): "telemetry off", against which the default
// (the global no-op providers) is compared.
var NoRequestTelemetry atomic.Bool
