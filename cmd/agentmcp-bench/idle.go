package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// idleReport is what the idle child prints: memory per connection.
type idleReport struct {
	HeapPerConn        float64 `json:"heapPerConn"`
	StackPerConn       float64 `json:"stackPerConn"`
	GoroutinesPerConn  float64 `json:"goroutinesPerConn"`
	HeapPerConnCatalog float64 `json:"heapPerConnCatalog,omitempty"` // Manager: after discovery too
}

const (
	implManager = "manager"
	implRaw     = "raw"
)

// runIdle measures, in a child process per (era, implementation), the
// memory of c.idle idle connections, each to its own server.
func runIdle(ctx context.Context, c *config, srv *serverProc) (string, []figure, error) {
	if len(srv.urls.Extra) < c.idle {
		return "", nil, fmt.Errorf("the server process has %d extra listeners, want %d", len(srv.urls.Extra), c.idle)
	}
	tmp, err := os.MkdirTemp("", "agentmcp-bench-idle")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	urlsFile := filepath.Join(tmp, "urls.json")
	data, _ := json.Marshal(srv.urls.Extra[:c.idle])
	if err := os.WriteFile(urlsFile, data, 0o600); err != nil {
		return "", nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	reports := map[string][]idleReport{} // era|impl
	reps := min(c.reps, 3)
	for rep := range reps {
		for _, e := range eras {
			for _, impl := range []string{implManager, implRaw} {
				progress(c.stderr, "idle: %s, %s, repetition %d/%d", e.name, impl, rep+1, reps)
				args := []string{"idle", "-impl", impl, "-era", e.name, "-path", e.path, "-urls", urlsFile}
				if c.heapprofile != "" && rep == 0 {
					args = append(args, "-heapprofile", fmt.Sprintf("%s-%s-%s.heap", c.heapprofile, e.name, impl))
				}
				var r idleReport
				if err := childJSON(ctx, "idle child", &r, exe, args...); err != nil {
					return "", nil, err
				}
				reports[e.name+"|"+impl] = append(reports[e.name+"|"+impl], r)
			}
		}
	}
	med := func(era, impl string, f func(idleReport) float64) float64 {
		var xs []float64
		for _, r := range reports[era+"|"+impl] {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	heap := func(r idleReport) float64 { return r.HeapPerConn }
	t := newTable("era", "client", "heap B/conn", "stack B/conn", "goroutines/conn", "heap B/conn with catalog")
	t.align = []bool{false, false, true, true, true, true}
	for _, e := range eras {
		for _, impl := range []string{implManager, implRaw} {
			name := clientManager
			if impl == implRaw {
				name = clientRaw
			}
			catalog := ""
			if impl == implManager {
				catalog = fmt.Sprintf("%.0f", med(e.name, impl, func(r idleReport) float64 { return r.HeapPerConnCatalog }))
			}
			t.add(e.name, name, fmt.Sprintf("%.0f", med(e.name, impl, heap)),
				fmt.Sprintf("%.0f", med(e.name, impl, func(r idleReport) float64 { return r.StackPerConn })),
				fmt.Sprintf("%.1f", med(e.name, impl, func(r idleReport) float64 { return r.GoroutinesPerConn })),
				catalog)
		}
	}
	bytesV, bytesNote := worst(false, func(e string) float64 { return med(e, implManager, heap) })
	ratioV, ratioNote := worst(false, func(e string) float64 { return med(e, implManager, heap) / med(e, implRaw, heap) })
	catV, catNote := worst(false, func(e string) float64 {
		return med(e, implManager, func(r idleReport) float64 { return r.HeapPerConnCatalog })
	})
	title := fmt.Sprintf("Idle connections: heap after GC per connection, %d connections to %d servers (child process each)\n", c.idle, c.idle)
	return title + t.String(), []figure{
		{name: "idle_conn_bytes", value: bytesV, note: "heap per connected session, worst era; " + bytesNote},
		{name: "idle_conn_ratio_vs_raw", value: ratioV, goal: "<= 0.6", note: "worst era; " + ratioNote},
		{name: "idle_conn_bytes_with_catalog", value: catV, note: "after discovery (the catalog kept), worst era; " + catNote},
	}, nil
}

// idleChild connects -n idle sessions and reports the memory they hold.
func idleChild(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("idle", flag.ContinueOnError)
	impl := fs.String("impl", implManager, "manager or raw")
	eraName := fs.String("era", "", "protocol version to pin")
	path := fs.String("path", pathStateful, "server path")
	urlsFile := fs.String("urls", "", "JSON list of server base URLs")
	heapprofile := fs.String("heapprofile", "", "write a heap profile of the connected sessions here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := os.ReadFile(*urlsFile)
	if err != nil {
		return err
	}
	var bases []string
	if err := json.Unmarshal(data, &bases); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	n := len(bases)

	type snapshot struct {
		heap, stack uint64
		goroutines  int
	}
	if *heapprofile != "" {
		runtime.MemProfileRate = 512
	}
	writeHeap := func(suffix string) error {
		if *heapprofile == "" {
			return nil
		}
		f, err := os.Create(*heapprofile + suffix)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.Lookup("heap").WriteTo(f, 0)
	}
	take := func() snapshot {
		time.Sleep(200 * time.Millisecond) // let streams open and goroutines settle
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return snapshot{ms.HeapAlloc, ms.StackInuse, runtime.NumGoroutine()}
	}
	per := func(a, b snapshot) (heap, stack, gs float64) {
		return (float64(b.heap) - float64(a.heap)) / float64(n),
			(float64(b.stack) - float64(a.stack)) / float64(n),
			float64(b.goroutines-a.goroutines) / float64(n)
	}
	var r idleReport
	switch *impl {
	case implManager:
		m := mcpclient.New(nil)
		defer m.Close(context.Background())
		ids := make([]string, n)
		before := take()
		for i, base := range bases {
			ids[i] = "s" + strconv.Itoa(i)
			if _, err := m.RegisterServer(ctx, ids[i], mcpclient.ServerOptions{URL: base + *path,
				Transport: mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP},
				Client:    mcpclient.ClientOptions{ProtocolVersion: *eraName}}); err != nil {
				return err
			}
		}
		if err := parallel(n, func(i int) error {
			res, err := m.ConnectToServer(ctx, ids[i])
			if err == nil && res.State != mcpclient.StateConnected {
				err = fmt.Errorf("%s: %v", res.State, res.Err)
			}
			return err
		}); err != nil {
			return err
		}
		connected := take()
		r.HeapPerConn, r.StackPerConn, r.GoroutinesPerConn = per(before, connected)
		if err := writeHeap(""); err != nil {
			return err
		}
		if err := parallel(n, func(i int) error {
			d, err := m.DiscoverIfConnected(ctx, ids[i], nil)
			if err == nil && !d.Success {
				err = fmt.Errorf("discover: %s: %v", d.State, d.Err)
			}
			return err
		}); err != nil {
			return err
		}
		r.HeapPerConnCatalog, _, _ = per(before, take())
		if err := writeHeap(".catalog"); err != nil {
			return err
		}
	case implRaw:
		hc := newHTTPClient()
		// Listening for list changes, as the Manager does (a 2026-07-28
		// session then holds a subscriptions/listen stream open, as a
		// legacy one holds its GET stream).
		client := rawListeningClient()
		sessions := make([]*mcp.ClientSession, n)
		before := take()
		if err := parallel(n, func(i int) error {
			var err error
			sessions[i], err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: bases[i] + *path, HTTPClient: hc},
				&mcp.ClientSessionOptions{ProtocolVersion: *eraName})
			return err
		}); err != nil {
			return err
		}
		r.HeapPerConn, r.StackPerConn, r.GoroutinesPerConn = per(before, take())
		if err := writeHeap(""); err != nil {
			return err
		}
		for _, s := range sessions {
			s.Close()
		}
	default:
		return fmt.Errorf("unknown -impl %q", *impl)
	}
	return json.NewEncoder(stdout).Encode(r)
}

// parallel runs fn(0..n-1) on 8 goroutines and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
