package server

import (
	"math"
	"net/http"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
)

func (s *Server) stats(r *http.Request, a *agent.Agent, _ *noBody) (api.Stats, error) {
	out := api.Stats{WindowSeconds: int(mcpclient.StatsWindow / time.Second), Servers: map[string]api.ServerStats{}}
	for id, st := range a.ServerStats() {
		out.Servers[id] = api.ServerStats{
			Calls:       st.Calls,
			Errors:      st.Errors,
			ErrorRate:   math.Round(st.ErrorRate()*1e4) / 1e4,
			P50Ms:       millis(st.P50),
			P95Ms:       millis(st.P95),
			TotalCalls:  st.TotalCalls,
			TotalErrors: st.TotalErrors,
		}
	}
	return out, nil
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)/time.Microsecond) / 1e3
}
