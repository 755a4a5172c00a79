package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/internal/benchknob"
	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// This file is the Manager's OpenTelemetry instrumentation, following the
// semantic conventions for the Model Context Protocol: a CLIENT span per
// request and notification sent (named "{mcp.method.name} {target}"), W3C
// trace context in params._meta, a SERVER span per request a server sends
// (its _meta context as the parent), mcp.client.operation.duration and
// mcp.client.session.duration, and agentmcp's own spans and instruments
// (docs/OBSERVABILITY.md lists them all).
//
// With the global no-op providers (the default until the application sets
// up OpenTelemetry), a request costs a non-recording span and nothing
// else: attributes are built only for recording spans and enabled
// instruments.

// InstrumentationName is the name of the Manager's tracer and meter.
const InstrumentationName = "github.com/agentmcp/agentmcp/mcpclient"

// Attribute keys: the conventions' and agentmcp's own.
const (
	attrMethod          = attribute.Key("mcp.method.name")
	attrSessionID       = attribute.Key("mcp.session.id")
	attrProtocolVersion = attribute.Key("mcp.protocol.version")
	attrResourceURI     = attribute.Key("mcp.resource.uri")
	attrToolName        = attribute.Key("gen_ai.tool.name")
	attrPromptName      = attribute.Key("gen_ai.prompt.name")
	attrOperationName   = attribute.Key("gen_ai.operation.name")
	attrToolArguments   = attribute.Key("gen_ai.tool.call.arguments")
	attrToolResult      = attribute.Key("gen_ai.tool.call.result")
	attrRequestID       = attribute.Key("jsonrpc.request.id")
	attrStatusCode      = attribute.Key("rpc.response.status_code")
	attrErrorType       = attribute.Key("error.type")
	attrTransport       = attribute.Key("network.transport")
	attrProtocolName    = attribute.Key("network.protocol.name")
	attrServerAddress   = attribute.Key("server.address")
	attrServerPort      = attribute.Key("server.port")
	attrIODirection     = attribute.Key("network.io.direction")

	// AttrServerID is the id the server is registered under in the
	// Manager: agentmcp's own attribute, on every span and measurement
	// about one server.
	AttrServerID    = attribute.Key("agentmcp.server.id")
	attrServerState = attribute.Key("agentmcp.server.state")
	attrTransportT  = attribute.Key("agentmcp.transport")
	attrAttempt     = attribute.Key("agentmcp.connect.attempt")
	attrElicitMode  = attribute.Key("agentmcp.elicitation.mode")
	attrElicitAct   = attribute.Key("agentmcp.elicitation.action")
	attrOutcome     = attribute.Key("agentmcp.outcome")
)

// Span names of agentmcp's own spans.
const (
	spanConnect     = "agentmcp.connect"
	spanDiscover    = "agentmcp.discover"
	spanRenew       = "agentmcp.session.renew"
	spanElicitation = "agentmcp.elicitation.wait"
)

var noopMeter = noop.NewMeterProvider().Meter(InstrumentationName)

// durationBuckets are the conventions' advice for the MCP duration
// histograms, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

var (
	clientSpan   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	internalSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
)

// telemetry is the Manager's tracer, propagator and instruments.
type telemetry struct {
	tracer trace.Tracer
	// global is set when the tracer came from the global provider
	// (Options.TracerProvider nil): while the application has set none,
	// the global tracer's spans are non-recording, and requests skip them
	// (see traced).
	global  bool
	prop    propagation.TextMapPropagator
	content bool
	off     bool // no per-request telemetry (benchknob.NoRequestTelemetry)

	opDuration      metric.Float64Histogram
	sessionDuration metric.Float64Histogram
	renewals        metric.Int64Counter
	attempts        metric.Int64Counter
	io              metric.Int64Counter
	reg             metric.Registration // the observable gauges; nil if none
}

