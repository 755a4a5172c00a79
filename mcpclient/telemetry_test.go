package mcpclient_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/agentmcp/agentmcp/internal/benchopt"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
)

// otelHarness is an SDK tracer and meter provider with in-memory exporters.
type otelHarness struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newOtel(t *testing.T) *otelHarness {
	r := oteltest.New(t)
	return &otelHarness{spans: r.Spans, reader: r.Reader, tp: r.TracerProvider, mp: r.MeterProvider}
}

var (
	attrMap        = oteltest.AttrMap
	histogramCount = oteltest.HistogramCount
	gaugeValue     = oteltest.IntValue
)

func (h *otelHarness) options() *mcpclient.Options {
	return &mcpclient.Options{TracerProvider: h.tp, MeterProvider: h.mp}
}

// named returns the ended spans named name.
func (h *otelHarness) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func (h *otelHarness) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := h.named(name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q; want 1; spans: %s", len(got), name, spanNames(h.spans.Ended()))
	}
	return got[0]
}

func spanNames(spans []sdktrace.ReadOnlySpan) string {
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	return strings.Join(names, ", ")
}

// TestTelemetryToolCall: a tool call under the caller's span is a CLIENT
// span named "tools/call echo" with the conventions' attributes, in both
// protocol eras and over every transport; the handshake is in an
// agentmcp.connect span, and mcp.client.operation.duration counts it.
func TestTelemetryToolCall(t *testing.T) {
	cases := []struct {
		name      string
		opts      func(t *testing.T) mcpclient.ServerOptions
		version   string // "" means any
		transport string
		handshake string
		session   bool
	}{
		{"streamable-legacy", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("a").Server }).URL}
		}, "2025-11-25", "tcp", "initialize", true},
		{"streamable-2026", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return mcptest.NewServer("b").Server }).URL}
		}, "2026-07-28", "tcp", "server/discover", false},
		{"sse", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: mcptest.Serve(t, mcptest.SSE, func() *mcp.Server { return mcptest.NewServer("c").Server }).URL,
				Transport: mcpclient.TransportOptions{Type: mcpclient.TransportSSE}}
		}, "", "tcp", "initialize", false},
		{"stdio", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{Path: os.Args[0],
				Env: []string{"AGENTMCP_TEST_STDIO_SERVER=serve"}}}
		}, "", "pipe", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOtel(t)
			m := newManager(t, o.options())
			ctx, parent := o.tp.Tracer("test").Start(testCtx(t), "agent turn")
			so := tc.opts(t)
			if _, err := m.RegisterServer(ctx, "srv", so); err != nil {
				t.Fatal(err)
			}
			if res, err := m.ConnectToServer(ctx, "srv"); err != nil || res.State != mcpclient.StateConnected {
				t.Fatalf("connect: %+v %v", res, err)
			}
			if _, err := m.CallTool(ctx, "srv", "echo", map[string]any{"text": "hi"}, nil); err != nil {
				t.Fatal(err)
			}
			parent.End()

			call := o.one(t, "tools/call echo")
			if call.SpanKind() != trace.SpanKindClient {
				t.Errorf("kind %v; want client", call.SpanKind())
			}
			if call.Parent().SpanID() != parent.SpanContext().SpanID() || call.SpanContext().TraceID() != parent.SpanContext().TraceID() {
				t.Errorf("tools/call is not a child of the caller's span")
			}
			a := attrMap(call.Attributes())
			want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo",
				"gen_ai.operation.name": "execute_tool", "network.transport": tc.transport, "agentmcp.server.id": "srv"}
			if tc.version != "" {
				want["mcp.protocol.version"] = tc.version
			}
			if tc.transport == "tcp" {
				want["server.address"] = "127.0.0.1"
				want["network.protocol.name"] = "http"
			}
			for k, v := range want {
				if a[k] != v {
					t.Errorf("%s = %q; want %q (all: %v)", k, a[k], v, a)
				}
			}
			if a["mcp.protocol.version"] == "" {
				t.Errorf("no mcp.protocol.version: %v", a)
			}
			// go-sdk numbers its requests; the Manager's direct requests
			// (directMiddleware) are agentmcp-N.
			if _, err := strconv.Atoi(strings.TrimPrefix(a["jsonrpc.request.id"], "agentmcp-")); err != nil {
				t.Errorf("jsonrpc.request.id = %q; want a number or agentmcp-N", a["jsonrpc.request.id"])
			}
			if _, ok := a["mcp.session.id"]; ok != tc.session {
				t.Errorf("mcp.session.id present %v; want %v (%v)", ok, tc.session, a)
			}
			if _, ok := a["error.type"]; ok || call.Status().Code == codes.Error {
				t.Errorf("a successful call has error status: %v %v", a, call.Status())
			}

			// The handshake is under agentmcp.connect, under the caller.
			connect := o.one(t, "agentmcp.connect")
			if connect.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("agentmcp.connect is not a child of the caller's span")
			}
			if tc.handshake != "" {
				hs := o.one(t, tc.handshake)
				if hs.Parent().SpanID() != connect.SpanContext().SpanID() || hs.SpanKind() != trace.SpanKindClient {
					t.Errorf("%s: parent %v kind %v; want a client child of agentmcp.connect", tc.handshake, hs.Parent().SpanID(), hs.SpanKind())
				}
			}

			var rm metricdata.ResourceMetrics
			if err := o.reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			if n := histogramCount(rm, "mcp.client.operation.duration", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "agentmcp.server.id": "srv"}); n != 1 {
				t.Errorf("mcp.client.operation.duration count for tools/call echo = %d; want 1", n)
			}
			if n := gaugeValue(rm, "agentmcp.client.servers", map[string]string{"agentmcp.server.state": "connected"}); n != 1 {
				t.Errorf("agentmcp.client.servers{connected} = %d; want 1", n)
			}
			if tc.transport != "inproc" {
				for _, dir := range []string{"transmit", "receive"} {
					// At least the call's request and answer, which hold "hi".
					if n := gaugeValue(rm, "agentmcp.client.io", map[string]string{"agentmcp.server.id": "srv", "network.io.direction": dir}); n < 40 {
						t.Errorf("agentmcp.client.io{%s} = %d bytes", dir, n)
					}
				}
			}
		})
	}
}

