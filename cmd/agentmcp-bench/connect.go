package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Clients of the connect section, as printed.
const (
	// connectManager lists the tools alone (ClientOptions.ToolsOnly): the
	// same requests as go-sdk's Connect and ListTools.
	connectManager = "agentmcp, ToolsOnly"
	// connectManagerAll is the default Manager, whose discovery lists
	// every list the server advertises (here four).
	connectManagerAll = "agentmcp, every list"
	connectRaw        = "go-sdk ClientSession"
	// connectRawQuiet is go-sdk's client without list-changed handlers: a
	// 2026-07-28 session then opens no subscriptions/listen stream (a
	// 2025-11-25 one still opens its GET stream). Shown, not compared.
	connectRawQuiet = "go-sdk, no list-change handlers"
)

var connectClients = []string{connectManager, connectManagerAll, connectRaw, connectRawQuiet}

// connectSample is what one block of connects measured for one client.
type connectSample struct {
	ms             float64 // median wall time of a connect, ms
	cpuMs          float64 // client CPU per connect, ms
	bytes, mallocs float64 // per connect
}

// connectOnce connects a new client of kind to url in era version, from
// nothing (a new client and connection pool, so every connection is
// dialled), until its first tools are listed. It returns the wall time of
// that; closing the client is not timed.
func connectOnce(ctx context.Context, kind, url, version string) (time.Duration, error) {
	switch kind {
	case connectManager, connectManagerAll:
		// A Manager as an application makes it: register the server,
		// connect and discover; its tools are then listed (ListTools). It
		// listens for list changes.
		start := time.Now()
		m := mcpclient.New(&mcpclient.Options{EndSessionsOnClose: true})
		err := connectReady(ctx, m, "s", mcpclient.ServerOptions{
			URL:       url,
			Transport: mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP},
			Client:    mcpclient.ClientOptions{ProtocolVersion: version, ToolsOnly: kind == connectManager},
		})
		if err == nil && len(m.ListTools(mcpclient.Filter{})) == 0 {
			err = fmt.Errorf("no tools listed")
		}
		d := time.Since(start)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Close(cctx)
		return d, err
	default:
		// go-sdk's client: connect (initialize and initialized, or
		// server/discover), then tools/list. With list-changed handlers,
		// as the Manager has, it opens a 2026-07-28 subscriptions/listen
		// stream during the connect.
		start := time.Now()
		hc := newHTTPClient()
		defer hc.CloseIdleConnections()
		client := rawListeningClient()
		if kind == connectRawQuiet {
			client = mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
		}
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			return 0, err
		}
		defer cs.Close()
		res, err := cs.ListTools(ctx, nil)
		if err == nil && len(res.Tools) == 0 {
			err = fmt.Errorf("no tools listed")
		}
		return time.Since(start), err
	}
}

// measureConnects runs n connects of one client and returns the median.
func measureConnects(ctx context.Context, kind, url, version string, n int) (connectSample, error) {
	ds := make([]float64, 0, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := processCPU()
	for range n {
		d, err := connectOnce(ctx, kind, url, version)
		if err != nil {
			return connectSample{}, err
		}
		ds = append(ds, float64(d)/1e6)
	}
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&after)
	// CPU and allocations include closing, which is not timed.
	return connectSample{
		ms:      median(ds),
		cpuMs:   float64(cpu) / 1e6 / float64(n),
		bytes:   float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
		mallocs: float64(after.Mallocs-before.Mallocs) / float64(n),
	}, nil
}

// runConnect times connecting to the go-sdk server in both eras, each
// client from nothing to its first listed tools, c.connects times per
// repetition, the clients taking turns.
func runConnect(ctx context.Context, c *config, srv *serverProc) (string, []figure, error) {
	samples := map[string][]connectSample{} // by era and client
	for _, e := range eras {
		url := srv.urls.Main + e.path
		for _, kind := range connectClients {
			// Warm up: code paths, and the server's.
			if _, err := measureConnects(ctx, kind, url, e.name, 5); err != nil {
				return "", nil, fmt.Errorf("%s, %s: %w", e.name, kind, err)
			}
		}
		for rep := range c.reps {
			progress(c.stderr, "connect, %s: repetition %d/%d", e.name, rep+1, c.reps)
			for i := range connectClients {
				kind := connectClients[(i+rep)%len(connectClients)]
				s, err := measureConnects(ctx, kind, url, e.name, c.connects)
				if err != nil {
					return "", nil, fmt.Errorf("%s, %s: %w", e.name, kind, err)
				}
				samples[e.name+"|"+kind] = append(samples[e.name+"|"+kind], s)
			}
		}
	}
	t := newTable("era", "client", "connect to tools ms", "client CPU ms", "KiB", "allocs")
	t.align = []bool{false, false, true, true, true, true}
	med := func(k string, f func(connectSample) float64) float64 {
		var xs []float64
		for _, s := range samples[k] {
			xs = append(xs, f(s))
		}
		return median(xs)
	}
	var figs []figure
	for _, e := range eras {
		for _, kind := range connectClients {
			k := e.name + "|" + kind
			t.add(e.name, kind,
				fmt.Sprintf("%.2f", med(k, func(s connectSample) float64 { return s.ms })),
				fmt.Sprintf("%.2f", med(k, func(s connectSample) float64 { return s.cpuMs })),
				fmt.Sprintf("%.1f", med(k, func(s connectSample) float64 { return s.bytes })/1024),
				fmt.Sprintf("%.0f", med(k, func(s connectSample) float64 { return s.mallocs })))
		}
		// The ratio of the two clients' medians, repetition by repetition.
		a, b := samples[e.name+"|"+connectManager], samples[e.name+"|"+connectRaw]
		var ratios []float64
		for i := range min(len(a), len(b)) {
			ratios = append(ratios, a[i].ms/b[i].ms)
		}
		name, what := "connect_ms_vs_raw_sdk_2025", "connect + initialize (and the GET stream) + tools/list, 2025-11-25 session"
		if e.name == eras[0].name {
			name, what = "connect_ms_vs_raw_sdk_2026", "connect + server/discover (and subscriptions/listen) + tools/list, 2026-07-28 stateless"
		}
		figs = append(figs, figure{name: name, value: median(ratios), goal: "<= 0.8",
			note: fmt.Sprintf("a new client to its first listed tools, agentmcp (ToolsOnly) over go-sdk, both listening for list changes, go-sdk server, median of %d per repetition: %s", c.connects, what)})
	}
	title := fmt.Sprintf("Connect: a new client to its first listed tools, go-sdk server (separate process), %d connects per repetition (medians);\n", c.connects) +
		"agentmcp: New, RegisterServer, ConnectToServer, DiscoverIfConnected (tools alone with ToolsOnly, else every list the server advertises), ListTools;\n" +
		"go-sdk: NewClient, Connect, ListTools. CPU and allocations per connect include closing it (not timed).\n"
	return title + t.String(), figs, nil
}