// newTelemetry builds m's telemetry from o. An instrument the meter
// refuses is replaced by a no-op one: telemetry never fails the Manager.
func newTelemetry(m *Manager, o *Options) *telemetry {
	tp, mp, prop := o.TracerProvider, o.MeterProvider, o.Propagator
	global := tp == nil
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if prop == nil {
		prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	t := &telemetry{
		tracer:  tp.Tracer(InstrumentationName, trace.WithInstrumentationVersion(Version)),
		global:  global,
		prop:    prop,
		content: o.RecordContent,
		off:     benchknob.NoRequestTelemetry.Load(),
	}
	meter := mp.Meter(InstrumentationName, metric.WithInstrumentationVersion(Version))
	t.opDuration = histogram(meter, "mcp.client.operation.duration",
		"The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.")
	t.sessionDuration = histogram(meter, "mcp.client.session.duration", "The duration of the MCP session as observed on the MCP client.")
	t.renewals = counter(meter, "agentmcp.client.session.renewals", "{renewal}",
		"Session renewals (a new session after a drop, an expiry or a failure), by outcome.")
	t.attempts = counter(meter, "agentmcp.client.connect.attempts", "{attempt}",
		"Connection attempts made by renewals and reconnections, by outcome.")
	t.io = counter(meter, "agentmcp.client.io", "By",
		"Bytes of the JSON-RPC messages sent and received over HTTP (streamable HTTP, SSE), by direction.")
	servers, err := meter.Int64ObservableGauge("agentmcp.client.servers", metric.WithUnit("{server}"),
		metric.WithDescription("Registered servers, by state."))
	if err != nil {
		return t
	}
	pending, err := meter.Int64ObservableGauge("agentmcp.client.input.pending", metric.WithUnit("{request}"),
		metric.WithDescription("Requests for input from servers (elicitation, sampling) waiting for their answer."))
	if err != nil {
		return t
	}
	t.reg, _ = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		counts := map[State]int64{StateConnecting: 0, StateAuthenticating: 0, StateConnected: 0,
			StateDiscovering: 0, StateReady: 0, StateFailed: 0, StateNotConnected: 0}
		for _, c := range m.snapshot() {
			c.mu.Lock()
			counts[c.state]++
			c.mu.Unlock()
		}
		for state, n := range counts {
			o.ObserveInt64(servers, n, metric.WithAttributes(attrServerState.String(string(state))))
		}
		m.hooks.inputMu.Lock()
		n := m.hooks.pendingInput
		m.hooks.inputMu.Unlock()
		o.ObserveInt64(pending, int64(n))
		return nil
	}, servers, pending)
	return t
}

func histogram(meter metric.Meter, name, desc string) metric.Float64Histogram {
	h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		h, _ = noopMeter.Float64Histogram(name)
	}
	return h
}

func counter(meter metric.Meter, name, unit, desc string) metric.Int64Counter {
	c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	if err != nil {
		c, _ = noopMeter.Int64Counter(name)
	}
	return c
}

// traced reports whether requests start spans: always with a tracer
// provider of the application's, and with the global one once the
// application has set one, before or after New (otel.GetTracerProvider
// returns the application's from then on, and a tracer obtained before
// delegates to it). Until then the global tracer's spans are
// non-recording, and starting one would cost two allocations per request
// for nothing.
func (t *telemetry) traced() bool {
	return !t.global || reflect.TypeOf(otel.GetTracerProvider()) != defaultGlobalType
}

// defaultGlobalType is the type of OpenTelemetry's default global tracer
// provider (which delegates to the one the application sets), or nil if
// the provider found at initialisation is another (then always traced).
var defaultGlobalType = func() reflect.Type {
	t := reflect.TypeOf(otel.GetTracerProvider())
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().PkgPath() != "go.opentelemetry.io/otel/internal/global" {
		return nil
	}
	return t
}()

// noSpan is the span of a request that starts none.
var noSpan = trace.SpanFromContext(context.Background())

// close unregisters the observable gauges, which would otherwise keep the
// Manager reachable from the meter provider.
func (t *telemetry) close() {
	if t.reg != nil {
		t.reg.Unregister()
	}
}

// serverAttrs are the attributes of every span and measurement about a
// server, computed once per session (and again once its handshake is
// over, for its session id and protocol version).
type serverAttrs struct {
	list   []attribute.KeyValue // for spans
	metric []attribute.KeyValue // for metrics: list without the session id
	done   bool                 // the handshake was over when they were computed
}

// attrs returns the span attributes of the session h belongs to.
func (h *sessionHooks) attrs(cs *mcp.ClientSession) []attribute.KeyValue {
	return h.serverAttrs(cs).list
}

