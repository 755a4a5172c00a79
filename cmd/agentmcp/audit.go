package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/store"
)

func auditCommand() command {
	return command{
		name:    "audit",
		summary: "show an agent's audit log: its tool calls and the decisions on them",
		usage: `Usage:
  agentmcp audit [flags] [SERVER [TOOL]]

Every tool call made through an agent (the API, the CLI, the gateway, a model),
every decision on one (allowed, denied, rate_limited, tool_changed, asked,
approved, rejected, expired), every pin decision and every server added or
removed is a record of the agent's audit log, with its caller, outcome
(ok, is_error, error), duration and the SHA-256 of its arguments (the
arguments themselves only under the policy's "audit": {"arguments": "full"}).
An answer to an approval also names who answered (BY): the name the answer
gave (agentmcp approve --by, the API's "by", the dashboard's), a label the
person stated, or the OAuth subject of a gateway client's access token.

agentmcp audit prints the last records (100 by default), oldest first, of
server SERVER (an id) and tool TOOL when given; --follow then prints the
records written since, as they come, until interrupted.

Flags:
  --since T        records from T on (RFC 3339, or a duration back from now: 1h)
  --until T        records before T (same forms)
  --decision D     records of decision D only (allowed, denied, asked, ...)
  --limit N        print the last N records (default 100); 0 prints them all
  --follow         go on printing new records as they are written
  --interval D     how often --follow asks for new ones (default 1s)
  --json           print each record as a line of JSON, as the API's export

` + targetFlagsUsage,
		run: runAudit,
	}
}

// auditSource reads pages of an agent's audit log, from serve or from the
// database.
type auditSource func(ctx context.Context, q client.AuditQuery) (api.AuditResponse, error)

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit")
	var tf targetFlags
	tf.register(fs)
	var (
		q              client.AuditQuery
		since, until   string
		limit          = 100
		follow, asJSON bool
		interval       = time.Second
	)
	fs.StringVar(&since, "since", "", "")
	fs.StringVar(&until, "until", "", "")
	fs.StringVar(&q.Decision, "decision", "", "")
	fs.IntVar(&limit, "limit", limit, "")
	fs.BoolVar(&follow, "follow", false, "")
	fs.DurationVar(&interval, "interval", interval, "")
	fs.BoolVar(&asJSON, "json", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 2 {
		return usageErrorf("unexpected argument %s (want at most SERVER and TOOL)", quoteArg(positional[2]))
	}
	if len(positional) > 0 {
		q.Server = positional[0]
	}
	if len(positional) > 1 {
		q.Tool = positional[1]
	}
	now := time.Now()
	if q.Since, err = auditTime(since, now); err != nil {
		return usageErrorf("--since: %v", err)
	}
	if q.Until, err = auditTime(until, now); err != nil {
		return usageErrorf("--until: %v", err)
	}
	if limit < 0 {
		return usageErrorf("--limit: %d is negative", limit)
	}
	if interval <= 0 {
		return usageErrorf("--interval: %v is not positive", interval)
	}
	octx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.mustExist = true
	tf.access = reading
	b, err := tf.open(octx, stderr, dormant)
	if err != nil {
		return err
	}
	defer b.close()
	var src auditSource
	switch b := b.(type) {
	case *remote:
		src = func(ctx context.Context, q client.AuditQuery) (api.AuditResponse, error) {
			res, err := b.c.Audit(ctx, q)
			return res, b.explain(err)
		}
	case *direct:
		src = func(ctx context.Context, q client.AuditQuery) (api.AuditResponse, error) {
			return directAudit(ctx, b.a, q)
		}
	default:
		return errors.New("audit: unsupported target")
	}

	out := auditPrinter{w: stdout, json: asJSON}
	recs, cursor, err := lastRecords(octx, src, q, limit)
	if err != nil {
		return err
	}
	if err := out.print(recs, !follow && len(recs) == 0, tf.agent); err != nil {
		return err
	}
	if !follow {
		return nil
	}
	// Follow: the records after the last one seen, oldest first, until ctx
	// ends (an interrupt).
	q.Cursor, q.NewestFirst, q.Limit = cursor, false, store.MaxAuditLimit
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for {
			pctx, cancel := context.WithTimeout(ctx, tf.timeout)
			page, err := src(pctx, q)
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
			if err := out.print(page.Records, false, ""); err != nil {
				return err
			}
			q.Cursor = page.Cursor
			if !page.More {
				break
			}
		}
	}
}

