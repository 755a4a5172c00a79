// Package telemetry is the OpenTelemetry instrumentation of package
// mcpclient's Manager, following the semantic conventions for the Model
// Context Protocol: a CLIENT span per request and notification sent (named
// "{mcp.method.name} {target}"), W3C trace context in params._meta, a
// SERVER span per request a server sends (its _meta context as the
// parent), mcp.client.operation.duration and mcp.client.session.duration,
// and agentmcp's own spans and instruments (docs/OBSERVABILITY.md lists
// them all).
//
// # Usage
//
// The Manager builds one [Telemetry] with [New], a [Session] per MCP
// session, and installs [Telemetry.Sending] and [Telemetry.Receiving] as
// the outermost middleware of the session's go-sdk client. Its own spans
// (connections, discoveries, renewals, elicitation waits) start with
// [Telemetry.Start] and end with [Telemetry.End]; the HTTP transports
// count their bytes through an [IOCounter].
//
// With the global no-op providers (the default until the application sets
// up OpenTelemetry), a request costs a non-recording span and nothing
// else: attributes are built only for recording spans and enabled
// instruments.
//
// # Concurrency
//
// A Telemetry, a Session and an IOCounter are safe for concurrent use.
//
// # Errors
//
// Telemetry never fails the Manager: an instrument the meter refuses is
// replaced by a no-op one. Errors are recorded as a low-cardinality
// error.type ([Telemetry.ErrorType]); their messages only with
// Options.RecordContent.
package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/internal/safetext"
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

// InstrumentationName is the name of the Manager's tracer and meter.
const InstrumentationName = "github.com/agentmcp/agentmcp/mcpclient"

// Attribute keys: the conventions' and agentmcp's own.
const (
	attrMethod          = attribute.Key("mcp.method.name")
	attrSessionID       = attribute.Key("mcp.session.id")
	AttrProtocolVersion = attribute.Key("mcp.protocol.version")
	attrResourceURI     = attribute.Key("mcp.resource.uri")
	attrToolName        = attribute.Key("gen_ai.tool.name")
	attrPromptName      = attribute.Key("gen_ai.prompt.name")
	attrOperationName   = attribute.Key("gen_ai.operation.name")
	attrToolArguments   = attribute.Key("gen_ai.tool.call.arguments")
	attrToolResult      = attribute.Key("gen_ai.tool.call.result")
	attrRequestID       = attribute.Key("jsonrpc.request.id")
	attrStatusCode      = attribute.Key("rpc.response.status_code")
	attrErrorType       = attribute.Key("error.type")
	attrNetwork         = attribute.Key("network.transport")
	attrProtocolName    = attribute.Key("network.protocol.name")
	attrServerAddress   = attribute.Key("server.address")
	attrServerPort      = attribute.Key("server.port")
	attrIODirection     = attribute.Key("network.io.direction")

	// AttrServerID is the id the server is registered under in the
	// Manager: agentmcp's own attribute, on every span and measurement
	// about one server.
	AttrServerID     = attribute.Key("agentmcp.server.id")
	AttrServerState  = attribute.Key("agentmcp.server.state")
	AttrTransport    = attribute.Key("agentmcp.transport")
	attrAttempt      = attribute.Key("agentmcp.connect.attempt")
	attrMaxAttempts  = attribute.Key("agentmcp.connect.max_attempts")
	AttrElicitMode   = attribute.Key("agentmcp.elicitation.mode")
	AttrElicitAction = attribute.Key("agentmcp.elicitation.action")
	attrOutcome      = attribute.Key("agentmcp.outcome")
)

// Span names of agentmcp's own spans.
const (
	SpanConnect     = "agentmcp.connect"
	SpanDiscover    = "agentmcp.discover"
	spanRenew       = "agentmcp.session.renew"
	SpanElicitation = "agentmcp.elicitation.wait"
)

var noopMeter = noop.NewMeterProvider().Meter(InstrumentationName)

// durationBuckets are the conventions' advice for the MCP duration
// histograms, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// DurationBuckets returns the bucket bounds of the duration histograms,
// in seconds.
func DurationBuckets() []float64 { return slices.Clone(durationBuckets) }

