package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmcp/agentmcp/mcpclient"
)

// serveTelemetry is serve's OpenTelemetry: a meter provider read by the
// Prometheus exporter (GET /metrics) and, when the OTLP environment
// variables name an endpoint, pushed over OTLP/HTTP; a tracer provider
// exporting over OTLP/HTTP when they name one for traces, none otherwise.
type serveTelemetry struct {
	tracer  trace.TracerProvider // nil without an OTLP traces endpoint
	meter   metric.MeterProvider
	metrics http.Handler // Prometheus text format
	stop    []func(context.Context) error
}

// otlpEndpoint reports whether the standard environment names an OTLP
// endpoint for signal ("TRACES", "METRICS").
func otlpEndpoint(signal string) bool {
	return strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" ||
		strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT")) != ""
}

// newServeTelemetry sets up serve's telemetry. The Prometheus exporter
// (rather than client_golang's own instruments) keeps one set of
// instruments, the library's OpenTelemetry ones, for /metrics and OTLP
// alike. The OTLP exporters read the rest of their configuration (headers,
// protocol details, timeouts) from the standard OTEL_EXPORTER_OTLP_*
// variables themselves.
func newServeTelemetry(ctx context.Context) (*serveTelemetry, error) {
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "agentmcp"), attribute.String("service.version", mcpclient.Version)),
		resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	t := &serveTelemetry{}
	reg := prometheus.NewRegistry()
	// The Go runtime's figures (go_goroutines, go_memstats_*, the GC's)
	// and the process's (process_resident_memory_bytes, CPU, open files),
	// from client_golang's own collectors: they are the process's, not
	// instruments of the library's.
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	prom, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(prom)}
	if !otlpEndpoint("TRACES") && os.Getenv("OTEL_METRICS_EXEMPLAR_FILTER") == "" {
		// No span of serve's is sampled without a traces exporter, so no
		// exemplar would ever be kept: no reservoir for each series (a few
		// KiB per server and method, for nothing).
		opts = append(opts, sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
	}
	if otlpEndpoint("METRICS") {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP metrics exporter: %w", err)
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	mp := sdkmetric.NewMeterProvider(opts...)
	t.meter = mp
	t.stop = append(t.stop, mp.Shutdown)
	t.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if otlpEndpoint("TRACES") {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			t.shutdown(ctx)
			return nil, fmt.Errorf("OTLP traces exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp))
		t.tracer = tp
		t.stop = append(t.stop, tp.Shutdown)
	}
	return t, nil
}

// shutdown flushes and stops the exporters.
func (t *serveTelemetry) shutdown(ctx context.Context) error {
	var errs []error
	for _, stop := range t.stop {
		errs = append(errs, stop(ctx))
	}
	return errors.Join(errs...)
}

// newLogger returns serve's logger: text or JSON lines on w, from level
// on, each with the trace and span ids of its context's span, if any.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErrorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		opts.ReplaceAttr = escapeAttr
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, usageErrorf("--log-format %q: want text or json", format)
	}
	return slog.New(traceHandler{h}), nil
}

// escapeAttr escapes, in the strings of a JSON log record (its message,
// string values, errors), the characters that the text format quotes
// (strconv.Quote's: control, format and bidi characters, anything not
// printable) as \uXXXX, so that a JSON log shows what a text log shows: a
// server's U+202E reaches neither raw. JSON's own escapes (quotes,
// backslashes, line breaks) are the JSON handler's.
func escapeAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); needsEscape(s) {
			a.Value = slog.StringValue(escapeText(s))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			if s := err.Error(); needsEscape(s) {
				a.Value = slog.StringValue(escapeText(s))
			}
		}
	}
	return a
}

// needsEscape reports whether s has a character escapeText escapes.
func needsEscape(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf && !strconv.IsPrint(r) {
			return true
		}
	}
	return false
}

// escapeText writes the non-ASCII characters of s that are not printable
// as \uXXXX (\UXXXXXXXX past the basic plane), as strconv.Quote does;
// ASCII control characters are left to JSON's own escapes.
func escapeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf || strconv.IsPrint(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// traceHandler adds trace_id and span_id to the records logged in the
// context of a span.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
