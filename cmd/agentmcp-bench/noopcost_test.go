package main

import (
	"math"
	"testing"
)

func TestParseNoopBench(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkTelemetryMiddleware/bare-2         	  500000	         2.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkTelemetryMiddleware/noop-2         	  500000	       470.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkTelemetryMiddleware/bare-2         	  500000	         4.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkTelemetryMiddleware/noop-2         	  500000	       490.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkTelemetryMiddleware/noop           	  500000	       900.0 ns/op	       0 B/op	       0 allocs/op
PASS
`)
	got, err := parseNoopBench(out)
	if err != nil || math.Abs(got-487) > 1e-9 { // median(470, 490, 900) - median(2, 4)
		t.Errorf("parseNoopBench = %v, %v; want 487", got, err)
	}
	if _, err := parseNoopBench([]byte("FAIL\n")); err == nil {
		t.Error("no result: want an error")
	}
}
