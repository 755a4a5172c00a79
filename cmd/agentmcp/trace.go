package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// traceUsage documents --trace, for call and inspect.
const traceUsage = `  --trace          when done, print on stderr the tree of the command's spans
                   (connecting, the handshake, discovery, the call) with
                   their durations. Only span names, durations and error
                   types are printed, never arguments, results, headers or
                   tokens.
`

// cmdTrace records the spans of one command in memory, for --trace.
type cmdTrace struct {
	rec  *tracetest.SpanRecorder
	tp   *sdktrace.TracerProvider
	root trace.Span
}

// startTrace starts the command's root span, name, and returns ctx with it
// and the trace whose TracerProvider the command's Manager must use.
func startTrace(ctx context.Context, name string) (context.Context, *cmdTrace) {
	rec := tracetest.NewSpanRecorder()
	t := &cmdTrace{rec: rec, tp: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
	ctx, t.root = t.tp.Tracer("github.com/agentmcp/agentmcp/cmd/agentmcp").Start(ctx, name)
	return ctx, t
}

// provider returns the TracerProvider for the command's Manager: nil (the
// global one) when t is nil.
func (t *cmdTrace) provider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.tp
}

// finish ends the root span (with err's status) and prints the tree of
// every span recorded to w: children under their parent, in the order they
// started, each with its duration and, when it failed, its error type.
// Spans whose parent was not recorded are printed as roots of their own.
func (t *cmdTrace) finish(w io.Writer, err error) {
	if t == nil {
		return
	}
	if err != nil {
		t.root.SetStatus(codes.Error, "")
	}
	t.root.End()
	_ = t.tp.Shutdown(context.Background())
	fmt.Fprint(w, formatSpanTree(t.rec.Ended()))
}

// formatSpanTree renders spans as an indented tree.
func formatSpanTree(spans []sdktrace.ReadOnlySpan) string {
	byID := map[trace.SpanID]bool{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = true
	}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if p := s.Parent().SpanID(); s.Parent().IsValid() && byID[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	byStart := func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) }
	var b strings.Builder
	b.WriteString("trace:\n")
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		line := strings.Repeat("  ", depth+1) + s.Name()
		fmt.Fprintf(&b, "%-52s %10s", line, formatDuration(s.EndTime().Sub(s.StartTime())))
		if s.Status().Code == codes.Error {
			b.WriteString("  error")
			for _, a := range s.Attributes() {
				if a.Key == attribute.Key("error.type") {
					b.WriteString(": " + a.Value.String())
				}
			}
		}
		b.WriteByte('\n')
		kids := children[s.SpanContext().SpanID()]
		slices.SortStableFunc(kids, byStart)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	slices.SortStableFunc(roots, byStart)
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

// formatDuration prints d with a precision that fits it: 1.234s, 12.3ms,
// 456µs.
func formatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%dµs", d.Microseconds())
	}
}