var (
	clientSpan   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	internalSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
)

// Options configure a Telemetry. Every field is optional.
type Options struct {
	// TracerProvider receives the spans. Nil means the global provider
	// (otel.GetTracerProvider).
	TracerProvider trace.TracerProvider
	// MeterProvider receives the metrics. Nil means the global provider
	// (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
	// Propagator writes and reads the trace context in params._meta. Nil
	// means W3C Trace Context and Baggage.
	Propagator propagation.TextMapPropagator
	// RecordContent opts in to content: tool arguments and results,
	// resource URIs with their query, servers' error messages.
	RecordContent bool
	// Version is the instrumentation version. Empty means none.
	Version string
	// Off turns the per-request telemetry off (the middleware are not to
	// be installed, and NoteRequestID does nothing).
	Off bool
	// ErrorType returns the error.type of an error of the caller's own
	// (checked after the HTTP status, timeouts and cancellations, before
	// "unreachable"), or "" for none. Nil means none.
	ErrorType func(error) string
	// Gauges, if not nil, is called at each collection of the observable
	// gauges: the number of servers in each state (agentmcp.server.state),
	// and of the requests for input waiting for their answer. It must not
	// block.
	Gauges func() (servers map[string]int64, pendingInput int64)
}

// Telemetry is a Manager's tracer, propagator and instruments.
type Telemetry struct {
	tracer trace.Tracer
	// global is set when the tracer came from the global provider
	// (Options.TracerProvider nil): while the application has set none,
	// the global tracer's spans are non-recording, and requests skip them
	// (see Traced).
	global    bool
	prop      propagation.TextMapPropagator
	content   bool
	off       bool
	errorType func(error) string

	opDuration      metric.Float64Histogram
	sessionDuration metric.Float64Histogram
	renewals        metric.Int64Counter
	attempts        metric.Int64Counter
	io              metric.Int64Counter
	reg             metric.Registration // the observable gauges; nil if none

	meter metric.Meter    // for the instruments made on first use
	tasks taskInstruments // tasks.go
}

