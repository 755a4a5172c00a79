package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

// prometheusBin finds Prometheus's server (Debian package prometheus, which
// scripts/install-test-deps installs): $PATH, else /usr/bin/prometheus. When
// it is missing the test is skipped, or failed with AGENTMCP_REQUIRE_PEERS=1.
func prometheusBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/prometheus"); err == nil {
		return "/usr/bin/prometheus"
	}
	msg := "prometheus not found (Debian package prometheus; scripts/install-test-deps installs it)"
	if os.Getenv(peers.EnvRequire) == "1" {
		t.Fatalf("%s; failing because %s=1", msg, peers.EnvRequire)
	}
	t.Skip(msg)
	return ""
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestPrometheusScrapesServe: a real Prometheus, started on a loopback port
// with a generated configuration (bearer token, 1 s scrape interval), scrapes
// serve's /metrics; its HTTP API then returns, for the server the test
// called n times, the call counter and the duration histogram with count n.
func TestPrometheusScrapesServe(t *testing.T) {
	bin := prometheusBin(t)
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	_, hs := serve(t, mcptest.Stateful)
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "a.db"), "--token", "tok-prom")
	runCmd(t, "add", "s", hs.URL, "--id", "s", "--server", s.base, "--token", "tok-prom").mustSucceed(t)
	const n = 3
	for i := range n {
		runCmd(t, "call", "s", "echo", "--args", fmt.Sprintf(`{"text":"hi %d"}`, i), "--server", s.base, "--token", "tok-prom").mustSucceed(t)
	}
	// One failing call (a tool error), counted apart by its error.type.
	runCmd(t, "call", "s", "fail", "--server", s.base, "--token", "tok-prom")

	dir := t.TempDir()
	target := strings.TrimPrefix(s.base, "http://")
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: agentmcp
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials: tok-prom
    static_configs:
      - targets: [%q]
`, target)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := "127.0.0.1:" + freePort(t)
	var logs strings.Builder
	cmd := exec.Command(bin, "--config.file="+cfg, "--web.listen-address="+promAddr,
		"--storage.tsdb.path="+filepath.Join(dir, "data"))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})

	// query runs a PromQL instant query and returns its one sample's
	// value, or ok false while Prometheus has no such series yet.
	query := func(ctx context.Context, q string) (float64, bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
			"http://"+promAddr+"/api/v1/query?query="+url.QueryEscape(q), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, false, nil // not listening yet
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusServiceUnavailable {
			return 0, false, nil // starting
		}
		var out struct {
			Status string
			Data   struct {
				Result []struct {
					Value [2]any
				}
			}
		}
		if err := json.Unmarshal(body, &out); err != nil || out.Status != "success" {
			return 0, false, fmt.Errorf("query %s: %s %s", q, resp.Status, body)
		}
		if len(out.Data.Result) != 1 {
			return 0, false, nil
		}
		v, err := strconv.ParseFloat(fmt.Sprint(out.Data.Result[0].Value[1]), 64)
		return v, err == nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sel := `{job="agentmcp",agentmcp_server_id="s",mcp_method_name="tools/call",gen_ai_tool_name="echo",error_type=""}`
	checks := []struct {
		q    string
		want func(float64) bool
		says string
	}{
		{`up{job="agentmcp"}`, func(v float64) bool { return v == 1 }, "1 (the scrape succeeds)"},
		{"mcp_client_operation_duration_seconds_count" + sel, func(v float64) bool { return v == n }, fmt.Sprint(n)},
		{"mcp_client_operation_duration_seconds_bucket" + strings.TrimSuffix(sel, "}") + `,le="+Inf"}`, func(v float64) bool { return v == n }, fmt.Sprint(n)},
		{"mcp_client_operation_duration_seconds_sum" + sel, func(v float64) bool { return v > 0 }, "> 0"},
		{"count(mcp_client_operation_duration_seconds_bucket" + sel + ")", func(v float64) bool { return v > 2 }, "> 2 buckets"},
		{`sum(mcp_client_operation_duration_seconds_count{job="agentmcp",agentmcp_server_id="s",mcp_method_name="tools/call",error_type!=""})`,
			func(v float64) bool { return v == 1 }, "1 (the failed call)"},
	}
	for _, c := range checks {
		var got float64
		for {
			var ok bool
			var err error
			got, ok, err = query(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("Prometheus never returned %s\nprometheus log:\n%s", c.q, logs.String())
			case err := <-exited:
				t.Fatalf("prometheus exited: %v\n%s", err, logs.String())
			case <-time.After(200 * time.Millisecond): // poll interval, not synchronisation
			}
		}
		if !c.want(got) {
			t.Errorf("%s = %v; want %s", c.q, got, c.says)
		}
	}
	// The histogram answers a quantile over the calls.
	if p, ok, err := query(ctx, `histogram_quantile(0.95, sum by (le) (mcp_client_operation_duration_seconds_bucket`+sel+`))`); err != nil || !ok || p <= 0 {
		t.Errorf("p95 of the calls: %v %v %v", p, ok, err)
	}
}