// metricAttrs returns its metric attributes: the span attributes but the
// session id, which would make a series per session.
func (h *sessionHooks) metricAttrs(cs *mcp.ClientSession) []attribute.KeyValue {
	return h.serverAttrs(cs).metric
}

func (h *sessionHooks) serverAttrs(cs *mcp.ClientSession) *serverAttrs {
	if a := h.tel.Load(); a != nil && a.done {
		return a
	}
	c := h.c
	a := &serverAttrs{list: make([]attribute.KeyValue, 0, 8)}
	a.list = append(a.list, AttrServerID.String(c.ID()))
	switch h.s.transport {
	case TransportStdio:
		a.list = append(a.list, attrTransport.String("pipe"))
	case TransportInProcess:
		a.list = append(a.list, attrTransport.String("inproc"))
	default:
		a.list = append(a.list, attrTransport.String("tcp"), attrProtocolName.String("http"))
		if host, port := serverHostPort(c.opts.URL); host != "" {
			a.list = append(a.list, attrServerAddress.String(host))
			if port > 0 {
				a.list = append(a.list, attrServerPort.Int(port))
			}
		}
	}
	if h.s.transport != "" {
		a.list = append(a.list, attrTransportT.String(string(h.s.transport)))
	}
	if cs != nil {
		if init := cs.InitializeResult(); init != nil {
			a.done = true
			a.list = append(a.list, attrProtocolVersion.String(init.ProtocolVersion))
		}
	}
	a.metric = a.list
	if cs != nil && a.done {
		if id := cs.ID(); id != "" {
			a.list = append(a.list[:len(a.list):len(a.list)], attrSessionID.String(id))
		}
	}
	h.tel.Store(a)
	return a
}

// serverHostPort returns the host and port of an HTTP server's URL, without its
// userinfo, path or query.
func serverHostPort(raw string) (string, int) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", 0
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		switch u.Scheme {
		case "http":
			port = 80
		case "https":
			port = 443
		}
	}
	return u.Hostname(), port
}

// telemetryMiddleware is the outermost sending middleware: one CLIENT span
// per request and notification, trace context in its params._meta,
// mcp.client.operation.duration, and the server's figures of its tool
// calls (serverstats.go).
func (h *sessionHooks) telemetryMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	t := h.c.m.tel
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		start := time.Now()
		span := noSpan
		if t.traced() {
			ctx, span = t.tracer.Start(ctx, method, clientSpan...)
		}
		recording := span.IsRecording()
		cs, _ := req.GetSession().(*mcp.ClientSession)
		target, targetAttrs := requestTarget(method, req, recording || t.opDuration.Enabled(ctx), t.content)
		if recording {
			if target != "" {
				span.SetName(method + " " + target)
			}
			span.SetAttributes(attrMethod.String(method))
			span.SetAttributes(h.attrs(cs)...)
			span.SetAttributes(targetAttrs...)
		}
		if trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0 {
			t.inject(ctx, req.GetParams())
		}

		res, err := next(ctx, method, req)

		errType, code, desc := classify(res, err, t.content)
		if recording {
			if code != "" {
				span.SetAttributes(attrStatusCode.String(code))
			}
			if errType != "" {
				span.SetAttributes(attrErrorType.String(errType))
				span.SetStatus(codes.Error, desc)
			}
			if t.content && err == nil {
				if r, ok := res.(*mcp.CallToolResult); ok {
					span.SetAttributes(attrToolResult.String(jsonString(r)))
				}
			}
		}
		span.End()
		// The server's own figures (serverstats.go) and the instrument
		// are recorded here alike: the same duration, the same error.type.
		call, enabled := method == "tools/call", t.opDuration.Enabled(ctx)
		var d time.Duration
		if call || enabled {
			end := time.Now()
			d = end.Sub(start)
			if call {
				h.c.recordCall(end, d, errType != "")
			}
		}
		if enabled {
			attrs := make([]attribute.KeyValue, 0, 16)
			attrs = append(attrs, attrMethod.String(method))
			attrs = append(attrs, h.metricAttrs(cs)...)
			for _, kv := range targetAttrs {
				if kv.Key == attrToolName || kv.Key == attrPromptName {
					attrs = append(attrs, kv)
				}
			}
			if errType != "" {
				attrs = append(attrs, attrErrorType.String(errType))
			}
			if code != "" {
				attrs = append(attrs, attrStatusCode.String(code))
			}
			t.opDuration.Record(ctx, d.Seconds(), metric.WithAttributes(attrs...))
		}
		return res, err
	}
}