// TestTelemetryErrors: a tool result with isError and a JSON-RPC error
// both set error status and error.type, on the span and the duration.
func TestTelemetryErrors(t *testing.T) {
	o := newOtel(t)
	m := newManager(t, o.options())
	srv := mcptest.NewServer("e")
	connectReady(t, m, "srv", mcpclient.ServerOptions{InProcess: inProcess(srv)})
	ctx := testCtx(t)
	if res, err := m.CallTool(ctx, "srv", "fail", nil, nil); err != nil || !res.IsError {
		t.Fatalf("fail: %+v %v", res, err)
	}
	if _, err := m.GetPrompt(ctx, "srv", "nope", nil); err == nil {
		t.Fatal("an unknown prompt succeeded")
	}
	fail := o.one(t, "tools/call fail")
	if a := attrMap(fail.Attributes()); a["error.type"] != "tool_error" || fail.Status().Code != codes.Error {
		t.Errorf("tool error: error.type %q status %v", a["error.type"], fail.Status())
	}
	nope := o.one(t, "prompts/get nope")
	a := attrMap(nope.Attributes())
	if nope.Status().Code != codes.Error || a["error.type"] == "" || a["error.type"] != a["rpc.response.status_code"] {
		t.Errorf("JSON-RPC error: attributes %v status %v", a, nope.Status())
	}
	if _, err := strconv.Atoi(a["error.type"]); err != nil {
		t.Errorf("error.type %q is not the JSON-RPC code", a["error.type"])
	}
	if a["network.transport"] != "inproc" {
		t.Errorf("network.transport %q; want inproc", a["network.transport"])
	}
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if n := histogramCount(rm, "mcp.client.operation.duration", map[string]string{"gen_ai.tool.name": "fail", "error.type": "tool_error"}); n != 1 {
		t.Errorf("duration of the failed call with error.type: count %d; want 1", n)
	}
}

