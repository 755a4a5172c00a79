package agent

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/store"
)

// The audit log in the API's shapes (package api): its query, its
// records.

// AuditAPI returns r as the API shows it.
func AuditAPI(r AuditRecord) api.AuditRecord {
	return api.AuditRecord{Seq: r.Seq, Time: r.Time.UTC(), Server: r.ServerID, ServerName: r.ServerName, Tool: r.Tool,
		Caller: r.Caller, DecidedBy: r.DecidedBy, Decision: r.Decision, Outcome: r.Outcome, ErrorClass: r.ErrorClass, Reason: r.Reason,
		Approval: r.Approval, DurationMS: float64(r.Duration.Microseconds()) / 1000,
		ArgumentsHash: r.ArgumentsHash, Arguments: r.Arguments}
}

// auditDecisions are the decisions a query may select.
var auditDecisions = map[string]bool{
	store.AuditAllowed: true, store.AuditDenied: true, store.AuditRateLimited: true, store.AuditToolChanged: true,
	store.AuditAsked: true, store.AuditApproved: true, store.AuditRejected: true, store.AuditExpired: true,
	store.AuditPinAccepted: true, store.AuditPinRejected: true, store.AuditPinChanged: true, store.AuditPinNew: true,
	store.AuditPinRemoved: true, store.AuditServerAdded: true, store.AuditServerRemoved: true,
}

// AuditQueryFor parses the API's query of the audit log: since and until
// (RFC 3339), server, tool, decision, limit (1-1000, default 100), cursor
// (a record's seq), order (oldest, the default, or newest) and format
// (jsonl: the caller's business); 400 invalid_request for anything else.
func AuditQueryFor(v url.Values) (AuditQuery, *api.APIError) {
	var q AuditQuery
	invalid := func(format string, args ...any) (AuditQuery, *api.APIError) {
		return q, &api.APIError{Status: http.StatusBadRequest, Code: api.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
	}
	for k, vals := range v {
		if len(vals) != 1 {
			return invalid("query parameter %q given %d times", k, len(vals))
		}
		val := vals[0]
		var err error
		switch k {
		case "since", "until":
			var t time.Time
			if t, err = time.Parse(time.RFC3339Nano, val); err != nil {
				return invalid("%s: %q is not an RFC 3339 time", k, val)
			}
			if k == "since" {
				q.Since = t
			} else {
				q.Until = t
			}
		case "server":
			q.ServerID = val
		case "tool":
			q.Tool = val
		case "decision":
			if !auditDecisions[val] {
				return invalid("unknown decision %q", val)
			}
			q.Decision = val
		case "limit":
			if q.Limit, err = strconv.Atoi(val); err != nil || q.Limit < 1 || q.Limit > store.MaxAuditLimit {
				return invalid("limit: %q, want 1 to %d", val, store.MaxAuditLimit)
			}
		case "cursor":
			if q.Cursor, err = strconv.ParseInt(val, 10, 64); err != nil || q.Cursor < 0 {
				return invalid("cursor: %q is not one this route gave", val)
			}
		case "order":
			switch val {
			case api.AuditOldestFirst:
			case api.AuditNewestFirst:
				q.NewestFirst = true
			default:
				return invalid("order: %q, want %s or %s", val, api.AuditOldestFirst, api.AuditNewestFirst)
			}
		case "format":
			if val != api.FormatJSONLines {
				return invalid("format: %q, want %s (or none)", val, api.FormatJSONLines)
			}
		default:
			return invalid("unknown query parameter %q (want since, until, server, tool, decision, limit, cursor, order or format)", k)
		}
	}
	return q, nil
}