// requestTarget returns the span name's target (a tool or prompt name)
// and, when want, the attributes that say what the request is about.
// Resource URIs are recorded without their userinfo and query; tool
// arguments only with content.
func requestTarget(method string, req mcp.Request, want, content bool) (string, []attribute.KeyValue) {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParams:
		if p == nil {
			return "", nil
		}
		if !want {
			return p.Name, nil
		}
		attrs := []attribute.KeyValue{attrToolName.String(p.Name), attrOperationName.String("execute_tool")}
		if content {
			attrs = append(attrs, attrToolArguments.String(jsonString(p.Arguments)))
		}
		return p.Name, attrs
	case *mcp.GetPromptParams:
		if p == nil {
			return "", nil
		}
		if !want {
			return p.Name, nil
		}
		return p.Name, []attribute.KeyValue{attrPromptName.String(p.Name)}
	case *mcp.ReadResourceParams:
		if p == nil || !want {
			return "", nil
		}
		uri := safetext.RawURL(p.URI)
		if content {
			uri = p.URI
		}
		return "", []attribute.KeyValue{attrResourceURI.String(uri)}
	case *mcp.SubscribeParams:
		if p == nil || !want {
			return "", nil
		}
		return "", []attribute.KeyValue{attrResourceURI.String(safetext.RawURL(p.URI))}
	case *mcp.UnsubscribeParams:
		if p == nil || !want {
			return "", nil
		}
		return "", []attribute.KeyValue{attrResourceURI.String(safetext.RawURL(p.URI))}
	}
	return "", nil
}

// classify returns the error.type of an outcome (empty for success), the
// JSON-RPC error code if the server answered with one, and the span status
// description. A tool result with isError is "tool_error"; an HTTP refusal
// its status code; a JSON-RPC error its code. The server's error message
// is the description only with content: it may quote what it was sent.
func classify(res mcp.Result, err error, content bool) (errType, code, desc string) {
	if err == nil {
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			return "tool_error", "", "tool_error"
		}
		return "", "", ""
	}
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		code = strconv.FormatInt(jerr.Code, 10)
		desc = "JSON-RPC error " + code
		if content {
			desc = jerr.Message
		}
		return code, code, desc
	}
	errType = errorType(err)
	return errType, "", errType
}

// errorType is the low-cardinality class of an error that is not a
// JSON-RPC error: an HTTP status code, "timeout", "cancelled",
// "unreachable", "gate_closed", "session_lost" or "_OTHER".
func errorType(err error) string {
	var herr *HTTPError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &herr):
		return strconv.Itoa(herr.StatusCode)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, ErrGateClosed):
		return "gate_closed"
	case isSessionLost(err):
		return "session_lost"
	case transport.IsUnreachable(err):
		return "unreachable"
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return "timeout"
	}
	return "_OTHER"
}

// inject writes ctx's trace context (and baggage) into params._meta, under
// the unprefixed keys the conventions name ("traceparent", "tracestate",
// "baggage"). Requests without params carry none.
func (t *telemetry) inject(ctx context.Context, p mcp.Params) {
	if p == nil {
		return
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return
	}
	meta := p.GetMeta()
	if meta == nil {
		meta = map[string]any{}
	}
	t.prop.Inject(ctx, metaCarrier(meta))
	if len(meta) > 0 {
		p.SetMeta(meta)
	}
}

// extract returns ctx with the remote span context found in params._meta.
func (t *telemetry) extract(ctx context.Context, p mcp.Params) context.Context {
	if p == nil {
		return ctx
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return ctx
	}
	meta := p.GetMeta()
	if len(meta) == 0 {
		return ctx
	}
	return t.prop.Extract(ctx, metaCarrier(meta))
}

