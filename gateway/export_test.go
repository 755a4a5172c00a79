package gateway

// FastCalls returns how many tools/call requests g answered itself,
// below go-sdk's server.
func FastCalls(g *Gateway) int64 { return g.fastCalls.Load() }

// SetFastPath turns g's own answer to tools/call on or off (off: every
// request goes to go-sdk's server).
func SetFastPath(g *Gateway, on bool) { g.noFast.Store(!on) }