// lastRecords returns the last limit records q selects (all when limit
// is 0), oldest first, and the cursor after the newest.
func lastRecords(ctx context.Context, src auditSource, q client.AuditQuery, limit int) ([]api.AuditRecord, string, error) {
	var recs []api.AuditRecord
	q.NewestFirst = true
	cursor := ""
	for limit == 0 || len(recs) < limit {
		q.Limit = store.MaxAuditLimit
		if limit > 0 {
			q.Limit = min(store.MaxAuditLimit, limit-len(recs))
		}
		page, err := src(ctx, q)
		if err != nil {
			return nil, "", err
		}
		if cursor == "" && len(page.Records) > 0 {
			cursor = strconv.FormatInt(page.Records[0].Seq, 10)
		}
		recs = append(recs, page.Records...)
		if !page.More {
			break
		}
		q.Cursor = page.Cursor
	}
	slices.Reverse(recs)
	return recs, cursor, nil
}

// directAudit reads a page of the log of agent a as GET .../audit answers.
func directAudit(ctx context.Context, a *agent.Agent, q client.AuditQuery) (api.AuditResponse, error) {
	aq := agent.AuditQuery{Since: q.Since, Until: q.Until, ServerID: q.Server, Tool: q.Tool, Decision: q.Decision,
		Limit: q.Limit, NewestFirst: q.NewestFirst}
	if q.Cursor != "" {
		var err error
		if aq.Cursor, err = strconv.ParseInt(q.Cursor, 10, 64); err != nil {
			return api.AuditResponse{}, fmt.Errorf("audit: cursor %q: %w", q.Cursor, err)
		}
	}
	recs, err := a.Audit(ctx, aq)
	if err != nil {
		return api.AuditResponse{}, err
	}
	size := q.Limit
	if size <= 0 {
		size = store.DefaultAuditLimit
	}
	out := api.AuditResponse{Records: []api.AuditRecord{}, Cursor: q.Cursor, More: len(recs) == size}
	for _, r := range recs {
		out.Records = append(out.Records, agent.AuditAPI(r))
	}
	if len(recs) > 0 {
		out.Cursor = strconv.FormatInt(recs[len(recs)-1].Seq, 10)
	}
	return out, nil
}

// auditTime parses a time flag: RFC 3339, or a duration back from now.
func auditTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a duration", s)
	}
	return t, nil
}

// auditPrinter prints records as a table or as JSON lines.
type auditPrinter struct {
	w      io.Writer
	json   bool
	header bool // the table's header was printed
}

func (p *auditPrinter) print(recs []api.AuditRecord, sayEmpty bool, agentName string) error {
	if sayEmpty && !p.json {
		_, err := fmt.Fprintf(p.w, "agent %s has no audit records\n", agentName)
		return err
	}
	if p.json {
		for _, r := range recs {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if _, err := p.w.Write(terminalSafe(append(b, '\n'))); err != nil {
				return err
			}
		}
		return nil
	}
	if len(recs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	if !p.header {
		fmt.Fprintln(tw, "TIME\tDECISION\tSERVER/TOOL\tCALLER\tBY\tOUTCOME\tMS\tAPPROVAL\tREASON")
		p.header = true
	}
	for _, r := range recs {
		target := r.Server
		if r.Tool != "" {
			target += "/" + r.Tool
		}
		outcome := r.Outcome
		if r.ErrorClass != "" {
			outcome += " (" + r.ErrorClass + ")"
		}
		ms := ""
		if r.DurationMS > 0 {
			ms = strconv.FormatFloat(r.DurationMS, 'f', 1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.UTC().Format(time.RFC3339Nano), r.Decision, oneLine(target),
			oneLine(r.Caller), dash(oneLine(r.DecidedBy)), dash(outcome), dash(ms), dash(r.Approval), dash(oneLine(shorten(r.Reason, 80))))
	}
	return tw.Flush()
}

// dash shows an empty column as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
