package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// runAudit measures what the audit log costs a call: sequential echo
// calls through two agents on one SQLite store and the same upstream
// server (the server process's replayed answers of its go-sdk server,
// 2026-07-28: the server's own work does not hide the client's), one with the
// audit log (the default) and one without (agent.Options.NoAudit), in
// turn in each repetition, in blocks of 5 × -seq-calls calls (so that
// the blocks span many batch windows). The audited block's time includes
// the CPU time of writing its last batch (Agent.Audit writes what is
// pending, so that no write is left to the next block), not its wait for
// the disk: the calls never wait for it.
func runAudit(ctx context.Context, c *config, srv *serverProc) (string, []figure, error) {
	dir, err := os.MkdirTemp("", "agentmcp-bench-audit-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "agents.db"), nil)
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	open := func(name string, noAudit bool) (*agent.Agent, error) {
		a, err := agent.Open(ctx, st, "bench", name, &agent.Options{NoAudit: noAudit,
			Manager: &mcpclient.Options{EndSessionsOnClose: true}})
		if err != nil {
			return nil, err
		}
		res, err := a.AddMCPServer(ctx, "up", srv.urls.Main+pathFastStateless, &agent.AddOptions{ID: "up"})
		if err != nil {
			a.Close(context.Background())
			return nil, err
		}
		if res.State != mcpclient.StateReady {
			a.Close(context.Background())
			return nil, fmt.Errorf("upstream server %s", res.State)
		}
		return a, nil
	}
	on, err := open("audited", false)
	if err != nil {
		return "", nil, err
	}
	defer on.Close(context.Background())
	off, err := open("unaudited", true)
	if err != nil {
		return "", nil, err
	}
	defer off.Close(context.Background())
	if !on.AuditEnabled() || off.AuditEnabled() {
		return "", nil, fmt.Errorf("audit: the audited agent's log is %v, the other's %v", on.AuditEnabled(), off.AuditEnabled())
	}

	const tool = "echo"
	w := workload{name: tool, tool: tool, conc: 1, n: 5 * c.seqCalls}
	callers := []*agentCaller{{a: off, id: "up"}, {a: on, id: "up"}}
	for _, cl := range callers {
		if err := warm(ctx, cl, tool, 100); err != nil {
			return "", nil, err
		}
	}
	if _, err := on.Audit(ctx, agent.AuditQuery{Limit: 1}); err != nil {
		return "", nil, err
	}
	var ratios, offPerSec, onPerSec, offCPU, onCPU []float64
	for rep := range c.reps {
		progress(c.stderr, "audit: repetition %d/%d", rep+1, c.reps)
		// In turn, one first then the other, so that neither gains from
		// its place (the heap the previous block left, the CPU's state).
		var s0, s1 sample
		var drain time.Duration
		for i := range 2 {
			if (i == 0) == (rep%2 == 0) {
				if s0, err = measure(ctx, callers[0], w); err != nil {
					return "", nil, err
				}
				continue
			}
			if s1, err = measure(ctx, callers[1], w); err != nil {
				return "", nil, err
			}
			cpu0 := processCPU()
			if _, err := on.Audit(ctx, agent.AuditQuery{Limit: 1}); err != nil { // writes what is pending
				return "", nil, err
			}
			drain = processCPU() - cpu0
		}
		perSec := float64(w.n) / (float64(w.n)/s1.perSec + drain.Seconds())
		offPerSec = append(offPerSec, s0.perSec)
		onPerSec = append(onPerSec, perSec)
		offCPU = append(offCPU, float64(s0.cpuPerCall.Microseconds()))
		onCPU = append(onCPU, float64(s1.cpuPerCall.Microseconds())+float64(drain.Microseconds())/float64(w.n))
		ratios = append(ratios, perSec/s0.perSec)
	}
	recs, err := on.Audit(ctx, agent.AuditQuery{NewestFirst: true, Limit: 1})
	if err != nil {
		return "", nil, err
	}
	if len(recs) != 1 || recs[0].Decision != store.AuditAllowed || recs[0].Outcome != store.AuditOK {
		return "", nil, fmt.Errorf("audit: the last record is %+v, want an allowed call", recs)
	}
	t := newTable("agent", "calls/s", "CPU µs/call")
	t.add("audit log off (Options.NoAudit)", fmt.Sprintf("%.0f", median(offPerSec)), fmt.Sprintf("%.1f", median(offCPU)))
	t.add("audit log on (the default)", fmt.Sprintf("%.0f", median(onPerSec)), fmt.Sprintf("%.1f", median(onCPU)))
	figs := []figure{{name: "audit_overhead_ratio_seq", value: median(ratios), goal: ">= 0.95",
		note: "sequential echo calls/s through an agent with its audit log over one without, same run and server; the median of each repetition's ratio"}}
	return "Audit log: sequential echo calls through Agent.CallTool, the audit log on and off (SQLite)\n" + t.String(), figs, nil
}