// TestTelemetryTraceContext: the trace context of a call arrives at a
// go-sdk server in params._meta, and the server span started from it
// joins the client's trace as a child of the tools/call span.
func TestTelemetryTraceContext(t *testing.T) {
	o := newOtel(t)
	server := tracetest.NewSpanRecorder()
	stp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(server))
	defer stp.Shutdown(context.Background())
	metas := make(chan map[string]any, 4)
	newServer := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "traced", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "traced"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			meta := req.Params.GetMeta()
			metas <- meta
			carrier := propagation.MapCarrier{}
			for k, v := range meta {
				if s, ok := v.(string); ok {
					carrier[k] = s
				}
			}
			ctx = propagation.TraceContext{}.Extract(ctx, carrier)
			_, span := stp.Tracer("server").Start(ctx, "tools/call traced", trace.WithSpanKind(trace.SpanKindServer))
			span.End()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
		return s
	}
	for _, mode := range []mcptest.Mode{mcptest.Stateful, mcptest.Stateless} {
		hs := mcptest.Serve(t, mode, newServer)
		m := newManager(t, o.options())
		id := fmt.Sprint("srv", mode)
		connectReady(t, m, id, mcpclient.ServerOptions{URL: hs.URL})
		ctx, parent := o.tp.Tracer("test").Start(testCtx(t), "turn")
		if _, err := m.CallTool(ctx, id, "traced", nil, nil); err != nil {
			t.Fatal(err)
		}
		parent.End()
		meta := <-metas
		if tp, _ := meta["traceparent"].(string); !strings.HasPrefix(tp, "00-"+parent.SpanContext().TraceID().String()) {
			t.Errorf("mode %v: _meta.traceparent = %q; want the caller's trace", mode, tp)
		}
	}
	calls := o.named("tools/call traced")
	got := server.Ended()
	if len(calls) != 2 || len(got) != 2 {
		t.Fatalf("%d client and %d server spans; want 2 and 2", len(calls), len(got))
	}
	for i := range got {
		if got[i].Parent().SpanID() != calls[i].SpanContext().SpanID() || got[i].SpanContext().TraceID() != calls[i].SpanContext().TraceID() {
			t.Errorf("server span %d is not a child of the client's tools/call span", i)
		}
		if !got[i].Parent().IsRemote() {
			t.Errorf("server span %d: parent not remote", i)
		}
	}
}

// TestTelemetryNoSecrets plants secrets where a careless instrumentation
// would pick them up (a custom header value, a bearer token, the URL's
// query, tool arguments and results, a resource URI's query) and fails if
// any exported span or metric attribute, span name, event or status holds
// one. With RecordContent the arguments are recorded: the scan can see
// them.
func TestTelemetryNoSecrets(t *testing.T) {
	const secret = "S3CRET"
	h := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	var (
		mu   sync.Mutex
		seen string
	)
	front := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Get("X-Api-Key") + " " + r.Header.Get("Authorization") + " " + r.URL.RawQuery
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	for _, content := range []bool{false, true} {
		o := newOtel(t)
		opts := o.options()
		opts.RecordContent = content
		m := newManager(t, opts)
		connectReady(t, m, "srv", mcpclient.ServerOptions{
			URL:       front.URL + "?apikey=" + secret + "q",
			Auth:      staticToken(secret + "bearer"),
			Transport: mcpclient.TransportOptions{Headers: http.Header{"X-Api-Key": {secret + "header"}}},
		})
		ctx := testCtx(t)
		if _, err := m.CallTool(ctx, "srv", "echo", map[string]any{"text": secret + "arg"}, nil); err != nil {
			t.Fatal(err)
		}
		m.ReadResource(ctx, "srv", "test://items/1?token="+secret+"res")
		mu.Lock()
		got := seen
		mu.Unlock()
		if !strings.Contains(got, secret+"header") || !strings.Contains(got, secret+"bearer") || !strings.Contains(got, secret+"q") {
			t.Fatalf("the server did not get the planted header and token: %q", got)
		}
		found := scanTelemetry(t, o, secret)
		if !content && len(found) > 0 {
			t.Errorf("secrets in telemetry: %s", strings.Join(found, "; "))
		}
		if content && !slicesContain(found, secret+"arg") {
			t.Errorf("with RecordContent, the tool arguments were not recorded (found %v)", found)
		}
	}
}