// New builds a Telemetry from o (which may be nil). An instrument the
// meter refuses is replaced by a no-op one.
func New(o *Options) *Telemetry {
	var opts Options
	if o != nil {
		opts = *o
	}
	tp, mp, prop := opts.TracerProvider, opts.MeterProvider, opts.Propagator
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
	t := &Telemetry{
		tracer:    tp.Tracer(InstrumentationName, trace.WithInstrumentationVersion(opts.Version)),
		global:    global,
		prop:      prop,
		content:   opts.RecordContent,
		off:       opts.Off,
		errorType: opts.ErrorType,
	}
	meter := mp.Meter(InstrumentationName, metric.WithInstrumentationVersion(opts.Version))
	t.meter = meter
	t.opDuration = histogram(meter, "mcp.client.operation.duration",
		"The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.")
	t.sessionDuration = histogram(meter, "mcp.client.session.duration", "The duration of the MCP session as observed on the MCP client.")
	t.renewals = counter(meter, "agentmcp.client.session.renewals", "{renewal}",
		"Session renewals (a new session after a drop, an expiry or a failure), by outcome.")
	t.attempts = counter(meter, "agentmcp.client.connect.attempts", "{attempt}",
		"Connection attempts made by renewals and reconnections, by outcome.")
	t.io = counter(meter, "agentmcp.client.io", "By",
		"Bytes of the JSON-RPC messages sent and received over HTTP (streamable HTTP, SSE), by direction.")
	if opts.Gauges == nil {
		return t
	}
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
		counts, n := opts.Gauges()
		for state, n := range counts {
			o.ObserveInt64(servers, n, metric.WithAttributes(AttrServerState.String(state)))
		}
		o.ObserveInt64(pending, n)
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

// Off reports whether per-request telemetry is off (Options.Off).
func (t *Telemetry) Off() bool { return t.off }

// Traced reports whether requests start spans: always with a tracer
// provider of the application's, and with the global one once the
// application has set one, before or after New (otel.GetTracerProvider
// returns the application's from then on, and a tracer obtained before
// delegates to it). Until then the global tracer's spans are
// non-recording, and starting one would cost two allocations per request
// for nothing.
func (t *Telemetry) Traced() bool {
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

// Close unregisters the observable gauges, which would otherwise keep
// what Options.Gauges reads reachable from the meter provider.
func (t *Telemetry) Close() {
	if t.reg != nil {
		t.reg.Unregister()
	}
}

// Server describes the server of a session, for the attributes of its
// spans and measurements.
type Server struct {
	// ID returns the id the server is registered under now.
	ID func() string
	// Network is network.transport: "pipe", "inproc" or "tcp" (HTTP, to
	// the host and port of URL).
	Network string
	// URL is the server's URL, for HTTP.
	URL string
	// Transport is agentmcp.transport, if not empty.
	Transport string
	// Listed reports whether the server listed name, a tool's (method
	// "tools/call") or a prompt's ("prompts/get"), or, before its catalog
	// is known, whether the name is to be recorded. The metrics record a
	// name it did not list as OtherName: the caller chooses the name, and
	// each made-up one would be a series of its own. Nil means every name
	// is recorded.
	Listed func(method, name string) bool
}

// OtherName is the gen_ai.tool.name or gen_ai.prompt.name of a
// measurement whose tool or prompt the server did not list: the
// conventions' catch-all value (as error.type's). Spans keep the name.
const OtherName = "_OTHER"

// Session holds the attributes of every span and measurement about one
// session, computed once (and again once its handshake is over, for its
// session id and protocol version).
type Session struct {
	srv   Server
	attrs atomic.Pointer[serverAttrs]
}

// NewSession returns the Session of a new session of srv.
func NewSession(srv Server) *Session { return &Session{srv: srv} }

type serverAttrs struct {
	list   []attribute.KeyValue // for spans
	metric []attribute.KeyValue // for metrics: list without the session id
	done   bool                 // the handshake was over when they were computed
}

// spanAttrs returns the span attributes of the session; cs may be nil.
func (s *Session) spanAttrs(cs *mcp.ClientSession) []attribute.KeyValue {
	return s.serverAttrs(cs).list
}

// metricAttrs returns its metric attributes: the span attributes but the
// session id, which would make a series per session.
func (s *Session) metricAttrs(cs *mcp.ClientSession) []attribute.KeyValue {
	return s.serverAttrs(cs).metric
}

func (s *Session) serverAttrs(cs *mcp.ClientSession) *serverAttrs {
	if a := s.attrs.Load(); a != nil && a.done {
		return a
	}
	a := &serverAttrs{list: make([]attribute.KeyValue, 0, 8)}
	a.list = append(a.list, AttrServerID.String(s.srv.ID()), attrNetwork.String(s.srv.Network))
	if s.srv.Network == "tcp" {
		a.list = append(a.list, attrProtocolName.String("http"))
		if host, port := serverHostPort(s.srv.URL); host != "" {
			a.list = append(a.list, attrServerAddress.String(host))
			if port > 0 {
				a.list = append(a.list, attrServerPort.Int(port))
			}
		}
	}
	if s.srv.Transport != "" {
		a.list = append(a.list, AttrTransport.String(s.srv.Transport))
	}
	if cs != nil {
		if init := cs.InitializeResult(); init != nil {
			a.done = true
			a.list = append(a.list, AttrProtocolVersion.String(init.ProtocolVersion))
		}
	}
	a.metric = a.list
	if cs != nil && a.done {
		if id := cs.ID(); id != "" {
			a.list = append(a.list[:len(a.list):len(a.list)], attrSessionID.String(id))
		}
	}
	s.attrs.Store(a)
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

// Sending is the outermost sending middleware of session s: one CLIENT
// span per request and notification, trace context in its params._meta,
// and mcp.client.operation.duration. toolCall, if not nil, gets the end,
// duration and failure (an error.type) of each tools/call, measured as the
// instrument measures it.
func (t *Telemetry) Sending(s *Session, toolCall func(end time.Time, d time.Duration, failed bool)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			start := time.Now()
			span := noSpan
			if t.Traced() {
				ctx, span = t.tracer.Start(ctx, method, clientSpan...)
			}
			recording := span.IsRecording()
			cs, _ := req.GetSession().(*mcp.ClientSession)
			target, targetAttrs := requestTarget(req, recording || t.opDuration.Enabled(ctx), t.content)
			if recording {
				if target != "" {
					span.SetName(method + " " + target)
				}
				span.SetAttributes(attrMethod.String(method))
				span.SetAttributes(s.spanAttrs(cs)...)
				span.SetAttributes(targetAttrs...)
			}
			if trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0 {
				t.inject(ctx, req.GetParams())
			}

			res, err := next(ctx, method, req)

			errType, code, desc := t.classify(res, err)
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
			// toolCall's figures and the instrument are recorded here
			// alike: the same duration, the same error.type.
			call, enabled := method == "tools/call" && toolCall != nil, t.opDuration.Enabled(ctx)
			var d time.Duration
			if call || enabled {
				end := time.Now()
				d = end.Sub(start)
				if call {
					toolCall(end, d, errType != "")
				}
			}
			if enabled {
				attrs := make([]attribute.KeyValue, 0, 16)
				attrs = append(attrs, attrMethod.String(method))
				attrs = append(attrs, s.metricAttrs(cs)...)
				for _, kv := range targetAttrs {
					if kv.Key == attrToolName || kv.Key == attrPromptName {
						if s.srv.Listed != nil && !s.srv.Listed(method, kv.Value.AsString()) {
							kv.Value = attribute.StringValue(OtherName)
						}
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
}

// requestTarget returns the span name's target (a tool or prompt name)
// and, when want, the attributes that say what the request is about.
// Resource URIs are recorded without their userinfo and query; tool
// arguments only with content.
func requestTarget(req mcp.Request, want, content bool) (string, []attribute.KeyValue) {
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
func (t *Telemetry) classify(res mcp.Result, err error) (errType, code, desc string) {
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
		if t.content {
			desc = jerr.Message
		}
		return code, code, desc
	}
	errType = t.ErrorType(err)
	return errType, "", errType
}

// ErrorType is the low-cardinality class of an error that is not a
// JSON-RPC error: an HTTP status code, "timeout", "cancelled", a class of
// Options.ErrorType, "unreachable" or "_OTHER"; "" for nil.
func (t *Telemetry) ErrorType(err error) string {
	var herr *transport.HTTPError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &herr):
		return strconv.Itoa(herr.StatusCode)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	if t.errorType != nil {
		if et := t.errorType(err); et != "" {
			return et
		}
	}
	if transport.IsUnreachable(err) {
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
func (t *Telemetry) inject(ctx context.Context, p mcp.Params) {
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
func (t *Telemetry) extract(ctx context.Context, p mcp.Params) context.Context {
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

// Receiving is the outermost receiving middleware of session s: a SERVER
// span for each request a server sends (elicitation, sampling, roots,
// ping), whose parent is the trace context in its params._meta and which
// links the context it arrived in (the call it arrived during, if any).
func (t *Telemetry) Receiving(s *Session) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
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
				span.SetAttributes(s.spanAttrs(cs)...)
			}
			res, err := next(ctx, method, req)
			if span.IsRecording() {
				if errType, code, desc := t.classify(res, err); errType != "" {
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
}

// NoteRequestID records a request's JSON-RPC id on the span of the call
// that sent it (the span in ctx), when requests are traced.
func (t *Telemetry) NoteRequestID(ctx context.Context, req *jsonrpc.Request) {
	if t.off || !t.Traced() {
		return
	}
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

// Start starts one of agentmcp's own INTERNAL spans (Span*) about the
// server serverID.
func (t *Telemetry) Start(ctx context.Context, name, serverID string) (context.Context, trace.Span) {
	ctx, span := t.tracer.Start(ctx, name, internalSpan...)
	if span.IsRecording() {
		span.SetAttributes(AttrServerID.String(serverID))
	}
	return ctx, span
}

// End ends span with err's status and error.type (none for nil).
func (t *Telemetry) End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		et := t.ErrorType(err)
		var jerr *jsonrpc.Error
		if errors.As(err, &jerr) {
			et = strconv.FormatInt(jerr.Code, 10)
		}
		span.SetAttributes(attrErrorType.String(et))
		span.SetStatus(codes.Error, et)
	}
	span.End()
}

// Renewal starts the agentmcp.session.renew span of a renewal of the
// server serverID, making up to attempts attempts. Call end with the
// renewal's outcome (nil for success): it ends the span and counts the
// renewal.
func (t *Telemetry) Renewal(ctx context.Context, serverID string, attempts int) (_ context.Context, end func(error)) {
	ctx, span := t.tracer.Start(ctx, spanRenew, internalSpan...)
	if span.IsRecording() {
		span.SetAttributes(AttrServerID.String(serverID), attrMaxAttempts.Int(attempts))
	}
	return ctx, func(err error) {
		t.End(span, err)
		if t.renewals.Enabled(ctx) {
			t.renewals.Add(ctx, 1, metric.WithAttributes(t.outcome(serverID, err)...))
		}
	}
}

// Attempt notes the k-th connection attempt of a renewal (in ctx's span),
// which left the server in state, and counts it; err is nil for success.
func (t *Telemetry) Attempt(ctx context.Context, serverID string, k int, state string, err error) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("attempt", trace.WithAttributes(attrAttempt.Int(k), AttrServerState.String(state)))
	}
	if t.attempts.Enabled(ctx) {
		t.attempts.Add(ctx, 1, metric.WithAttributes(t.outcome(serverID, err)...))
	}
}

func (t *Telemetry) outcome(serverID string, err error) []attribute.KeyValue {
	if err == nil {
		return []attribute.KeyValue{AttrServerID.String(serverID), attrOutcome.String("success")}
	}
	return []attribute.KeyValue{AttrServerID.String(serverID), attrOutcome.String("failure"), attrErrorType.String(t.ErrorType(err))}
}

// SessionEnded records mcp.client.session.duration of a session that
// lasted d; dropped is why its connection dropped, nil if it was closed.
func (t *Telemetry) SessionEnded(s *Session, cs *mcp.ClientSession, d time.Duration, dropped error) {
	ctx := context.Background()
	if !t.sessionDuration.Enabled(ctx) {
		return
	}
	attrs := s.metricAttrs(cs)
	if dropped != nil {
		attrs = append(attrs[:len(attrs):len(attrs)], attrErrorType.String(t.ErrorType(dropped)))
	}
	t.sessionDuration.Record(ctx, d.Seconds(), metric.WithAttributes(attrs...))
}

// jsonString encodes v for an opt-in content attribute.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// IOCounter counts the bytes of one connection's messages
// (agentmcp.client.io): the JSON-RPC messages as encoded, not the HTTP
// framing around them. It is a transport.Counter; a nil IOCounter counts
// nothing.
type IOCounter struct {
	c        metric.Int64Counter
	serverID string
	once     sync.Once // makes tx and rx, when a message is first counted
	tx, rx   []metric.AddOption
}

var _ transport.Counter = (*IOCounter)(nil)

// IOCounter returns the counter of the messages of the server serverID.
// Its attribute sets are made when it first counts: with the metrics off
// (no-op providers, the default), never.
func (t *Telemetry) IOCounter(serverID string) *IOCounter {
	return &IOCounter{c: t.io, serverID: serverID}
}

func (io *IOCounter) attributes() {
	id := AttrServerID.String(io.serverID)
	io.tx = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(id, attrIODirection.String("transmit")))}
	io.rx = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(id, attrIODirection.String("receive")))}
}

// Sent counts n bytes sent.
func (io *IOCounter) Sent(n int) {
	if io != nil && io.c.Enabled(context.Background()) {
		io.once.Do(io.attributes)
		io.c.Add(context.Background(), int64(n), io.tx...)
	}
}

// Received counts n bytes received.
func (io *IOCounter) Received(n int) {
	if io != nil && io.c.Enabled(context.Background()) {
		io.once.Do(io.attributes)
		io.c.Add(context.Background(), int64(n), io.rx...)
	}
}
