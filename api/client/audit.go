package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentmcp/agentmcp/api"
)

// AuditQuery selects records of the agent's audit log; every field is
// optional.
type AuditQuery struct {
	// Since and Until bound the records' time; zero means no bound.
	Since, Until time.Time
	// Server, Tool and Decision select records with those values.
	Server, Tool, Decision string
	// Limit is the page size (1-1000; zero means the server's 100), or
	// for AuditExport the most records (zero: all).
	Limit int
	// Cursor goes on from an answer's Cursor, in the same order.
	Cursor string
	// NewestFirst lists the newest records first.
	NewestFirst bool
}

func (q AuditQuery) values() url.Values {
	v := url.Values{}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.UTC().Format(time.RFC3339Nano))
	}
	for k, s := range map[string]string{"server": q.Server, "tool": q.Tool, "decision": q.Decision, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.NewestFirst {
		v.Set("order", api.AuditNewestFirst)
	}
	return v
}

// Audit returns one page of the agent's audit log (GET .../audit): the
// records q selects, and the cursor to go on from.
func (c *Client) Audit(ctx context.Context, q AuditQuery) (api.AuditResponse, error) {
	var out api.AuditResponse
	path := "/audit"
	if v := q.values(); len(v) > 0 {
		path += "?" + v.Encode()
	}
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// AuditExport returns every record q selects (at most q.Limit when set),
// read as JSON lines (GET .../audit?format=jsonl) as they arrive.
func (c *Client) AuditExport(ctx context.Context, q AuditQuery) iter.Seq2[api.AuditRecord, error] {
	return func(yield func(api.AuditRecord, error) bool) {
		v := q.values()
		v.Set("format", api.FormatJSONLines)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/audit?"+v.Encode(), nil)
		if err != nil {
			yield(api.AuditRecord{}, err)
			return
		}
		req.Header.Set("Accept", api.MediaTypeJSONLines)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			yield(api.AuditRecord{}, err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			yield(api.AuditRecord{}, decodeAnswer(resp, nil))
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var rec api.AuditRecord
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				yield(api.AuditRecord{}, fmt.Errorf("audit export: %w", err))
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(api.AuditRecord{}, fmt.Errorf("audit export: %w", err))
		}
	}
}
