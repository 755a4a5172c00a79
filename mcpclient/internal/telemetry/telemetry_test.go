package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/internal/callstats"
	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func httpSession(id string) *Session {
	return NewSession(Server{ID: func() string { return id }, Network: "tcp",
		URL: "https://user:pw@mcp.example.com/mcp?token=secret", Transport: "streamable-http"})
}

func callTool(name string, args any) mcp.Request {
	return &mcp.ServerRequest[*mcp.CallToolParams]{Params: &mcp.CallToolParams{Name: name, Arguments: args}}
}

// TestSending: a request sent is a CLIENT span named after its method and
// target, with the server's attributes (its address without userinfo or
// query), its outcome as error.type, the trace context in its _meta; the
// tool call's figures and the instrument agree.
func TestSending(t *testing.T) {
	rec := oteltest.New(t)
	tel := New(&Options{TracerProvider: rec.TracerProvider, MeterProvider: rec.MeterProvider})
	defer tel.Close()
	var calls []bool
	mw := tel.Sending(httpSession("github"), func(_ time.Time, _ time.Duration, failed bool) { calls = append(calls, failed) })

	var sentMeta mcp.Meta
	next := func(_ context.Context, method string, req mcp.Request) (mcp.Result, error) {
		sentMeta = req.GetParams().GetMeta()
		switch req.GetParams().(*mcp.CallToolParams).Name {
		case "fail":
			return &mcp.CallToolResult{IsError: true}, nil
		case "refused":
			return nil, &jsonrpc.Error{Code: -32602, Message: "bad arguments: secret"}
		}
		return &mcp.CallToolResult{}, nil
	}
	ctx, parent := rec.TracerProvider.Tracer("test").Start(context.Background(), "parent")
	for _, name := range []string{"echo", "fail", "refused"} {
		mw(next)(ctx, "tools/call", callTool(name, map[string]any{"q": "secret"}))
	}
	parent.End()
	if tp, _ := sentMeta["traceparent"].(string); tp == "" {
		t.Errorf("params._meta %v: no traceparent", sentMeta)
	}

	want := map[string]struct {
		errType string
		status  codes.Code
	}{"tools/call echo": {"", codes.Unset}, "tools/call fail": {"tool_error", codes.Error}, "tools/call refused": {"-32602", codes.Error}}
	for _, s := range rec.Spans.Ended() {
		if s.Name() == "parent" {
			continue
		}
		w, ok := want[s.Name()]
		if !ok {
			t.Errorf("unexpected span %q", s.Name())
			continue
		}
		delete(want, s.Name())
		attrs := oteltest.AttrMap(s.Attributes())
		if s.SpanKind() != trace.SpanKindClient || s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s: kind %v, parent %v; want a CLIENT child of the caller's span", s.Name(), s.SpanKind(), s.Parent().SpanID())
		}
		if !oteltest.HasAttrs(s.Attributes(), map[string]string{"mcp.method.name": "tools/call", "agentmcp.server.id": "github",
			"network.transport": "tcp", "server.address": "mcp.example.com", "server.port": "443", "agentmcp.transport": "streamable-http",
			"gen_ai.operation.name": "execute_tool"}) {
			t.Errorf("%s: attributes %v", s.Name(), attrs)
		}
		if attrs["error.type"] != w.errType || s.Status().Code != w.status {
			t.Errorf("%s: error.type %q, status %v; want %q, %v", s.Name(), attrs["error.type"], s.Status().Code, w.errType, w.status)
		}
		for k, v := range attrs {
			if k == "gen_ai.tool.call.arguments" || len(v) > 0 && (strings.Contains(v, "secret") || strings.Contains(v, "user:pw")) {
				t.Errorf("%s: %s=%q without RecordContent", s.Name(), k, v)
			}
		}
		if s.Status().Description != "" && strings.Contains(s.Status().Description, "secret") {
			t.Errorf("%s: status %q quotes the server's message without RecordContent", s.Name(), s.Status().Description)
		}
	}
	if len(want) > 0 {
		t.Errorf("spans missing: %v", want)
	}
	if fmt.Sprint(calls) != "[false true true]" {
		t.Errorf("tool calls seen as failed: %v; want [false true true]", calls)
	}
	var rm metricdata.ResourceMetrics
	if err := rec.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if n := oteltest.HistogramCount(rm, "mcp.client.operation.duration", map[string]string{"gen_ai.tool.name": "fail", "error.type": "tool_error"}); n != 1 {
		t.Errorf("operation duration of the failed call: %d points, want 1", n)
	}
}