func slicesContain(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// scanTelemetry returns every exported string that contains secret.
func scanTelemetry(t *testing.T, o *otelHarness, secret string) []string {
	var found []string
	check := func(where, s string) {
		if strings.Contains(s, secret) {
			found = append(found, where+": "+s)
		}
	}
	for _, s := range o.spans.Ended() {
		check("span name", s.Name())
		check("status", s.Status().Description)
		for _, kv := range s.Attributes() {
			check(s.Name()+" "+string(kv.Key), kv.Value.String())
		}
		for _, ev := range s.Events() {
			check("event", ev.Name)
			for _, kv := range ev.Attributes {
				check("event "+string(kv.Key), kv.Value.String())
			}
		}
		for _, l := range s.Links() {
			for _, kv := range l.Attributes {
				check("link "+string(kv.Key), kv.Value.String())
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			var sets []attribute.Set
			switch d := mt.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					sets = append(sets, dp.Attributes)
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					sets = append(sets, dp.Attributes)
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					sets = append(sets, dp.Attributes)
				}
			}
			for _, set := range sets {
				for _, kv := range set.ToSlice() {
					check(mt.Name+" "+string(kv.Key), kv.Value.String())
				}
			}
		}
	}
	return found
}

// staticToken is an AuthProvider with a fixed token.
type staticToken string

func (s staticToken) Token(context.Context) (string, error) { return string(s), nil }
func (s staticToken) Authorize(context.Context, *mcpclient.AuthChallenge) (string, error) {
	return "", fmt.Errorf("no authorisation")
}

// TestTelemetryRenewal: a session the server forgot is renewed in an
// agentmcp.session.renew span, counted by agentmcp.client.session.renewals
// and agentmcp.client.connect.attempts; the old session's duration is
// recorded when it closes, and the new one's at CloseConnection.
func TestTelemetryRenewal(t *testing.T) {
	o := newOtel(t)
	m := newManager(t, o.options())
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("r").Server })
	connectReady(t, m, "srv", mcpclient.ServerOptions{URL: hs.URL})
	if n := hs.ExpireSessions(); n != 1 {
		t.Fatalf("expired %d sessions", n)
	}
	ctx := testCtx(t)
	if _, err := m.CallTool(ctx, "srv", "echo", map[string]any{"text": "again"}, nil); err != nil {
		t.Fatal(err)
	}
	renew := o.one(t, "agentmcp.session.renew")
	if renew.Status().Code == codes.Error || attrMap(renew.Attributes())["agentmcp.server.id"] != "srv" {
		t.Errorf("renewal span: status %v attributes %v", renew.Status(), renew.Attributes())
	}
	if len(o.named("agentmcp.connect")) != 2 {
		t.Errorf("%d agentmcp.connect spans; want 2 (the first and the renewal's)", len(o.named("agentmcp.connect")))
	}
	if err := m.CloseConnection(ctx, "srv"); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	success := map[string]string{"agentmcp.server.id": "srv", "agentmcp.outcome": "success"}
	if n := gaugeValue(rm, "agentmcp.client.session.renewals", success); n != 1 {
		t.Errorf("agentmcp.client.session.renewals{success} = %d; want 1", n)
	}
	if n := gaugeValue(rm, "agentmcp.client.connect.attempts", success); n != 1 {
		t.Errorf("agentmcp.client.connect.attempts{success} = %d; want 1", n)
	}
	if n := histogramCount(rm, "mcp.client.session.duration", map[string]string{"agentmcp.server.id": "srv", "mcp.protocol.version": "2025-11-25"}); n != 2 {
		t.Errorf("mcp.client.session.duration count %d; want 2 (the expired session and its successor)", n)
	}
	if n := gaugeValue(rm, "agentmcp.client.servers", map[string]string{"agentmcp.server.state": "not-connected"}); n != 1 {
		t.Errorf("agentmcp.client.servers{not-connected} = %d; want 1", n)
	}
}

