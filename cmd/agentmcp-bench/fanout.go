package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectAll registers the servers at urls on a new Manager and connects
// and discovers them all at once; it returns the wall time and how many
// ended ready. The Manager is closed (its sessions ended) before it
// returns.
func connectAll(ctx context.Context, urls []string) (time.Duration, int, error) {
	m := mcpclient.New(nil)
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		m.Close(cctx)
	}()
	for i, u := range urls {
		if _, err := m.RegisterServer(ctx, fmt.Sprintf("s%04d", i), mcpclient.ServerOptions{URL: u}); err != nil {
			return 0, 0, err
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ready := 0
	var firstErr error
	start := time.Now()
	for i := range urls {
		id := fmt.Sprintf("s%04d", i)
		wg.Go(func() {
			res, err := m.ConnectToServer(ctx, id)
			if err == nil && res.State == mcpclient.StateConnected {
				var d mcpclient.DiscoverResult
				if d, err = m.DiscoverIfConnected(ctx, id, nil); err == nil && d.Success {
					mu.Lock()
					ready++
					mu.Unlock()
					return
				}
				if err == nil {
					err = d.Err
				}
			} else if err == nil {
				err = res.Err
			}
			mu.Lock()
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", id, err)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if ready != len(urls) {
		return wall, ready, fmt.Errorf("%d of %d servers ready; first failure: %w", ready, len(urls), firstErr)
	}
	return wall, ready, nil
}

// connectAllRaw is connectAll with go-sdk alone: one ClientSession per
// server on go-sdk's streamable transport (default options: the era
// negotiated, the GET stream of a legacy session opened), listing what each
// server's capabilities offer, as the Manager's discovery does. The
// sessions are closed before it returns.
func connectAllRaw(ctx context.Context, urls []string) (time.Duration, error) {
	hc := newHTTPClient()
	client := rawListeningClient()
	sessions := make([]*mcp.ClientSession, len(urls))
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	start := time.Now()
	err := parallel(len(urls), func(i int) error {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: urls[i], HTTPClient: hc}, nil)
		if err != nil {
			return err
		}
		sessions[i] = cs
		caps := cs.InitializeResult().Capabilities
		if caps.Tools != nil {
			if _, err := cs.ListTools(ctx, nil); err != nil {
				return err
			}
		}
		if caps.Prompts != nil {
			if _, err := cs.ListPrompts(ctx, nil); err != nil {
				return err
			}
		}
		if caps.Resources != nil {
			if _, err := cs.ListResources(ctx, nil); err != nil {
				return err
			}
			if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
				return err
			}
		}
		return nil
	})
	return time.Since(start), err
}

// rawListeningClient is go-sdk's client listening for list changes, as
// the Manager does (a 2026-07-28 session then holds a subscriptions/listen
// stream open, as a legacy one holds its GET stream).
func rawListeningClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
	})
}

// runFanout connects and discovers c.fanout servers at once, and one alone,
// with the default options (auto transport, negotiated era) against the
// server process's stateful listeners.
func runFanout(ctx context.Context, c *config, srv *serverProc) (string, []figure, error) {
	if len(srv.urls.Extra) < c.fanout {
		return "", nil, fmt.Errorf("the server process has %d extra listeners, want %d", len(srv.urls.Extra), c.fanout)
	}
	urls := make([]string, c.fanout)
	for i := range urls {
		urls[i] = srv.urls.Extra[i] + pathStateful
	}
	// Warm up: code paths, and the server process's handlers.
	if _, _, err := connectAll(ctx, urls[:1]); err != nil {
		return "", nil, err
	}
	if _, err := connectAllRaw(ctx, urls[:1]); err != nil {
		return "", nil, err
	}
	var alone, all, ratios, clientCPU, serverCPU, rawCPU, rawWall, cpuRatios []float64
	for rep := range c.reps {
		progress(c.stderr, "fanout: repetition %d/%d", rep+1, c.reps)
		var ones []float64
		for i := range 3 {
			d, _, err := connectAll(ctx, urls[i:i+1])
			if err != nil {
				return "", nil, err
			}
			ones = append(ones, d.Seconds())
		}
		one := median(ones)
		// Each client starts from a collected heap, as a calls block
		// does: the sweeping of the other's garbage (go-sdk's, a few
		// hundred MB a round) was billed to whichever ran next.
		runtime.GC()
		c0, s0 := processCPU(), pidCPU(srv.cmd.Process.Pid)
		d, _, err := connectAll(ctx, urls)
		if err != nil {
			return "", nil, err
		}
		clientCPU = append(clientCPU, (processCPU() - c0).Seconds())
		serverCPU = append(serverCPU, (pidCPU(srv.cmd.Process.Pid) - s0).Seconds())
		alone = append(alone, one)
		all = append(all, d.Seconds())
		ratios = append(ratios, d.Seconds()/one)
		// go-sdk alone, the same servers at once, right after.
		runtime.GC()
		c0 = processCPU()
		rd, err := connectAllRaw(ctx, urls)
		if err != nil {
			return "", nil, fmt.Errorf("go-sdk alone: %w", err)
		}
		rc := (processCPU() - c0).Seconds()
		rawCPU = append(rawCPU, rc)
		rawWall = append(rawWall, rd.Seconds())
		cpuRatios = append(cpuRatios, clientCPU[len(clientCPU)-1]/rc)
	}
	t := newTable("servers", "connect+discover wall ms", "wall per server ms", "client CPU per server ms", "server CPU per server ms")
	t.add("1", fmt.Sprintf("%.1f", median(alone)*1e3), fmt.Sprintf("%.2f", median(alone)*1e3), "", "")
	n := float64(c.fanout)
	t.add(fmt.Sprint(c.fanout), fmt.Sprintf("%.1f", median(all)*1e3), fmt.Sprintf("%.2f", median(all)*1e3/n),
		fmt.Sprintf("%.2f", median(clientCPU)*1e3/n), fmt.Sprintf("%.2f", median(serverCPU)*1e3/n))
	t.add(fmt.Sprint(c.fanout)+", go-sdk alone", fmt.Sprintf("%.1f", median(rawWall)*1e3), fmt.Sprintf("%.2f", median(rawWall)*1e3/n),
		fmt.Sprintf("%.2f", median(rawCPU)*1e3/n), "")
	title := "Fan-out: connect and discover at once (auto transport, negotiated era, stateful go-sdk servers on their own ports)\n"
	return title + t.String(), []figure{
		{name: "fanout_client_cpu_vs_raw_sdk", value: median(cpuRatios), goal: "<= 0.5",
			note: fmt.Sprintf("client CPU to connect and discover %d servers at once, agentmcp over go-sdk alone", c.fanout)},
		{name: "fanout_wall_ratio", value: median(ratios),
			note: fmt.Sprintf("%d servers at once over one alone (bound by the servers' CPU on 2 cores)", c.fanout)},
	}, nil
}