// metaCarrier is a params._meta as a propagation carrier.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// telemetryReceiving is the outermost receiving middleware: a SERVER span
// for each request a server sends (elicitation, sampling, roots, ping),
// whose parent is the trace context in its params._meta and which links
// the context it arrived in (the call it arrived during, if any).
func (h *sessionHooks) telemetryReceiving(next mcp.MethodHandler) mcp.MethodHandler {
	t := h.c.m.tel
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if len(method) > 14 && method[:14] == "notifications/" {
			return next(ctx, method, req)
		}
		ambient := trace.SpanContextFromContext(ctx)
		pctx := t.extract(ctx, req.GetParams())
		opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
		if remote := trace.SpanContextFromContext(pctx); ambient.IsValid() && !remote.Equal(ambient) {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
		}
		ctx, span := t.tracer.Start(pctx, method, opts...)
		if span.IsRecording() {
			cs, _ := req.GetSession().(*mcp.ClientSession)
			span.SetAttributes(attrMethod.String(method))
			span.SetAttributes(h.attrs(cs)...)
		}
		res, err := next(ctx, method, req)
		if span.IsRecording() {
			if errType, code, desc := classify(res, err, t.content); errType != "" {
				if code != "" {
					span.SetAttributes(attrStatusCode.String(code))
				}
				span.SetAttributes(attrErrorType.String(errType))
				span.SetStatus(codes.Error, desc)
			}
		}
		span.End()
		return res, err
	}
}

// noteRequestID records a request's JSON-RPC id on the span of the call
// that sent it (sessionConn.Write).
func noteRequestID(ctx context.Context, req *jsonrpc.Request) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	switch v := req.ID.Raw().(type) {
	case int64:
		span.SetAttributes(attrRequestID.String(strconv.FormatInt(v, 10)))
	case string:
		span.SetAttributes(attrRequestID.String(v))
	}
}

// endSpan ends span with err's status and error.type.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		et := errorType(err)
		var jerr *jsonrpc.Error
		if errors.As(err, &jerr) {
			et = strconv.FormatInt(jerr.Code, 10)
		}
		span.SetAttributes(attrErrorType.String(et))
		span.SetStatus(codes.Error, et)
	}
	span.End()
}

// connectOnce is connectOnceUntraced in an agentmcp.connect span: the
// handshake (initialize, or server/discover) and its retries over another
// transport or after an authorisation are its children.
func (c *server) connectOnce(ctx context.Context, discoverNext bool) ConnectResult {
	ctx, span := c.m.tel.tracer.Start(ctx, spanConnect, internalSpan...)
	if span.IsRecording() {
		span.SetAttributes(AttrServerID.String(c.ID()))
	}
	res := c.connectOnceUntraced(ctx, discoverNext)
	if span.IsRecording() {
		span.SetAttributes(attrServerState.String(string(res.State)))
		if res.State == StateConnected {
			c.mu.Lock()
			t, v := c.last.transport, c.last.protocolVersion
			c.mu.Unlock()
			span.SetAttributes(attrTransportT.String(string(t)), attrProtocolVersion.String(v))
		}
	}
	if res.State == StateConnected || res.State == StateAuthenticating {
		span.End()
	} else {
		endSpan(span, res.Err)
	}
	return res
}

// discover fetches the catalog of a connected or ready server, in an
// agentmcp.discover span.
func (c *server) discover(ctx context.Context, timeout time.Duration) DiscoverResult {
	ctx, span := c.m.tel.tracer.Start(ctx, spanDiscover, internalSpan...)
	if span.IsRecording() {
		span.SetAttributes(AttrServerID.String(c.ID()))
	}
	res := c.discoverOnce(ctx, timeout, true)
	if span.IsRecording() {
		span.SetAttributes(attrServerState.String(string(res.State)))
	}
	if res.Success {
		span.End()
	} else {
		endSpan(span, res.Err)
	}
	return res
}

// renewSpan starts the agentmcp.session.renew span of a renewal (a root
// span: renewals outlive whoever started them).
func (c *server) renewSpan(ctx context.Context, attempts int) (context.Context, func(error)) {
	t := c.m.tel
	ctx, span := t.tracer.Start(ctx, spanRenew, internalSpan...)
	if span.IsRecording() {
		span.SetAttributes(AttrServerID.String(c.ID()), attribute.Int("agentmcp.connect.max_attempts", attempts))
	}
	return ctx, func(err error) {
		if errors.Is(err, errClosedMeanwhile) {
			err = nil // closed on purpose: not a failure
		}
		endSpan(span, err)
		if t.renewals.Enabled(ctx) {
			t.renewals.Add(ctx, 1, metric.WithAttributes(outcomeAttrs(c, err)...))
		}
	}
}

