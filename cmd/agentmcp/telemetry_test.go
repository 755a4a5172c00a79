package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	metricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// otlpReceiver is an OTLP/HTTP receiver: it decodes the protobuf requests
// posted to /v1/traces and /v1/metrics and keeps the span and metric names.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   map[string]int
	metrics map[string]bool
}

func newOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	rc := &otlpReceiver{spans: map[string]int{}, metrics: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		switch r.URL.Path {
		case "/v1/traces":
			var req tracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						rc.spans[s.Name]++
					}
				}
			}
			out, _ := proto.Marshal(&tracepb.ExportTraceServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write(out)
		case "/v1/metrics":
			var req metricspb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						rc.metrics[m.Name] = true
					}
				}
			}
			out, _ := proto.Marshal(&metricspb.ExportMetricsServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Write(out)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

// TestServeTelemetry: serve answers GET /metrics in Prometheus text format,
// behind its token, with the call counted by mcp.client.operation.duration
// for the server called; with OTEL_EXPORTER_OTLP_ENDPOINT set, its spans and
// metrics reach an OTLP/HTTP receiver; --log-format json logs JSON lines.
func TestServeTelemetry(t *testing.T) {
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	rc, endpoint := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	_, hs := serve(t, mcptest.Stateful)
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "a.db"), "--token", "tok-7", "--log-format", "json", "--log-level", "debug")
	runCmd(t, "add", "s", hs.URL, "--id", "s", "--server", s.base, "--token", "tok-7").mustSucceed(t)
	runCmd(t, "call", "s", "echo", "--args", `{"text":"hi"}`, "--server", s.base, "--token", "tok-7").mustSucceed(t)

	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %s", resp.Status)
	}
	req, _ := http.NewRequest(http.MethodGet, s.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer tok-7")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	count := regexp.MustCompile(`(?m)^mcp_client_operation_duration_seconds_count\{([^}]*)\} (\d+)$`)
	found := false
	for _, m := range count.FindAllStringSubmatch(string(body), -1) {
		if strings.Contains(m[1], `mcp_method_name="tools/call"`) && strings.Contains(m[1], `gen_ai_tool_name="echo"`) &&
			strings.Contains(m[1], `agentmcp_server_id="s"`) {
			found = true
			if m[2] != "1" {
				t.Errorf("tools/call echo counted %s times; want 1", m[2])
			}
		}
	}
	if !found {
		t.Errorf("no mcp_client_operation_duration_seconds_count for tools/call echo on s:\n%s", body)
	}
	if !regexp.MustCompile(`(?m)^agentmcp_client_servers\{[^}]*agentmcp_server_state="ready"[^}]*\} 1$`).Match(body) {
		t.Errorf("no agentmcp_client_servers{ready} 1:\n%s", body)
	}

	stopped := s.stop()
	if stopped.err != nil {
		t.Fatalf("stop: %+v", stopped)
	}
	rc.mu.Lock()
	spans, metrics := rc.spans, rc.metrics
	rc.mu.Unlock()
	for _, name := range []string{"tools/call echo", "initialize", "agentmcp.connect"} {
		if spans[name] == 0 {
			t.Errorf("the OTLP receiver got no span %q (got %v)", name, spans)
		}
	}
	if !metrics["mcp.client.operation.duration"] {
		t.Errorf("the OTLP receiver got no mcp.client.operation.duration (got %v)", metrics)
	}
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(stopped.stderr))
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil || v["msg"] == nil || v["level"] == nil {
			t.Errorf("not a JSON log line: %q", sc.Text())
		}
		lines++
	}
	if lines == 0 {
		t.Error("no log lines")
	}
	if strings.Contains(stopped.stderr, "tok-7") {
		t.Error("the token was logged")
	}
}

// TestServeLogFlags: bad --log-format and --log-level values are usage
// errors.
func TestServeLogFlags(t *testing.T) {
	for _, args := range [][]string{{"--log-format", "xml"}, {"--log-level", "loud"}} {
		r := runCmd(t, append([]string{"serve", "--db", filepath.Join(t.TempDir(), "a.db")}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, args[0]) {
			t.Errorf("serve %v: code %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// TestMetricsRuntime: /metrics has the Go runtime's figures (goroutines,
// memory, the GC) and the process's (resident memory, CPU), in every mode.
func TestMetricsRuntime(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "")
	ctx := context.Background()
	tel, err := newServeTelemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.shutdown(ctx)
	rr := httptest.NewRecorder()
	tel.metrics.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rr.Body.String()
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_gc_duration_seconds", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if !regexp.MustCompile(`(?m)^` + name + `[ {]`).MatchString(body) {
			t.Errorf("/metrics has no %s", name)
		}
	}
}

// TestJSONLogEscapes: --log-format json escapes what a server may put in
// a log line (bidi controls, other characters that are not printable) as
// the text format does: the JSON log holds none of them raw, and its
// values read as the text log's.
func TestJSONLogEscapes(t *testing.T) {
	const hostile = "evil\u202egnp.exe \u2066x\u2069 \u200b"
	var jsonOut, textOut strings.Builder
	for _, c := range []struct {
		format string
		w      *strings.Builder
	}{{"json", &jsonOut}, {"text", &textOut}} {
		logger, err := newLogger(c.w, c.format, "info")
		if err != nil {
			t.Fatal(err)
		}
		logger.Info("server said "+hostile, "line", hostile, "error", errors.New("failed: "+hostile))
	}
	for _, r := range []rune{'\u202e', '\u2066', '\u2069', '\u200b'} {
		if strings.ContainsRune(jsonOut.String(), r) {
			t.Errorf("the JSON log holds %U raw: %q", r, jsonOut.String())
		}
	}
	var rec map[string]string
	if err := json.Unmarshal([]byte(jsonOut.String()), &rec); err != nil {
		t.Fatal(err)
	}
	const escaped = `evil\u202egnp.exe \u2066x\u2069 \u200b`
	if rec["line"] != escaped || rec["msg"] != "server said "+escaped || rec["error"] != "failed: "+escaped {
		t.Errorf("JSON record %v; want the values escaped as %q", rec, escaped)
	}
	if !strings.Contains(textOut.String(), `line="`+escaped+`"`) {
		t.Errorf("the text log is %q; want line=%q (the JSON log's escapes are the text log's)", textOut.String(), escaped)
	}
}
