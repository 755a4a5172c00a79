package server

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/server/internal/failure"
	"github.com/agentmcp/agentmcp/store"
)

// The agent's audit log (agent.Agent.Audit): one page as JSON, or every
// record selected as JSON lines.
const auditRoute = "/agents/{class}/{name}/audit"

// auditRoutes adds GET .../audit.
func (s *Server) auditRoutes(mux *http.ServeMux) {
	mux.Handle(auditRoute, s.agentRoute(methods{http.MethodGet: s.audit}))
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	q, aerr := agent.AuditQueryFor(r.URL.Query())
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if wantsJSONLines(r) {
		s.exportAudit(w, r, a, q)
		return
	}
	handle(s, func(r *http.Request, a *agent.Agent, _ *noBody) (api.AuditResponse, error) {
		recs, err := a.Audit(r.Context(), q)
		if err != nil {
			return api.AuditResponse{}, auditError(err)
		}
		out := api.AuditResponse{Records: make([]api.AuditRecord, 0, len(recs)), More: len(recs) == auditLimit(q)}
		for _, rec := range recs {
			out.Records = append(out.Records, agent.AuditAPI(rec))
		}
		switch {
		case len(recs) > 0:
			out.Cursor = strconv.FormatInt(recs[len(recs)-1].Seq, 10)
		case q.Cursor > 0:
			out.Cursor = strconv.FormatInt(q.Cursor, 10)
		}
		return out, nil
	})(w, r, a)
}

// auditLimit is the page size of q.
func auditLimit(q agent.AuditQuery) int {
	if q.Limit <= 0 {
		return store.DefaultAuditLimit
	}
	return q.Limit
}

// wantsJSONLines reports whether r asks for the JSON lines export:
// ?format=jsonl, or Accept: application/x-ndjson.
func wantsJSONLines(r *http.Request) bool {
	if r.URL.Query().Get("format") == api.FormatJSONLines {
		return true
	}
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == api.MediaTypeJSONLines {
			return true
		}
	}
	return false
}

// exportAudit writes every record q selects (at most q.Limit when set),
// one JSON object a line, page by page.
func (s *Server) exportAudit(w http.ResponseWriter, r *http.Request, a *agent.Agent, q agent.AuditQuery) {
	total := q.Limit
	q.Limit = store.MaxAuditLimit
	var started bool
	enc := json.NewEncoder(w)
	for n := 0; ; {
		if total > 0 {
			q.Limit = min(store.MaxAuditLimit, total-n)
		}
		recs, err := a.Audit(r.Context(), q)
		if err != nil {
			if !started {
				writeError(w, s.apiError(r.Context(), auditError(err)))
				return
			}
			s.logger.Warn("audit export cut short", "agent", a.Namespace(), "error", err)
			return
		}
		if !started {
			w.Header().Set("Content-Type", api.MediaTypeJSONLines)
			w.WriteHeader(http.StatusOK)
			started = true
		}
		for _, rec := range recs {
			if err := enc.Encode(agent.AuditAPI(rec)); err != nil {
				return // the client went away
			}
		}
		n += len(recs)
		if len(recs) < q.Limit || (total > 0 && n >= total) {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		q.Cursor = recs[len(recs)-1].Seq
	}
}

// auditError maps an error of Agent.Audit to the API's.
func auditError(err error) error {
	switch {
	case errors.Is(err, agent.ErrAuditUnsupported):
		return apiErrorf(http.StatusNotImplemented, api.CodeInternal, "this server's store keeps no audit log")
	case errors.Is(err, context.Canceled):
		return err
	}
	if aerr := failure.Store(err); aerr != nil {
		return aerr
	}
	return apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the audit log could not be read; retry")
}
