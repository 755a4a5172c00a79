package server

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// toolMatch is api.ToolMatch as the server writes it: the MCP tool as
// the agent holds it.
type toolMatch struct {
	mcpclient.Tool
	Key   string  `json:"key"`
	Score float64 `json:"score"`
}

// searchTools serves GET .../tools?q=QUERY&limit=N: the agent's tools
// that match QUERY (aitools' index: names, titles, descriptions,
// parameters), best first, with their keys and scores. serverId,
// serverName and state filter as for the list.
func (s *Server) searchTools(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	q := r.URL.Query()
	query := strings.TrimSpace(q.Get("q"))
	if query == "" {
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "q must not be empty"))
		return
	}
	limit := api.DefaultToolSearchLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > api.MaxToolSearchLimit {
			writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "limit must be a whole number from 1 to %d", api.MaxToolSearchLimit))
			return
		}
		limit = n
	}
	rest := url.Values{}
	for k, v := range q {
		if k != "q" && k != "limit" {
			rest[k] = v
		}
	}
	f, ok, aerr := a.APIFilter(rest)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	out := []toolMatch{}
	if ok {
		ctx, cancel := context.WithTimeout(r.Context(), restoreWait)
		a.WaitRestored(ctx, f.ServerID...)
		cancel()
		for _, m := range a.SearchTools(f, query, limit) {
			out = append(out, toolMatch{Tool: mcpclient.Tool{Tool: *m.Tool.Def, ServerID: m.Tool.ServerID},
				Key: m.Tool.Key, Score: math.Round(m.Score*1000) / 1000})
		}
	}
	writeJSON(w, http.StatusOK, map[string][]toolMatch{"tools": out})
}
