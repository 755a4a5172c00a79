package server

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// Stats is the body of GET /agents/{class}/{name}/stats: the figures of
// the tool calls the agent sent to each of its servers
// (agent.Agent.ServerStats), for the dashboard. They are not in the state
// stream, which would otherwise send a frame per call.
type Stats struct {
	// WindowSeconds is how far back the windowed figures reach
	// (mcpclient.StatsWindow): the current minute and the four before it.
	WindowSeconds int `json:"windowSeconds"`
	// Servers are the agent's stored servers by id.
	Servers map[string]ServerStats `json:"servers"`
}

// ServerStats are one server's figures (mcpclient.ServerStats): calls,
// errors and latency quantiles over the window, and the totals since the
// server was registered in this process.
type ServerStats struct {
	Calls  int64 `json:"calls"`
	Errors int64 `json:"errors"`
	// ErrorRate is Errors over Calls, 0 without calls.
	ErrorRate float64 `json:"errorRate"`
	// P50Ms and P95Ms are the latency quantiles in milliseconds (to the
	// microsecond), 0 without calls.
	P50Ms       float64 `json:"p50Ms"`
	P95Ms       float64 `json:"p95Ms"`
	TotalCalls  int64   `json:"totalCalls"`
	TotalErrors int64   `json:"totalErrors"`
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	out := Stats{WindowSeconds: int(mcpclient.StatsWindow / time.Second), Servers: map[string]ServerStats{}}
	for id, st := range a.ServerStats() {
		out.Servers[id] = ServerStats{
			Calls:       st.Calls,
			Errors:      st.Errors,
			ErrorRate:   math.Round(st.ErrorRate()*1e4) / 1e4,
			P50Ms:       millis(st.P50),
			P95Ms:       millis(st.P95),
			TotalCalls:  st.TotalCalls,
			TotalErrors: st.TotalErrors,
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)/time.Microsecond) / 1e3
}

// Stats returns the figures of the agent's servers' tool calls (GET
// .../stats).
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var out Stats
	err := c.do(ctx, http.MethodGet, "/stats", nil, &out)
	return out, err
}
