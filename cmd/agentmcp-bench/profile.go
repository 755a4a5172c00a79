package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// profile runs one call workload against a server process, with CPU and
// allocation profiles, for `go tool pprof`.
func profile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	client := fs.String("client", "manager", "manager, manager-sdk (the Manager on go-sdk's transport), manager-off (without telemetry), manager-otel (with the OpenTelemetry SDK), raw or floor")
	eraName := fs.String("era", protocol.LatestSession, protocol.Stateless+" or "+protocol.LatestSession)
	tool := fs.String("tool", "echo", "echo or big")
	server := fs.String("server", serverFast, "replay (the go-sdk server's answers, replayed) or go-sdk")
	conc := fs.Int("conc", 1, "concurrent callers")
	n := fs.Int("n", 5000, "calls")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile here")
	memprofile := fs.String("memprofile", "", "write an allocation profile here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *memprofile != "" {
		// Finer sampling for the allocation profile (it slows the calls:
		// take CPU profiles in a run of their own).
		runtime.MemProfileRate = 4096
	}
	var e era
	for _, x := range eras {
		if x.name == *eraName {
			e = x
		}
	}
	if e.name == "" {
		return fmt.Errorf("unknown era %q", *eraName)
	}
	srv, err := startServer(ctx, 0)
	if err != nil {
		return err
	}
	defer srv.stop()
	if *server != serverFast && *server != serverGoSDK {
		return fmt.Errorf("unknown -server %q", *server)
	}
	url := srv.urls.Main + e.pathOf(*server)
	hc := newHTTPClient()
	var c caller
	switch *client {
	case "manager":
		c, err = newManagerCaller(ctx, url, e.name, "")
	case "manager-sdk":
		c, err = newManagerCaller(ctx, url, e.name, mcpclient.ImplementationGoSDK)
	case "manager-off":
		c, err = newTelemetryOffCaller(ctx, url, e.name)
	case "manager-otel":
		c, err = newOTelCaller(ctx, url, e.name)
	case "raw":
		c, err = newRawCaller(ctx, url, e.name, hc)
	case "floor":
		c, err = newFloorCaller(ctx, url, e.name, hc)
	default:
		return fmt.Errorf("unknown -client %q", *client)
	}
	if err != nil {
		return err
	}
	defer c.close()
	if err := warm(ctx, c, *tool, 100); err != nil {
		return err
	}
	stopCPU, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	s, err := measure(ctx, c, workload{name: "profile", tool: *tool, conc: *conc, n: *n})
	stopCPU()
	if err != nil {
		return err
	}
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s %s %s server, %s conc=%d n=%d: p50 %v p99 %v, %.0f calls/s, CPU %v/call, %.1f KiB/call, %.0f allocs/call\n",
		*client, e.name, *server, *tool, *conc, *n, s.p50.Round(time.Microsecond), s.p99.Round(time.Microsecond), s.perSec,
		s.cpuPerCall.Round(100*time.Nanosecond), s.bytesPerCall/1024, s.allocsPerOp)
	return nil
}
