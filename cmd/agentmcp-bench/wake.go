package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// The wake part of the aitools section measures a woken agent's first
// AITools: the time from opening the agent from its store (what a Host
// does on a wake) until AITools holds every tool of its servers. With the
// catalogs stored with the agent, that needs no server; without (the
// agent.Options.NoStoredCatalogs baseline), it waits for every server's
// first connection. The MCP servers run in this process on 127.0.0.1.

const (
	wakeServers  = 5  // servers of the woken agent
	wakeTools    = 30 // tools per server
	wakeBaseline = 20 // timed wakes without stored catalogs
)

// runWakeFirstTools measures c.hibWakes wakes with stored catalogs and
// wakeBaseline without.
func runWakeFirstTools(ctx context.Context, c *config) (string, []figure, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	for s := range wakeServers {
		srv := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("wake-%d", s), Version: "1"}, nil)
		for i := range wakeTools {
			srv.AddTool(&mcp.Tool{
				Name:        fmt.Sprintf("list_items_%d", i),
				Description: fmt.Sprintf("Lists the items of kind %d.", s*wakeTools+i),
				InputSchema: toolSchema(s*wakeTools + i),
			}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		}
		get := func(*http.Request) *mcp.Server { return srv }
		mux.Handle(fmt.Sprintf("/wake%d", s), mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: s%2 == 1}))
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(l)
	defer hs.Close()

	tmp, err := os.MkdirTemp("", "agentmcp-bench-wake")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	st, err := sqlite.Open(ctx, filepath.Join(tmp, "wake.db"), nil)
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	a, err := agent.Open(ctx, st, "wake", "w", nil)
	if err != nil {
		return "", nil, err
	}
	for s := range wakeServers {
		if _, err := a.AddMCPServer(ctx, fmt.Sprintf("s%d", s), fmt.Sprintf("http://%s/wake%d", l.Addr(), s), nil); err != nil {
			a.Close(ctx)
			return "", nil, err
		}
	}
	a.WaitForConnections(ctx)
	if err := a.Close(ctx); err != nil {
		return "", nil, err
	}
	want := wakeServers * wakeTools

	// wake opens the agent, waits (without stored catalogs) for its
	// servers' catalogs, and returns how long it took until AITools held
	// them all.
	wake := func(opts *agent.Options) (time.Duration, error) {
		start := time.Now()
		a, err := agent.Open(ctx, st, "wake", "w", opts)
		if err != nil {
			return 0, err
		}
		defer a.Close(ctx)
		if opts != nil && opts.NoStoredCatalogs {
			a.WaitCatalogs(ctx)
		}
		n := a.AITools(mcpclient.Filter{}).Len()
		took := time.Since(start)
		if n != want {
			return 0, fmt.Errorf("a woken agent's first AITools has %d tools, want %d", n, want)
		}
		a.WaitForConnections(ctx) // its sessions saved before the next wake
		return took, nil
	}
	wakes := max(c.hibWakes, 20)
	progress(c.stderr, "aitools: %d wakes with stored catalogs, %d without", wakes, wakeBaseline)
	var stored, baseline []time.Duration
	for range wakes {
		d, err := wake(nil)
		if err != nil {
			return "", nil, err
		}
		stored = append(stored, d)
	}
	for range wakeBaseline {
		d, err := wake(&agent.Options{NoStoredCatalogs: true})
		if err != nil {
			return "", nil, err
		}
		baseline = append(baseline, d)
	}
	sortDurations(stored)
	sortDurations(baseline)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()*1e3) }
	t := newTable("first AITools of a woken agent", "p50 ms", "p99 ms")
	t.add("catalogs stored with the agent", ms(percentile(stored, 50)), ms(percentile(stored, 99)))
	t.add("waiting for the connections", ms(percentile(baseline, 50)), ms(percentile(baseline, 99)))
	title := fmt.Sprintf("A woken agent's first AITools: %d servers of %d tools (SQLite)\n", wakeServers, wakeTools)
	return title + t.String(), []figure{{name: "aitools_wake_first_tools_ms_p50", value: percentile(stored, 50).Seconds() * 1e3,
		unit: " ms", goal: "<= 5", note: fmt.Sprintf("open to a full AITools; %s ms waiting for the connections", ms(percentile(baseline, 50)))}}, nil
}