// TestReceiving: a request from the server is a SERVER span whose parent
// is the context in its _meta, linked to the call it arrived during.
func TestReceiving(t *testing.T) {
	rec := oteltest.New(t)
	tel := New(&Options{TracerProvider: rec.TracerProvider, MeterProvider: rec.MeterProvider})
	defer tel.Close()
	tracer := rec.TracerProvider.Tracer("test")
	_, remote := tracer.Start(context.Background(), "server side")
	remote.End()
	p := &mcp.ElicitParams{Message: "name?"}
	tel.inject(trace.ContextWithSpan(context.Background(), remote), p)
	callCtx, call := tracer.Start(context.Background(), "call")
	defer call.End()

	h := tel.Receiving(httpSession("s"))(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return nil, errors.New("declined")
	})
	h(callCtx, "elicitation/create", &mcp.ElicitRequest{Params: p})
	h(callCtx, "notifications/message", &mcp.ElicitRequest{Params: p}) // no span

	var got []string
	for _, s := range rec.Spans.Ended() {
		if s.SpanKind() != trace.SpanKindServer {
			continue
		}
		got = append(got, s.Name())
		if s.Parent().SpanID() != remote.SpanContext().SpanID() {
			t.Errorf("parent %v; want the span in _meta %v", s.Parent().SpanID(), remote.SpanContext().SpanID())
		}
		if len(s.Links()) != 1 || s.Links()[0].SpanContext.SpanID() != call.SpanContext().SpanID() {
			t.Errorf("links %v; want the call's span", s.Links())
		}
		if et := oteltest.AttrMap(s.Attributes())["error.type"]; et != "_OTHER" {
			t.Errorf("error.type %q, want _OTHER", et)
		}
	}
	if fmt.Sprint(got) != "[elicitation/create]" {
		t.Errorf("SERVER spans %v; want [elicitation/create]", got)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return false }

var _ net.Error = timeoutErr{}

func TestErrorType(t *testing.T) {
	errMine := errors.New("mine")
	tel := New(&Options{ErrorType: func(err error) string {
		if errors.Is(err, errMine) {
			return "mine"
		}
		return ""
	}})
	defer tel.Close()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"http", fmt.Errorf("x: %w", &transport.HTTPError{StatusCode: 503}), "503"},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), "timeout"},
		{"cancelled", context.Canceled, "cancelled"},
		{"own class", fmt.Errorf("x: %w", errMine), "mine"},
		{"cancelled before own class", fmt.Errorf("%w: %w", errMine, context.Canceled), "cancelled"},
		{"unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, "unreachable"},
		{"net timeout", fmt.Errorf("read: %w", timeoutErr{}), "timeout"},
		{"other", errors.New("boom"), "_OTHER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tel.ErrorType(tt.err); got != tt.want {
				t.Errorf("ErrorType(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestServerHostPort(t *testing.T) {
	tests := []struct {
		url  string
		host string
		port int
	}{
		{"https://user:pw@example.com/mcp?token=x", "example.com", 443},
		{"http://example.com/mcp", "example.com", 80},
		{"http://127.0.0.1:8080/mcp", "127.0.0.1", 8080},
		{"http://[::1]:9/mcp", "::1", 9},
		{"not a url", "", 0},
	}
	for _, tt := range tests {
		if host, port := serverHostPort(tt.url); host != tt.host || port != tt.port {
			t.Errorf("serverHostPort(%q) = %q, %d; want %q, %d", tt.url, host, port, tt.host, tt.port)
		}
	}
}

// TestGauges: the gauges report what Options.Gauges counts, until Close.
func TestGauges(t *testing.T) {
	rec := oteltest.New(t)
	calls := 0
	tel := New(&Options{MeterProvider: rec.MeterProvider, Gauges: func() (map[string]int64, int64) {
		calls++
		return map[string]int64{"ready": 2, "failed": 1}, 3
	}})
	var rm metricdata.ResourceMetrics
	if err := rec.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if n := oteltest.IntValue(rm, "agentmcp.client.servers", map[string]string{"agentmcp.server.state": "ready"}); n != 2 {
		t.Errorf("ready servers %d, want 2", n)
	}
	if n := oteltest.IntValue(rm, "agentmcp.client.input.pending", nil); n != 3 {
		t.Errorf("pending input %d, want 3", n)
	}
	tel.Close()
	if err := rec.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("Gauges called %d times; want once (not after Close)", calls)
	}
}

// BenchmarkTelemetryMiddleware measures what the per-request telemetry
// middleware adds to a tool call with the default providers (OpenTelemetry's
// global ones, no-op unless a program sets them), with a server's call
// figures recorded as the Manager records them: "noop" runs a call through
// it, "bare" the same call without it. agentmcp-bench reads the difference
// against a real call's CPU (telemetry_noop_cpu_ratio_derived): a ratio the
// calls' own noise on a shared machine cannot hide or fake.
func BenchmarkTelemetryMiddleware(b *testing.B) {
	tel := New(nil)
	defer tel.Close()
	var stats callstats.Window
	ctx := context.Background()
	result := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return result, nil }
	req := callTool("echo", nil)
	for _, bc := range []struct {
		name    string
		handler mcp.MethodHandler
	}{{"bare", next}, {"noop", tel.Sending(httpSession("s"), stats.Record)(next)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.handler(ctx, "tools/call", req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