// TestTelemetryServerRequest: a server's elicitation/create, sent during a
// call with the server's trace context in its _meta, is a SERVER span
// whose parent is the server's span; the wait for the user's answer is an
// agentmcp.elicitation.wait span under it.
func TestTelemetryServerRequest(t *testing.T) {
	o := newOtel(t)
	server := tracetest.NewSpanRecorder()
	stp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(server))
	defer stp.Shutdown(context.Background())
	prop := propagation.TraceContext{}
	newServer := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			carrier := propagation.MapCarrier{}
			for k, v := range req.Params.GetMeta() {
				if s, ok := v.(string); ok {
					carrier[k] = s
				}
			}
			ctx, span := stp.Tracer("server").Start(prop.Extract(ctx, carrier), "tools/call ask", trace.WithSpanKind(trace.SpanKindServer))
			defer span.End()
			out := propagation.MapCarrier{}
			prop.Inject(ctx, out)
			meta := mcp.Meta{}
			for k, v := range out {
				meta[k] = v
			}
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Meta: meta, Mode: "form", Message: "Your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Action}}}, nil, nil
		})
		return s
	}
	hs := mcptest.Serve(t, mcptest.Stateful, newServer)
	m := newManager(t, o.options())
	m.ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}})
	connectReady(t, m, "srv", mcpclient.ServerOptions{URL: hs.URL})
	ctx, parent := o.tp.Tracer("test").Start(testCtx(t), "turn")
	res, err := m.CallTool(ctx, "srv", "ask", nil, nil)
	if err != nil || textOf(t, res) != "accept" {
		t.Fatalf("ask: %v %v", res, err)
	}
	parent.End()

	srvSpans := server.Ended()
	if len(srvSpans) != 1 {
		t.Fatalf("%d server spans", len(srvSpans))
	}
	call := o.one(t, "tools/call ask")
	if srvSpans[0].Parent().SpanID() != call.SpanContext().SpanID() {
		t.Error("the server's span is not a child of the client's tools/call")
	}
	ec := o.one(t, "elicitation/create")
	if ec.SpanKind() != trace.SpanKindServer || ec.Parent().SpanID() != srvSpans[0].SpanContext().SpanID() || !ec.Parent().IsRemote() {
		t.Errorf("elicitation/create: kind %v, parent %v (remote %v); want a SERVER span under the server's %v",
			ec.SpanKind(), ec.Parent().SpanID(), ec.Parent().IsRemote(), srvSpans[0].SpanContext().SpanID())
	}
	if a := attrMap(ec.Attributes()); a["mcp.method.name"] != "elicitation/create" || a["agentmcp.server.id"] != "srv" {
		t.Errorf("elicitation/create attributes %v", a)
	}
	wait := o.one(t, "agentmcp.elicitation.wait")
	a := attrMap(wait.Attributes())
	if wait.Parent().SpanID() != ec.SpanContext().SpanID() || a["agentmcp.elicitation.mode"] != "form" || a["agentmcp.elicitation.action"] != "accept" {
		t.Errorf("agentmcp.elicitation.wait: parent %v, attributes %v", wait.Parent().SpanID(), a)
	}
}

// TestTelemetryGlobal: a Manager with no providers uses the global ones.
// Before the application sets one, requests start no span but still carry
// the caller's trace context (and leave the caller's span alone); once it
// sets one, the same Manager's requests are spans of it, and so are those
// of a Manager created afterwards.
func TestTelemetryGlobal(t *testing.T) {
	metas := make(chan map[string]any, 4)
	newServer := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "g", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "meta"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			metas <- req.Params.GetMeta()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
		return s
	}
	hs := mcptest.Serve(t, mcptest.Stateless, newServer)
	// The global provider is set once per process: a provider whose
	// current SDK provider each run swaps in (none to start with).
	globalProvider.cur.Store(&noopProvider)
	t.Cleanup(func() { globalProvider.cur.Store(&noopProvider) })
	m := newManager(t, nil)
	connectReady(t, m, "global", mcpclient.ServerOptions{URL: hs.URL})

	own := newOtel(t) // the application's own provider, not the global one
	ctx, parent := own.tp.Tracer("app").Start(testCtx(t), "turn")
	if _, err := m.CallTool(ctx, "global", "meta", nil, nil); err != nil {
		t.Fatal(err)
	}
	parent.End()
	if tp, _ := (<-metas)["traceparent"].(string); !strings.Contains(tp, parent.SpanContext().SpanID().String()) {
		t.Errorf("traceparent %q; want the caller's span %v", tp, parent.SpanContext().SpanID())
	}
	if a := attrMap(own.one(t, "turn").Attributes()); len(a) != 0 {
		t.Errorf("the caller's span got attributes %v", a)
	}

	global := newOtel(t)
	var tp trace.TracerProvider = global.tp
	globalProvider.cur.Store(&tp)
	setGlobal.Do(func() { otel.SetTracerProvider(globalProvider) })
	m2 := newManager(t, nil) // created after the application set it
	connectReady(t, m2, "global2", mcpclient.ServerOptions{URL: hs.URL})
	if _, err := m.CallTool(testCtx(t), "global", "meta", nil, nil); err != nil {
		t.Fatal(err)
	}
	<-metas
	if _, err := m2.CallTool(testCtx(t), "global2", "meta", nil, nil); err != nil {
		t.Fatal(err)
	}
	<-metas
	var ids []string
	for _, s := range global.named("tools/call meta") {
		ids = append(ids, attrMap(s.Attributes())["agentmcp.server.id"])
	}
	if strings.Join(ids, ",") != "global,global2" {
		t.Errorf("tools/call meta spans of servers %v; want global and global2", ids)
	}
}

