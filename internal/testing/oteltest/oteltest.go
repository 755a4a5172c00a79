// Package oteltest records OpenTelemetry spans and metrics in memory for
// tests, and reads them back. It is for tests only.
package oteltest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Recorder is an SDK tracer provider whose ended spans Spans holds, and an
// SDK meter provider that Reader collects on demand.
type Recorder struct {
	Spans          *tracetest.SpanRecorder
	Reader         *sdkmetric.ManualReader
	TracerProvider *sdktrace.TracerProvider
	MeterProvider  *sdkmetric.MeterProvider
}

// New returns a Recorder whose providers are shut down when the test ends.
func New(t testing.TB) *Recorder {
	r := &Recorder{Spans: tracetest.NewSpanRecorder(), Reader: sdkmetric.NewManualReader()}
	r.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.Spans))
	r.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.Reader))
	t.Cleanup(func() {
		r.TracerProvider.Shutdown(context.Background())
		r.MeterProvider.Shutdown(context.Background())
	})
	return r
}

// AttrMap returns attributes as a map of their keys to their values'
// text.
func AttrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// HasAttrs reports whether kvs include every key of want with its value.
func HasAttrs(kvs []attribute.KeyValue, want map[string]string) bool {
	a := AttrMap(kvs)
	for k, v := range want {
		if a[k] != v {
			return false
		}
	}
	return true
}

// HistogramCount sums the counts of the data points of the float64
// histogram name whose attributes include want.
func HistogramCount(rm metricdata.ResourceMetrics, name string, want map[string]string) uint64 {
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if h, ok := mt.Data.(metricdata.Histogram[float64]); ok && mt.Name == name {
				for _, dp := range h.DataPoints {
					if HasAttrs(dp.Attributes.ToSlice(), want) {
						n += dp.Count
					}
				}
			}
		}
	}
	return n
}

// IntValue sums the values of the data points of the int64 gauge or sum
// name whose attributes include want.
func IntValue(rm metricdata.ResourceMetrics, name string, want map[string]string) int64 {
	var n int64
	add := func(dps []metricdata.DataPoint[int64]) {
		for _, dp := range dps {
			if HasAttrs(dp.Attributes.ToSlice(), want) {
				n += dp.Value
			}
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if mt.Name != name {
				continue
			}
			switch d := mt.Data.(type) {
			case metricdata.Gauge[int64]:
				add(d.DataPoints)
			case metricdata.Sum[int64]:
				add(d.DataPoints)
			}
		}
	}
	return n
}