// noteAttempt counts one connection attempt of a renewal.
func (c *server) noteAttempt(ctx context.Context, k int, res ConnectResult) {
	t := c.m.tel
	if trace.SpanFromContext(ctx).IsRecording() {
		trace.SpanFromContext(ctx).AddEvent("attempt", trace.WithAttributes(attrAttempt.Int(k),
			attrServerState.String(string(res.State))))
	}
	if t.attempts.Enabled(ctx) {
		var err error
		if res.State != StateConnected {
			err = res.Err
			if err == nil {
				err = errors.New(string(res.State))
			}
		}
		t.attempts.Add(ctx, 1, metric.WithAttributes(outcomeAttrs(c, err)...))
	}
}

func outcomeAttrs(c *server, err error) []attribute.KeyValue {
	if err == nil {
		return []attribute.KeyValue{AttrServerID.String(c.ID()), attrOutcome.String("success")}
	}
	return []attribute.KeyValue{AttrServerID.String(c.ID()), attrOutcome.String("failure"), attrErrorType.String(errorType(err))}
}

// elicit is elicitUntraced in an agentmcp.elicitation.wait span: how long
// the server waited for the user.
func (c *server) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ctx, span := c.m.tel.tracer.Start(ctx, spanElicitation, internalSpan...)
	if span.IsRecording() {
		mode := "form"
		if p != nil {
			mode = input.ElicitationMode(p)
		}
		span.SetAttributes(AttrServerID.String(c.ID()), attrElicitMode.String(mode))
	}
	res, err := c.elicitUntraced(ctx, p)
	if res != nil && span.IsRecording() {
		span.SetAttributes(attrElicitAct.String(res.Action))
	}
	endSpan(span, err)
	return res, err
}

// sessionStarted notes when s became a connection's session, for
// mcp.client.session.duration.
func (s *session) sessionStarted(now time.Time) { s.started.Store(now.UnixNano()) }

// recordSessionEnd records mcp.client.session.duration once, when s
// closes.
func (s *session) recordSessionEnd() {
	h := s.hooks
	start := s.started.Swap(0)
	if h == nil || start == 0 {
		return
	}
	t := h.c.m.tel
	ctx := context.Background()
	if !t.sessionDuration.Enabled(ctx) {
		return
	}
	attrs := h.metricAttrs(s.cs)
	if err, _ := s.dropped.Load().(error); err != nil {
		attrs = append(attrs[:len(attrs):len(attrs)], attrErrorType.String(errorType(err)))
	}
	t.sessionDuration.Record(ctx, time.Since(time.Unix(0, start)).Seconds(), metric.WithAttributes(attrs...))
}

// sessionTel is what a session keeps for telemetry.
type sessionTel struct {
	started atomic.Int64 // unix nanoseconds when installed; 0 once recorded
	dropped atomic.Value // error: why the connection dropped
}

// jsonString encodes v for an opt-in content attribute.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// ioCounter counts the bytes of one connection's messages
// (agentmcp.client.io): the JSON-RPC messages as encoded, not the HTTP
// framing around them.
type ioCounter struct {
	c      metric.Int64Counter
	tx, rx []metric.AddOption
}

// ioFor returns the counter of c's messages. The server id is fixed when
// the session starts.
func (t *telemetry) ioFor(c *server) *ioCounter {
	id := AttrServerID.String(c.ID())
	return &ioCounter{c: t.io,
		tx: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(id, attrIODirection.String("transmit")))},
		rx: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(id, attrIODirection.String("receive")))},
	}
}

// Sent counts n bytes sent (transport.Counter).
func (io *ioCounter) Sent(n int) {
	if io != nil && io.c.Enabled(context.Background()) {
		io.c.Add(context.Background(), int64(n), io.tx...)
	}
}

// Received counts n bytes received (transport.Counter).
func (io *ioCounter) Received(n int) {
	if io != nil && io.c.Enabled(context.Background()) {
		io.c.Add(context.Background(), int64(n), io.rx...)
	}
}
