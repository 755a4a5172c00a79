package agent

import (
	"maps"

	"github.com/agentmcp/agentmcp/mcpclient"
)

// ServerStats returns, by server id, the figures of the tool calls the
// agent sent to each of its stored servers over the last
// [mcpclient.StatsWindow] (see [mcpclient.ServerStats]): calls, errors,
// p50 and p95 latency. A server with no connection in this process (never
// connected, dormant) has zero figures. They are kept in memory: an agent
// woken from hibernation starts them again.
func (a *Agent) ServerStats() map[string]mcpclient.ServerStats {
	a.mu.Lock()
	out := make(map[string]mcpclient.ServerStats, len(a.order))
	ids := append([]string(nil), a.order...)
	dormant := maps.Clone(a.dormant)
	a.mu.Unlock()
	for _, id := range ids {
		var s mcpclient.ServerStats
		if !dormant[id] {
			s, _ = a.m.ServerStats(id)
		}
		out[id] = s
	}
	return out
}
