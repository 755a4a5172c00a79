package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// telemetryNoopNs measures, in nanoseconds, what the Manager's per-request
// telemetry middleware adds to one tool call with the default (no-op)
// OpenTelemetry providers: BenchmarkTelemetryMiddleware of
// mcpclient/internal/telemetry, run by go test from the module's
// directory, its "noop" case minus its "bare" one, the median of five
// counts. Against a whole call's client CPU, it
// gives the no-op ratio that the calls' own run-to-run noise on a shared
// machine (±10 % and more) cannot show.
func telemetryNoopNs(ctx context.Context) (float64, error) {
	gomod, err := childOutput(ctx, "go env GOMOD", "go", "env", "GOMOD")
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(strings.TrimSpace(string(gomod)))
	out, err := childOutput(ctx, "go test -bench BenchmarkTelemetryMiddleware", "go", "test", "-C", dir, "-run", "^$",
		"-bench", "^BenchmarkTelemetryMiddleware$", "-benchtime", "500000x", "-count", "5", "./mcpclient/internal/telemetry")
	if err != nil {
		return 0, err
	}
	return parseNoopBench(out)
}

var benchLine = regexp.MustCompile(`^BenchmarkTelemetryMiddleware/(bare|noop)(?:-\d+)?\s+\d+\s+([0-9.]+) ns/op`)

// parseNoopBench returns the median "noop" minus the median "bare" of go
// test -bench output.
func parseNoopBench(out []byte) (float64, error) {
	ns := map[string][]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := benchLine.FindStringSubmatch(sc.Text()); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return 0, err
			}
			ns[m[1]] = append(ns[m[1]], v)
		}
	}
	if len(ns["bare"]) == 0 || len(ns["noop"]) == 0 {
		return 0, fmt.Errorf("BenchmarkTelemetryMiddleware: no result in %q", out)
	}
	return median(ns["noop"]) - median(ns["bare"]), nil
}