var (
	setGlobal      sync.Once
	globalProvider                      = &swapProvider{}
	noopProvider   trace.TracerProvider = tracenoop.NewTracerProvider()
)

// swapProvider is a tracer provider whose tracers start their spans on
// the provider cur holds at the time.
type swapProvider struct {
	embedded.TracerProvider
	cur atomic.Pointer[trace.TracerProvider]
}

func (p *swapProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return swapTracer{p: p, name: name, opts: opts}
}

type swapTracer struct {
	embedded.Tracer
	p    *swapProvider
	name string
	opts []trace.TracerOption
}

func (t swapTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return (*t.p.cur.Load()).Tracer(t.name, t.opts...).Start(ctx, name, opts...)
}

// TestTelemetryNamesListed: the duration's gen_ai.tool.name and
// gen_ai.prompt.name are the names the server listed; made-up names (a
// caller's choice: each would be a series of its own, without bound) are
// all recorded as one "_OTHER". Spans keep the name.
func TestTelemetryNamesListed(t *testing.T) {
	o := newOtel(t)
	m := newManager(t, o.options())
	connectReady(t, m, "srv", mcpclient.ServerOptions{InProcess: inProcess(mcptest.NewServer("n"))})
	ctx := testCtx(t)
	if _, err := m.CallTool(ctx, "srv", "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetPrompt(ctx, "srv", "greet", map[string]string{"name": "x"}); err != nil {
		t.Fatal(err)
	}
	const madeUp = 50
	for i := range madeUp {
		m.GetPrompt(ctx, "srv", fmt.Sprintf("made-up-%d", i), nil)
		m.CallTool(ctx, "srv", fmt.Sprintf("made-up-%d", i), nil, nil)
	}
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			h, ok := mt.Data.(metricdata.Histogram[float64])
			if mt.Name != "mcp.client.operation.duration" || !ok {
				continue
			}
			for _, dp := range h.DataPoints {
				for _, key := range []string{"gen_ai.tool.name", "gen_ai.prompt.name"} {
					if v, ok := dp.Attributes.Value(attribute.Key(key)); ok {
						names[key+"="+v.AsString()] += int(dp.Count)
					}
				}
			}
		}
	}
	want := map[string]int{
		"gen_ai.tool.name=echo": 1, "gen_ai.prompt.name=greet": 1,
		"gen_ai.tool.name=_OTHER": madeUp, "gen_ai.prompt.name=_OTHER": madeUp,
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names in mcp.client.operation.duration (-want +got):\n%s", diff)
	}
	if len(o.named("prompts/get made-up-7")) != 1 {
		t.Error("no span named after the made-up prompt")
	}
}

// TestBenchNoRequestTelemetry: Options.Bench.NoRequestTelemetry, which the
// benchmark sets for its "telemetry off" client, builds a Manager without
// the per-request spans; a Manager built without it, at the same time,
// keeps them (the setting is the Manager's, not the process's).
func TestBenchNoRequestTelemetry(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	for _, tt := range []struct {
		name  string
		bench *benchopt.Options
		spans int
	}{
		{"off", &benchopt.Options{NoRequestTelemetry: true}, 0},
		{"default", nil, 1},
		{"zero", &benchopt.Options{}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOtel(t)
			opts := o.options()
			opts.Bench = tt.bench
			m := newManager(t, opts)
			connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
			if _, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "hi"}, nil); err != nil {
				t.Fatal(err)
			}
			if got := len(o.named("tools/call echo")); got != tt.spans {
				t.Errorf("%d tools/call spans, want %d; spans: %s", got, tt.spans, spanNames(o.spans.Ended()))
			}
		})
	}
}
