package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync/atomic"
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
	sessions := fs.Int("sessions", 1, "clients (sessions) the callers share, taken in turn, each with its own connection pool")
	n := fs.Int("n", 5000, "calls")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile here")
	memprofile := fs.String("memprofile", "", "write an allocation profile here")
	mutexprofile := fs.String("mutexprofile", "", "write a mutex contention profile of the calls here")
	blockprofile := fs.String("blockprofile", "", "write a blocking profile of the calls here")
	tracefile := fs.String("trace", "", "write an execution trace of the calls here (go tool trace)")
	serverprofile := fs.String("server-cpuprofile", "", "the server process writes a CPU profile of its whole life here")
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
	var serverArgs []string
	if *serverprofile != "" {
		serverArgs = []string{"-cpuprofile", *serverprofile}
	}
	srv, err := startServer(ctx, 0, serverArgs...)
	if err != nil {
		return err
	}
	defer srv.stop()
	if *server != serverFast && *server != serverGoSDK {
		return fmt.Errorf("unknown -server %q", *server)
	}
	url := srv.urls.Main + e.pathOf(*server)
	newCaller := func() (caller, error) {
		hc := newHTTPClient()
		switch *client {
		case "manager":
			return newManagerCaller(ctx, url, e.name, "")
		case "manager-sdk":
			return newManagerCaller(ctx, url, e.name, mcpclient.ImplementationGoSDK)
		case "manager-off":
			return newTelemetryOffCaller(ctx, url, e.name)
		case "manager-otel":
			return newOTelCaller(ctx, url, e.name)
		case "raw":
			return newRawCaller(ctx, url, e.name, hc)
		case "floor":
			return newFloorCaller(ctx, url, e.name, hc)
		}
		return nil, fmt.Errorf("unknown -client %q", *client)
	}
	var c caller
	if *sessions > 1 {
		rc := &roundRobin{}
		c = rc
		for range *sessions {
			one, err := newCaller()
			if err != nil {
				rc.close()
				return err
			}
			rc.callers = append(rc.callers, one)
		}
	} else if c, err = newCaller(); err != nil {
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
	if *mutexprofile != "" {
		runtime.SetMutexProfileFraction(1)
	}
	if *blockprofile != "" {
		runtime.SetBlockProfileRate(1)
	}
	stopTrace, err := startTrace(*tracefile)
	if err != nil {
		stopCPU()
		return err
	}
	srvCPU := pidCPU(srv.cmd.Process.Pid)
	s, err := measure(ctx, c, workload{name: "profile", tool: *tool, conc: *conc, n: *n})
	srvCPU = pidCPU(srv.cmd.Process.Pid) - srvCPU
	stopTrace()
	stopCPU()
	runtime.SetMutexProfileFraction(0)
	runtime.SetBlockProfileRate(0)
	if err != nil {
		return err
	}
	for _, p := range []struct{ name, file string }{{"mutex", *mutexprofile}, {"block", *blockprofile}} {
		if p.file == "" {
			continue
		}
		if err := writeProfile(p.name, p.file); err != nil {
			return err
		}
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
	fmt.Fprintf(stdout, "%s %s %s server, %s conc=%d n=%d: p50 %v p99 %v, %.0f calls/s, CPU %v/call (server %v), %.1f KiB/call, %.0f allocs/call\n",
		*client, e.name, *server, *tool, *conc, *n, s.p50.Round(time.Microsecond), s.p99.Round(time.Microsecond), s.perSec,
		s.cpuPerCall.Round(100*time.Nanosecond), (srvCPU / time.Duration(*n)).Round(100*time.Nanosecond), s.bytesPerCall/1024, s.allocsPerOp)
	return nil
}

// startTrace starts an execution trace into file, if set; the function it
// returns stops it.
func startTrace(file string) (func(), error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		trace.Stop()
		f.Close()
	}, nil
}

// roundRobin spreads calls over several callers, in turn.
type roundRobin struct {
	callers []caller
	next    atomic.Uint64
}

func (r *roundRobin) call(ctx context.Context, tool string) error {
	return r.callers[r.next.Add(1)%uint64(len(r.callers))].call(ctx, tool)
}

func (r *roundRobin) close() {
	for _, c := range r.callers {
		c.close()
	}
}
