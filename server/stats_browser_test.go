package server

import (
	"context"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
)

// TestDashboardCallStats: the dashboard shows each server's tool calls
// (calls, errors, error rate, p50, p95): calls made from the page show at
// once, calls made through the API at the next poll; a server never called
// shows none. The counts are those of mcp.client.operation.duration.
func TestDashboardCallStats(t *testing.T) {
	ctx, problems := browser(t)
	rec := oteltest.New(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a", Agent: &agent.Options{MeterProvider: rec.MeterProvider}})
	c := e.client("test", "a")
	for _, id := range []string{"busy", "idle"} {
		_, url := mcpServer(t, id)
		if _, err := c.AddMCPServer(testCtx(t), api.AddRequest{Name: id, URL: url, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	tool := func(name string) string { return `details.tool[data-server-id="busy"][data-tool="` + name + `"]` }
	row := `#call-stats tr[data-server-id="busy"]`
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v (problems: %v)", what, err, problems())
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(css(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v (problems: %v)", sel, err, problems())
		}
		return s
	}

	do("calling from the page",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(tool("echo"))),
		chromedp.WaitVisible(css(row)),
		chromedp.Click(css(tool("echo")+" > summary")),
		chromedp.SendKeys(css(tool("echo")+` form input[name="text"]`), "hi"),
		chromedp.Click(css(tool("echo")+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(tool("echo")+` .result[data-outcome="ok"]`)),
		chromedp.Click(css(tool("fail")+" > summary")),
		chromedp.Click(css(tool("fail")+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(tool("fail")+` .result[data-outcome="error"]`)),
		chromedp.WaitVisible(css(row+`[data-calls="2"][data-errors="1"]`)),
	)

	// Through the API: 6 more calls, 2 of them failing.
	for _, name := range []string{"echo", "fail", "echo", "echo", "fail", "echo"} {
		if _, err := c.CallTool(testCtx(t), "busy", name, map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	do("waiting for the next poll", chromedp.WaitVisible(css(row+`[data-calls="8"][data-errors="3"]`)))

	if got := text(row + " td.error-rate"); got != "38 %" {
		t.Errorf("error rate %q; want 38 %%", got)
	}
	latency := regexp.MustCompile(`^\d+(\.\d+)? (ms|s)$`)
	for _, q := range []string{"p50", "p95"} {
		if got := text(row + " td." + q); !latency.MatchString(got) {
			t.Errorf("%s %q; want a latency", q, got)
		}
	}
	if got := text(row + " td.total"); got != "8 calls, 3 errors" {
		t.Errorf("total %q", got)
	}
	idle := `#call-stats tr[data-server-id="idle"]`
	for _, cell := range []string{"calls", "errors", "error-rate", "p50", "p95"} {
		want := "0"
		if cell != "calls" && cell != "errors" {
			want = "–"
		}
		if got := text(idle + " td." + cell); got != want {
			t.Errorf("idle %s %q; want %q", cell, got, want)
		}
	}
	if got := text("#stats-window"); !regexp.MustCompile(`^last 5 minutes, as of `).MatchString(got) {
		t.Errorf("window note %q", got)
	}

	// The same counts as the instrument's.
	var rm metricdata.ResourceMetrics
	if err := rec.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	calls := map[string]string{"mcp.method.name": "tools/call", "agentmcp.server.id": "busy"}
	if n := oteltest.HistogramCount(rm, "mcp.client.operation.duration", calls); n != 8 {
		t.Errorf("mcp.client.operation.duration counts %d calls; the page 8", n)
	}
	calls["error.type"] = "tool_error"
	if n := oteltest.HistogramCount(rm, "mcp.client.operation.duration", calls); n != 3 {
		t.Errorf("mcp.client.operation.duration counts %d failed calls; the page 3", n)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		artifact(t, "dashboard-call-stats.png", shot)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page reported problems: %v", p)
	}
}
