package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	modernc "modernc.org/sqlite"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/server"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// The hibernate section measures agents that sleep: the memory a
// hibernated agent leaves in a serving process, how long a request to a
// hibernated agent takes and whether its wake resumed the saved sessions,
// how long `agentmcp serve` takes to start on a database of many agents,
// and whether the cap on awake agents holds.
//
// The MCP servers run in this process, behind a counter of handshakes
// (initialize and server/discover requests); the agents are served by a
// child process (agentmcp-bench host: server.Server, as agentmcp serve
// runs it, which can also report its memory after a GC) and, for the start
// time, by the agentmcp program itself.

// Agent classes of the section's databases.
const (
	hibIdleClass  = "idle" // the agents hibernated for the memory figure
	hibWarmClass  = "warm" // woken before the baseline
	hibWakeClass  = "wake" // the agent woken for the latency figures
	hibWakeName   = "w"    //
	hibServeClass = "many" // the agents of the start-up database
	hibCapClass   = "cap"  // the agents requested under the cap
	hibColdAgents = 16     // agents woken before the cold memory baseline
	hibWakeSrvs   = 5      // servers of the woken agent
	hibSeedBatch  = 20000  // rows per PutServers transaction
	hibDeadURL    = "http://127.0.0.1:1/mcp"
)

// hibWakePath is the path of server i of the woken agent; even ones are
// legacy (2025-11-25, stateful), odd ones stateless (2026-07-28).
func hibWakePath(i int) string { return fmt.Sprintf("/wake%d", i) }

func hibWakeLegacy(i int) bool { return i%2 == 0 }

// runHibernate runs the section.
func runHibernate(ctx context.Context, c *config) (string, []figure, error) {
	tmp, err := os.MkdirTemp("", "agentmcp-bench-hibernate")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)

	paths := []mcpPath{{"/idle-legacy", false}, {"/idle-stateless", true}, {"/cap", true}}
	for i := range hibWakeSrvs {
		paths = append(paths, mcpPath{hibWakePath(i), !hibWakeLegacy(i)})
	}
	mh, err := startMCPHost(paths)
	if err != nil {
		return "", nil, err
	}
	defer mh.close()

	var out strings.Builder
	var figs []figure

	if c.hibParts["agents"] {
		mem, wake, err := runHostChild(ctx, c, tmp, mh)
		if err != nil {
			return "", nil, err
		}
		out.WriteString(mem.table + "\n" + wake.table + "\n")
		figs = append(figs, mem.figs...)
		figs = append(figs, wake.figs...)
	}
	if c.hibParts["start"] {
		tab, f, err := runServeStart(ctx, c, tmp)
		if err != nil {
			return "", nil, fmt.Errorf("serve start: %w", err)
		}
		out.WriteString(tab + "\n")
		figs = append(figs, f...)
	}
	if c.hibParts["cap"] {
		tab, f, err := runAwakeCap(ctx, c, tmp, mh)
		if err != nil {
			return "", nil, fmt.Errorf("awake cap: %w", err)
		}
		out.WriteString(tab + "\n")
		figs = append(figs, f...)
	}
	return strings.TrimSuffix(out.String(), "\n"), figs, nil
}

// sectionResult is a table and its figures.
type sectionResult struct {
	table string
	figs  []figure
}

// runHostChild measures, in one host child process, the memory of
// hibernated agents and then the wakes of the agent with five servers.
func runHostChild(ctx context.Context, c *config, tmp string, mh *mcpHost) (mem, wake sectionResult, err error) {
	db := filepath.Join(tmp, "host.db")
	progress(c.stderr, "hibernate: storing %d agents with a server each, and one with %d", c.hibAgents, hibWakeSrvs)
	var rows []store.Server
	for i := range c.hibAgents {
		rows = append(rows, store.Server{Namespace: fmt.Sprintf("%s/a%04d", hibWarmClass, i), ID: "s0", Name: "s0",
			URL: mh.url + []string{"/idle-legacy", "/idle-stateless"}[i%2]})
	}
	for i := range c.hibAgents {
		rows = append(rows, store.Server{Namespace: fmt.Sprintf("%s/a%04d", hibIdleClass, i), ID: "s0", Name: "s0",
			URL: mh.url + []string{"/idle-legacy", "/idle-stateless"}[i%2]})
	}
	for i := range hibWakeSrvs {
		rows = append(rows, store.Server{Namespace: hibWakeClass + "/" + hibWakeName, ID: fmt.Sprintf("s%d", i),
			Name: fmt.Sprintf("s%d", i), URL: mh.url + hibWakePath(i)})
	}
	if _, err := seedRows(ctx, db, rows); err != nil {
		return mem, wake, err
	}
	exe, err := os.Executable()
	if err != nil {
		return mem, wake, err
	}
	args := []string{"host", "-db", db}
	if c.hibHeapProfile != "" {
		args = append(args, "-memprofilerate", "512")
	}
	if c.hibCacheKiB > 0 {
		args = append(args, "-sqlite-cache-kib", strconv.Itoa(c.hibCacheKiB))
	}
	if c.hibReaders > 0 {
		args = append(args, "-sqlite-readers", strconv.Itoa(c.hibReaders))
	}
	hp, err := startHostProc(ctx, exe, args...)
	if err != nil {
		return mem, wake, err
	}
	defer hp.stop()
	api := &apiClient{base: hp.url, hc: newHTTPClient()}
	defer api.hc.CloseIdleConnections()

	// The memory of hibernated agents.
	wakeHib := func(class string, n int) (time.Duration, error) {
		start := time.Now()
		err := parallel(n, func(i int) error {
			name := fmt.Sprintf("a%04d", i)
			if err := api.call(ctx, class, name, "s0"); err != nil {
				return err
			}
			return api.hibernate(ctx, class, name)
		})
		return time.Since(start), err
	}
	// A cold process first: its memory grows as the first thousands of
	// wakes fill pools that do not grow with agents (modernc.org/libc's
	// allocator keeps up to 4 MiB per size class of freed memory
	// committed, SQLite's page caches fill up to their size, code pages
	// are touched). The figure compares a process holding 0 agents after
	// that warm-up with the same process holding c.hibAgents: the warm-up
	// agents are woken and hibernated twice, then deleted.
	progress(c.stderr, "hibernate: waking and hibernating %d agents before the cold baseline", hibColdAgents)
	if _, err := wakeHib(hibWarmClass, hibColdAgents); err != nil {
		return mem, wake, fmt.Errorf("warm-up: %w", err)
	}
	cold, err := hp.mem()
	if err != nil {
		return mem, wake, err
	}
	progress(c.stderr, "hibernate: warming up with %d agents, twice, then deleting them", c.hibAgents)
	tookCold, err := wakeHib(hibWarmClass, c.hibAgents)
	if err != nil {
		return mem, wake, fmt.Errorf("warm-up: %w", err)
	}
	warm1, err := hp.mem()
	if err != nil {
		return mem, wake, err
	}
	if _, err := wakeHib(hibWarmClass, c.hibAgents); err != nil {
		return mem, wake, fmt.Errorf("warm-up: %w", err)
	}
	if err := hp.command(fmt.Sprintf("forget %s %d", hibWarmClass, c.hibAgents)); err != nil {
		return mem, wake, err
	}
	base, err := hp.mem()
	if err != nil {
		return mem, wake, err
	}
	if c.hibSmaps != "" {
		if err := hp.command("smaps " + c.hibSmaps + "-baseline.smaps"); err != nil {
			return mem, wake, err
		}
	}
	progress(c.stderr, "hibernate: waking and hibernating %d agents", c.hibAgents)
	took, err := wakeHib(hibIdleClass, c.hibAgents)
	if err != nil {
		return mem, wake, err
	}
	after, err := hp.mem()
	if err != nil {
		return mem, wake, err
	}
	if c.hibSmaps != "" {
		if err := hp.command("smaps " + c.hibSmaps + "-hibernated.smaps"); err != nil {
			return mem, wake, err
		}
	}
	if c.hibHeapProfile != "" {
		if err := hp.command("heap " + c.hibHeapProfile + "-hibernated.heap"); err != nil {
			return mem, wake, err
		}
	}
	progress(c.stderr, "hibernate: the same %d agents again", c.hibAgents)
	took2, err := wakeHib(hibIdleClass, c.hibAgents)
	if err != nil {
		return mem, wake, err
	}
	after2, err := hp.mem()
	if err != nil {
		return mem, wake, err
	}
	n := float64(c.hibAgents)
	per := func(a, b hostMem, f func(hostMem) float64) float64 { return (f(b) - f(a)) / n }
	rss := func(m hostMem) float64 { return float64(m.RSSKiB) * 1024 }
	heap := func(m hostMem) float64 { return float64(m.HeapAlloc) }
	gs := func(m hostMem) float64 { return float64(m.Goroutines) }
	anon := func(m hostMem) float64 { return float64(m.AnonKiB) * 1024 }
	file := func(m hostMem) float64 { return float64(m.FileKiB) * 1024 }
	held := func(m hostMem) float64 { return float64(m.GoHeld) }
	other := func(m hostMem) float64 { return anon(m) - held(m) }
	t := newTable("agents hibernated", "RSS MiB", "anon MiB", "file MiB", "Go holds MiB", "other anon MiB", "live heap MiB", "goroutines", "threads", "awake", "db+WAL MiB", "ms/agent")
	row := func(label string, m hostMem, took time.Duration) {
		ms := ""
		if took > 0 {
			ms = fmt.Sprintf("%.2f", took.Seconds()*1000/n)
		}
		t.add(label, mib(rss(m)), mib(anon(m)), mib(file(m)), mib(held(m)), mib(other(m)), mib(heap(m)), fmt.Sprint(m.Goroutines), fmt.Sprint(m.Threads), fmt.Sprint(m.Awake), mib(float64(m.DBBytes)), ms)
	}
	perRow := func(label string, a, b hostMem) {
		t.add(label, formatValue(per(a, b, rss)), formatValue(per(a, b, anon)), formatValue(per(a, b, file)),
			formatValue(per(a, b, held)), formatValue(per(a, b, other)), formatValue(per(a, b, heap)), formatValue(per(a, b, gs)), "", "", "", "")
	}
	row(fmt.Sprintf("0, cold (after %d wakes)", hibColdAgents), cold, 0)
	row(fmt.Sprintf("%d warm-up agents, from cold", c.hibAgents), warm1, tookCold)
	row("0 (warm-up done, its agents deleted)", base, 0)
	row(fmt.Sprint(c.hibAgents), after, took)
	row(fmt.Sprintf("%d, woken and hibernated again", c.hibAgents), after2, took2)
	perRow("per agent, B", base, after)
	perRow("per agent from cold, B", cold, warm1)
	mem.table = fmt.Sprintf("Hibernated agents: a server.Server process (agentmcp-bench host) on SQLite; each agent called (echo, through the API) then\n"+
		"hibernated (POST .../hibernate), 8 at a time, half on a legacy server, half on a 2026-07-28 one; memory after debug.FreeOSMemory\n"+
		"(RSS = anon + file; Go holds = MemStats Sys - HeapReleased; other anon = anon - Go holds: memory outside Go's runtime,\n"+
		"SQLite's (modernc.org/sqlite allocates its own); ms/agent: wall time of the round over the agents).\n"+
		"A cold process grows while its first wakes fill pools that do not grow with agents (modernc.org/libc's allocator keeps up to\n"+
		"4 MiB of freed memory per size class committed; SQLite's page caches; code pages): the baseline is the process after %d\n"+
		"warm-up agents were woken and hibernated twice and then deleted, so that it holds 0 agents.\n%s", c.hibAgents, t)
	mem.figs = []figure{
		{name: "hibernated_agent_bytes", value: per(base, after, rss), goal: "<= 1024",
			note: fmt.Sprintf("RSS per hibernated agent, %d agents, warm process: Go holds %s B, other anon %s B, file %s B; after a second round of wakes %s B",
				c.hibAgents, formatValue(per(base, after, held)), formatValue(per(base, after, other)), formatValue(per(base, after, file)),
				formatValue(per(base, after2, rss)))},
		{name: "hibernated_agent_bytes_cold", value: per(cold, warm1, rss),
			note: fmt.Sprintf("the same from a cold process (%d agents, one round): includes the pools' one-time fill", c.hibAgents)},
		{name: "hibernated_agent_heap_bytes", value: per(base, after, heap),
			note: fmt.Sprintf("live Go heap per hibernated agent after GC; goroutines per agent %s", formatValue(per(base, after, gs)))},
	}

	// Wakes of the agent with five servers.
	progress(c.stderr, "hibernate: %d wakes of an agent with %d servers", c.hibWakes, hibWakeSrvs)
	var counts []*pathCounts
	for i := range hibWakeSrvs {
		counts = append(counts, mh.counts[hibWakePath(i)])
	}
	handshakes := func() (init, disc int64) {
		for _, pc := range counts {
			init += pc.initialize.Load()
			disc += pc.discover.Load()
		}
		return init, disc
	}
	callAll := func(except int) error {
		for i := range hibWakeSrvs {
			if i == except {
				continue
			}
			if err := api.call(ctx, hibWakeClass, hibWakeName, fmt.Sprintf("s%d", i)); err != nil {
				return err
			}
		}
		return nil
	}
	// The first wake connects afresh (a handshake each) and saves the
	// sessions; then a few wakes untimed.
	if err := callAll(-1); err != nil {
		return mem, wake, fmt.Errorf("first wake: %w", err)
	}
	firstLegacy, firstStateless := 0, 0
	for i, pc := range counts {
		if hibWakeLegacy(i) && pc.initialize.Load() > 0 {
			firstLegacy++
		}
		if !hibWakeLegacy(i) && pc.discover.Load() > 0 {
			firstStateless++
		}
	}
	if err := api.hibernate(ctx, hibWakeClass, hibWakeName); err != nil {
		return mem, wake, err
	}
	for range 5 {
		if err := callAll(-1); err != nil {
			return mem, wake, err
		}
		if err := api.hibernate(ctx, hibWakeClass, hibWakeName); err != nil {
			return mem, wake, err
		}
	}
	// Wakes of agents with one server (hibernated above, sessions saved),
	// one at a time, for comparison.
	var single []time.Duration
	for i := range min(c.hibWakes, c.hibAgents) {
		name := fmt.Sprintf("a%04d", i)
		start := time.Now()
		if err := api.call(ctx, hibIdleClass, name, "s0"); err != nil {
			return mem, wake, err
		}
		single = append(single, time.Since(start))
		if err := api.hibernate(ctx, hibIdleClass, name); err != nil {
			return mem, wake, err
		}
	}
	if c.hibCPUProfile != "" {
		if err := hp.command("cpu " + c.hibCPUProfile + "-wakes.cpu"); err != nil {
			return mem, wake, err
		}
	}
	methodsBefore := map[string]int64{}
	for _, pc := range counts {
		for m, n := range pc.snapshot() {
			methodsBefore[m] += n
		}
	}
	storeBefore, err := hp.mem()
	if err != nil {
		return mem, wake, err
	}
	lat := map[bool][]time.Duration{} // by legacy
	var all, awakeLat []time.Duration
	resumed := 0
	var wakeInit, wakeDisc int64
	for i := range c.hibWakes {
		srv := i % hibWakeSrvs
		i0, d0 := handshakes()
		start := time.Now()
		if err := api.call(ctx, hibWakeClass, hibWakeName, fmt.Sprintf("s%d", srv)); err != nil {
			return mem, wake, fmt.Errorf("wake %d: %w", i, err)
		}
		d := time.Since(start)
		all = append(all, d)
		lat[hibWakeLegacy(srv)] = append(lat[hibWakeLegacy(srv)], d)
		// Every server has connected once each has answered a call: the
		// handshakes of this wake are all counted.
		if err := callAll(srv); err != nil {
			return mem, wake, fmt.Errorf("wake %d: %w", i, err)
		}
		// The same call, the agent awake: the floor a wake adds to.
		start = time.Now()
		if err := api.call(ctx, hibWakeClass, hibWakeName, fmt.Sprintf("s%d", srv)); err != nil {
			return mem, wake, fmt.Errorf("wake %d: %w", i, err)
		}
		awakeLat = append(awakeLat, time.Since(start))
		i1, d1 := handshakes()
		if i1 == i0 && d1 == d0 {
			resumed++
		}
		wakeInit += i1 - i0
		wakeDisc += d1 - d0
		if err := api.hibernate(ctx, hibWakeClass, hibWakeName); err != nil {
			return mem, wake, err
		}
	}
	if c.hibCPUProfile != "" {
		if err := hp.command("cpustop"); err != nil {
			return mem, wake, err
		}
	}
	storeAfter, err := hp.mem()
	if err != nil {
		return mem, wake, err
	}
	methodsAfter := map[string]int64{}
	for _, pc := range counts {
		for m, n := range pc.snapshot() {
			methodsAfter[m] += n
		}
	}
	var perWake []string
	for _, m := range slices.Sorted(maps.Keys(methodsAfter)) {
		if d := methodsAfter[m] - methodsBefore[m]; d > 0 {
			perWake = append(perWake, fmt.Sprintf("%s %.1f", m, float64(d)/float64(c.hibWakes)))
		}
	}
	var storePerWake []string
	for _, op := range slices.Sorted(maps.Keys(storeAfter.Store)) {
		if d := storeAfter.Store[op] - storeBefore.Store[op]; d > 0 {
			storePerWake = append(storePerWake, fmt.Sprintf("%s %.1f", op, float64(d)/float64(c.hibWakes)))
		}
	}
	sortDurations(all)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	wt := newTable("called server", "wakes", "p50 ms", "p99 ms")
	for _, legacy := range []bool{true, false} {
		ds := sortDurations(lat[legacy])
		name := "2026-07-28 (stateless, discover result saved)"
		if legacy {
			name = "2025-11-25 (stateful, session saved)"
		}
		wt.add(name, fmt.Sprint(len(ds)), fmt.Sprintf("%.1f", ms(percentile(ds, 50))), fmt.Sprintf("%.1f", ms(percentile(ds, 99))))
	}
	wt.add("all", fmt.Sprint(len(all)), fmt.Sprintf("%.1f", ms(percentile(all, 50))), fmt.Sprintf("%.1f", ms(percentile(all, 99))))
	sortDurations(single)
	wt.add("an agent with 1 server (either era)", fmt.Sprint(len(single)), fmt.Sprintf("%.1f", ms(percentile(single, 50))), fmt.Sprintf("%.1f", ms(percentile(single, 99))))
	sortDurations(awakeLat)
	wt.add("all, the agent awake (no wake)", fmt.Sprint(len(awakeLat)), fmt.Sprintf("%.1f", ms(percentile(awakeLat, 50))), fmt.Sprintf("%.1f", ms(percentile(awakeLat, 99))))
	wake.table = fmt.Sprintf("Wakes: a tool call (POST .../servers/{id}/tools/call, echo) to a hibernated agent with %d servers (%d legacy, %d stateless),\n"+
		"to its response; the call rotates over the servers; after it, the other servers are called and the agent hibernated.\n"+
		"First wake: %d of %d legacy servers sent initialize, %d of %d stateless sent server/discover; over the timed wakes,\n"+
		"%d initialize and %d server/discover in all.\n"+
		"Per wake (the timed call, the 4 other calls and the hibernation), at the 5 servers: %s;\n"+
		"in the store: %s\n%s",
		hibWakeSrvs, (hibWakeSrvs+1)/2, hibWakeSrvs/2, firstLegacy, (hibWakeSrvs+1)/2, firstStateless, hibWakeSrvs/2, wakeInit, wakeDisc,
		strings.Join(perWake, ", "), strings.Join(storePerWake, ", "), wt)
	wake.figs = []figure{
		{name: "wake_latency_ms_p50", value: ms(percentile(all, 50)), goal: "<= 30",
			note: fmt.Sprintf("%d wakes, %d servers; the same call to the agent awake: %.1f ms", len(all), hibWakeSrvs, ms(percentile(awakeLat, 50)))},
		{name: "wake_latency_ms_p99", value: ms(percentile(all, 99)), goal: "<= 250", note: "the same"},
		{name: "wake_resumed_without_handshake", value: float64(resumed) / float64(len(all)), goal: ">= 0.95",
			note: fmt.Sprintf("%d of %d wakes sent no initialize or server/discover to any server", resumed, len(all))},
	}
	return mem, wake, nil
}

func mib(b float64) string { return fmt.Sprintf("%.1f", b/(1<<20)) }

// seedRows writes rows to a new SQLite database at path by PutServers,
// in transactions of hibSeedBatch rows.
func seedRows(ctx context.Context, path string, rows []store.Server) (time.Duration, error) {
	start := time.Now()
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		return 0, err
	}
	for len(rows) > 0 {
		n := min(len(rows), hibSeedBatch)
		if err := st.PutServers(ctx, rows[:n]); err != nil {
			st.Close()
			return 0, err
		}
		rows = rows[n:]
	}
	if err := st.Close(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// mcpPath is one MCP server of an mcpHost.
type mcpPath struct {
	path      string
	stateless bool // 2026-07-28 (and legacy on request); else stateful legacy
}

// mcpHost serves mcptest servers on 127.0.0.1, one per path, counting
// the handshakes each receives.
type mcpHost struct {
	url     string // http://127.0.0.1:port
	hs      *http.Server
	servers []*mcp.Server
	counts  map[string]*pathCounts
}

// pathCounts is what one server of an mcpHost received.
type pathCounts struct {
	requests, initialize, discover atomic.Int64

	mu      sync.Mutex
	methods map[string]int64 // JSON-RPC requests and notifications by method, and "GET", "DELETE"
}

// add counts one request of method.
func (pc *pathCounts) add(method string) {
	pc.mu.Lock()
	if pc.methods == nil {
		pc.methods = map[string]int64{}
	}
	pc.methods[method]++
	pc.mu.Unlock()
}

// snapshot returns the counts by method.
func (pc *pathCounts) snapshot() map[string]int64 {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return maps.Clone(pc.methods)
}

func startMCPHost(paths []mcpPath) (*mcpHost, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &mcpHost{url: "http://" + l.Addr().String(), counts: map[string]*pathCounts{}}
	mux := http.NewServeMux()
	for _, p := range paths {
		srv := mcptest.NewServer("bench" + p.path).Server
		h.servers = append(h.servers, srv)
		get := func(*http.Request) *mcp.Server { return srv }
		handler := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: p.stateless})
		pc := new(pathCounts)
		h.counts[p.path] = pc
		mux.Handle(p.path, countHandshakes(pc, handler))
	}
	h.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go h.hs.Serve(l)
	return h, nil
}

// countHandshakes counts the requests next receives, and among them the
// initialize and server/discover requests.
func countHandshakes(pc *pathCounts, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pc.requests.Add(1)
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &msg) != nil || msg.Method == "" {
				msg.Method = "POST (other)"
			}
			pc.add(msg.Method)
			switch msg.Method {
			case "initialize":
				pc.initialize.Add(1)
			case "server/discover":
				pc.discover.Add(1)
			}
		} else {
			pc.add(r.Method)
		}
		next.ServeHTTP(w, r)
	})
}

func (h *mcpHost) close() {
	h.hs.Close()
	for _, srv := range h.servers {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	}
}

// apiClient calls agentmcp's HTTP API.
type apiClient struct {
	base string
	hc   *http.Client
}

// call calls the echo tool of server id of the agent class/name.
func (c *apiClient) call(ctx context.Context, class, name, id string) error {
	url := fmt.Sprintf("%s/agents/%s/%s/servers/%s/tools/call", c.base, class, name, id)
	status, body, err := c.do(ctx, http.MethodPost, url, `{"name":"echo","arguments":{"text":"wake"}}`)
	if err != nil {
		return err
	}
	if status != http.StatusOK || !bytes.Contains(body, []byte("echo: wake")) {
		return fmt.Errorf("POST %s: %d %s", url, status, body)
	}
	return nil
}

// hibernate hibernates the agent class/name. A 409 (the agent still held
// by the request that just answered) is retried for up to 10 seconds.
func (c *apiClient) hibernate(ctx context.Context, class, name string) error {
	url := fmt.Sprintf("%s/agents/%s/%s/hibernate", c.base, class, name)
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body, err := c.do(ctx, http.MethodPost, url, "")
		if err != nil {
			return err
		}
		switch {
		case status == http.StatusNoContent:
			return nil
		case status == http.StatusConflict && time.Now().Before(deadline):
			time.Sleep(time.Millisecond)
		default:
			return fmt.Errorf("POST %s: %d %s", url, status, body)
		}
	}
}

// get GETs url and checks for 200.
func (c *apiClient) get(ctx context.Context, url string) error {
	status, body, err := c.do(ctx, http.MethodGet, url, "")
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %s", url, status, body)
	}
	return err
}

func (c *apiClient) do(ctx context.Context, method, url, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// hostMem is what the host child reports of its memory, after a GC and
// debug.FreeOSMemory.
type hostMem struct {
	RSSKiB     int64  `json:"rssKiB"`
	AnonKiB    int64  `json:"anonKiB"` // RssAnon: the heaps (Go's and C's), stacks
	FileKiB    int64  `json:"fileKiB"` // RssFile: the program's pages, files mapped
	HeapAlloc  uint64 `json:"heapAlloc"`
	GoHeld     uint64 `json:"goHeld"`  // what Go's runtime holds from the OS: Sys - HeapReleased
	Threads    int64  `json:"threads"` // OS threads
	DBBytes    int64  `json:"dbBytes"` // the database file and its WAL
	StackInuse uint64 `json:"stackInuse"`
	Goroutines int    `json:"goroutines"`
	Awake      int    `json:"awake"`
	// Store counts the calls the server made to its store, by method.
	Store map[string]int64 `json:"store"`
	Error string           `json:"error,omitempty"`
}

// hostProc is a running host child: it answers one JSON line per command
// line on its stdin.
type hostProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *json.Decoder
	url   string
	mu    sync.Mutex
}

func startHostProc(ctx context.Context, exe string, args ...string) (*hostProc, error) {
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &hostProc{cmd: cmd, stdin: stdin, out: json.NewDecoder(stdout)}
	var hello struct {
		URL string `json:"url"`
	}
	if err := p.out.Decode(&hello); err != nil {
		p.stop()
		return nil, fmt.Errorf("host child: %w", err)
	}
	p.url = hello.URL
	return p, nil
}

// ask sends one command and decodes its answer into v.
func (p *hostProc) ask(command string, v any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.stdin, command+"\n"); err != nil {
		return err
	}
	return p.out.Decode(v)
}

func (p *hostProc) mem() (hostMem, error) {
	var m hostMem
	err := p.ask("mem", &m)
	if err == nil && m.Error != "" {
		err = errors.New(m.Error)
	}
	return m, err
}

// command sends a command answered by nothing but an error.
func (p *hostProc) command(command string) error {
	var m hostMem
	err := p.ask(command, &m)
	if err == nil && m.Error != "" {
		err = errors.New(m.Error)
	}
	return err
}

// stop closes the child's stdin, which ends it, and kills it if it has not
// exited within ten seconds.
func (p *hostProc) stop() {
	p.stdin.Close()
	stopProcess(p.cmd, 10*time.Second)
}

// stopProcess waits for cmd to exit, and kills it (by its PID) after
// grace.
func stopProcess(cmd *exec.Cmd, grace time.Duration) {
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(grace):
		cmd.Process.Kill()
		<-exited
	}
}

// hostChild is the host process: server.Server on a SQLite database, with
// agentmcp serve's defaults, on 127.0.0.1. It prints {"url": ...}, then
// answers the commands of its stdin, one JSON line each: "mem" (memory
// after a GC and debug.FreeOSMemory), "heap PATH" (a heap profile), "smaps
// PATH" (a copy of /proc/self/smaps), "cpu
// PATH" and "cpustop" (a CPU profile between them). It stops when its stdin
// closes.
func hostChild(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	db := fs.String("db", "", "SQLite database")
	rate := fs.Int("memprofilerate", 0, "runtime.MemProfileRate (0: Go's default)")
	readers := fs.Int("sqlite-readers", 0, "sqlite.Options.MaxReaders (0: the default)")
	cacheKiB := fs.Int("sqlite-cache-kib", 0, "PRAGMA cache_size of every SQLite connection, in KiB (0: SQLite's default, 2,000 KiB)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rate > 0 {
		runtime.MemProfileRate = *rate
	}
	if *cacheKiB > 0 {
		pragma := fmt.Sprintf("PRAGMA cache_size = -%d", *cacheKiB)
		modernc.RegisterConnectionHook(func(conn modernc.ExecQuerierContext, _ string) error {
			_, err := conn.ExecContext(context.Background(), pragma, nil)
			return err
		})
	}
	sq, err := sqlite.Open(ctx, *db, &sqlite.Options{MaxReaders: *readers})
	if err != nil {
		return err
	}
	defer sq.Close()
	st := &countingStore{Store: sq}
	srv, err := server.Open(ctx, st, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(cctx)
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := srv.HTTPServer()
	go hs.Serve(l)
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if hs.Shutdown(cctx) != nil {
			hs.Close()
		}
	}()
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(map[string]string{"url": "http://" + l.Addr().String()}); err != nil {
		return err
	}
	var cpuFile *os.File
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		command, arg, _ := strings.Cut(sc.Text(), " ")
		var m hostMem
		switch command {
		case "mem":
			debug.FreeOSMemory()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m = hostMem{RSSKiB: procStatus("self", "VmRSS"), AnonKiB: procStatus("self", "RssAnon"), FileKiB: procStatus("self", "RssFile"),
				HeapAlloc: ms.HeapAlloc, GoHeld: ms.Sys - ms.HeapReleased, Threads: procStatus("self", "Threads"), DBBytes: fileSize(*db) + fileSize(*db+"-wal"), StackInuse: ms.StackInuse,
				Goroutines: runtime.NumGoroutine(), Awake: srv.Host().Stats().Awake, Store: st.snapshot()}
		case "cpu":
			f, err := os.Create(arg)
			if err == nil {
				cpuFile = f
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				m.Error = err.Error()
			}
		case "cpustop":
			pprof.StopCPUProfile()
			if cpuFile != nil {
				cpuFile.Close()
				cpuFile = nil
			}
		case "smaps":
			data, err := os.ReadFile("/proc/self/smaps")
			if err == nil {
				err = os.WriteFile(arg, data, 0o644)
			}
			if err != nil {
				m.Error = err.Error()
			}
		case "forget":
			// forget CLASS N deletes the servers of agents CLASS/a0000..,
			// which are asleep.
			class, count, _ := strings.Cut(arg, " ")
			k, err := strconv.Atoi(count)
			for i := 0; err == nil && i < k; i++ {
				err = sq.DeleteServer(ctx, fmt.Sprintf("%s/a%04d", class, i), "s0")
			}
			if err != nil {
				m.Error = err.Error()
			}
		case "heap":
			runtime.GC()
			if err := writeProfile("heap", arg); err != nil {
				m.Error = err.Error()
			}
		default:
			m.Error = fmt.Sprintf("unknown command %q", command)
		}
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return nil
}

// countingStore is a SQLite store that counts the calls made to it.
type countingStore struct {
	*sqlite.Store
	mu    sync.Mutex
	calls map[string]int64
}

func (s *countingStore) count(op string) {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]int64{}
	}
	s.calls[op]++
	s.mu.Unlock()
}

func (s *countingStore) snapshot() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

func (s *countingStore) ListServers(ctx context.Context, ns string) ([]store.Server, error) {
	s.count("ListServers")
	return s.Store.ListServers(ctx, ns)
}

func (s *countingStore) GetServer(ctx context.Context, ns, id string) (store.Server, error) {
	s.count("GetServer")
	return s.Store.GetServer(ctx, ns, id)
}

func (s *countingStore) PutServer(ctx context.Context, row store.Server) error {
	s.count("PutServer")
	return s.Store.PutServer(ctx, row)
}

func (s *countingStore) UpdateServer(ctx context.Context, ns, id string, fn func(*store.Server) error) error {
	s.count("UpdateServer")
	return s.Store.UpdateServer(ctx, ns, id, fn)
}

func (s *countingStore) KVGet(ctx context.Context, ns, serverID, key string) ([]byte, error) {
	s.count("KVGet")
	return s.Store.KVGet(ctx, ns, serverID, key)
}

func (s *countingStore) KVPut(ctx context.Context, ns, serverID, key string, value []byte, expiresAt time.Time) error {
	s.count("KVPut")
	return s.Store.KVPut(ctx, ns, serverID, key, value, expiresAt)
}

func (s *countingStore) KVList(ctx context.Context, ns, serverID, prefix string) (map[string][]byte, error) {
	s.count("KVList")
	return s.Store.KVList(ctx, ns, serverID, prefix)
}

// writeProfile writes the named pprof profile to path.
func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// procStatus returns a field, in KiB, of /proc/PID/status (pid "self"
// for this process), or -1.
func procStatus(pid, field string) int64 {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// serveSeed is what is kept next to the cached start-up database.
type serveSeed struct {
	Agents, Servers int
	Seconds         float64
}

// runServeStart times agentmcp serve, started on a SQLite database of
// c.serveAgents agents with 5 servers each, to its first answered request.
func runServeStart(ctx context.Context, c *config, tmp string) (string, []figure, error) {
	const perAgent = 5
	bin, err := agentmcpBinary(ctx, c, tmp)
	if err != nil {
		return "", nil, err
	}
	// The database is seeded once into the cache directory: the name says
	// what it holds, and a sidecar how long it took.
	if err := os.MkdirAll(c.cacheDir, 0o755); err != nil {
		return "", nil, err
	}
	cached := filepath.Join(c.cacheDir, fmt.Sprintf("serve-%dx%d-v1.db", c.serveAgents, perAgent))
	var seed serveSeed
	seedNote := "cached"
	if data, err := os.ReadFile(cached + ".json"); err == nil && json.Unmarshal(data, &seed) == nil && seed.Agents == c.serveAgents {
		progress(c.stderr, "serve start: %d agents x %d servers from %s (seeded in %.1fs)", c.serveAgents, perAgent, cached, seed.Seconds)
	} else {
		progress(c.stderr, "serve start: seeding %d agents x %d servers into %s", c.serveAgents, perAgent, cached)
		part := cached + ".part"
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(part + s)
		}
		rows := make([]store.Server, 0, c.serveAgents*perAgent)
		for i := range c.serveAgents {
			for j := range perAgent {
				rows = append(rows, store.Server{Namespace: fmt.Sprintf("%s/a%06d", hibServeClass, i), ID: fmt.Sprintf("s%d", j),
					Name: fmt.Sprintf("Server %d", j), URL: fmt.Sprintf("%s%d", hibDeadURL, j)})
			}
		}
		took, err := seedRows(ctx, part, rows)
		if err != nil {
			return "", nil, err
		}
		if err := os.Rename(part, cached); err != nil {
			return "", nil, err
		}
		seed = serveSeed{Agents: c.serveAgents, Servers: len(rows), Seconds: took.Seconds()}
		data, _ := json.Marshal(seed)
		if err := os.WriteFile(cached+".json", data, 0o644); err != nil {
			return "", nil, err
		}
		seedNote = "seeded by this run"
	}
	db := filepath.Join(tmp, "serve.db")
	if err := copyFile(cached, db); err != nil {
		return "", nil, err
	}
	target := fmt.Sprintf("%s/a%06d", hibServeClass, c.serveAgents/2)
	var secs, rss, hwm []float64
	reps := min(c.reps, 3)
	for rep := range reps {
		progress(c.stderr, "serve start: repetition %d/%d", rep+1, reps)
		s, r, h, err := startServeOnce(ctx, bin, db, target)
		if err != nil {
			return "", nil, err
		}
		secs = append(secs, s)
		rss = append(rss, r)
		hwm = append(hwm, h)
	}
	k := fmt.Sprintf("%dk", c.serveAgents/1000)
	t := newTable("stored agents", "servers", "start to first answer s", "RSS MiB", "peak RSS MiB", "seeding s")
	t.add(fmt.Sprint(c.serveAgents), fmt.Sprint(seed.Servers), fmt.Sprintf("%.3f", median(secs)), fmt.Sprintf("%.1f", median(rss)),
		fmt.Sprintf("%.1f", median(hwm)), fmt.Sprintf("%.1f (%s)", seed.Seconds, seedNote))
	title := fmt.Sprintf("Start-up: agentmcp serve --db FILE --addr 127.0.0.1:0, from exec to the answer of GET /agents/%s (its servers on a\n"+
		"dead loopback port), on a SQLite database seeded by PutServers (warm OS file cache); RSS from /proc/PID/status then\n", target)
	return title + t.String(), []figure{
		{name: "serve_start_seconds_" + k, value: median(secs), goal: "<= 2", note: fmt.Sprintf("exec to first answer, %d agents x %d servers", c.serveAgents, perAgent)},
		{name: "serve_start_rss_mib_" + k, value: median(rss), goal: "<= 100", note: "VmRSS at the first answer"},
		{name: "serve_seed_seconds_" + k, value: seed.Seconds, note: fmt.Sprintf("PutServers of %d rows, %d per transaction (%s)", seed.Servers, hibSeedBatch, seedNote)},
	}, nil
}

// startServeOnce starts agentmcp serve on db, GETs the agent target, and
// returns the seconds from exec to the answer, and the RSS and peak RSS
// then (MiB). It stops the process (SIGTERM, then SIGKILL) before
// returning.
func startServeOnce(ctx context.Context, bin, db, target string) (secs, rss, hwm float64, err error) {
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--idle-timeout", "5m")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		stopProcess(cmd, 15*time.Second)
		if err != nil {
			err = fmt.Errorf("%w (serve's stderr: %s)", err, stderr.String())
		}
	}()
	base := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if _, rest, ok := strings.Cut(s.Text(), "dashboard at "); ok {
				base <- strings.TrimSuffix(strings.TrimSpace(rest), "/")
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var url string
	select {
	case url = <-base:
	case <-time.After(60 * time.Second):
		return 0, 0, 0, errors.New("serve printed no address within 60s")
	case <-ctx.Done():
		return 0, 0, 0, ctx.Err()
	}
	api := &apiClient{base: url, hc: newHTTPClient()}
	defer api.hc.CloseIdleConnections()
	if err := api.get(ctx, url+"/agents/"+target); err != nil {
		return 0, 0, 0, err
	}
	secs = time.Since(start).Seconds()
	pid := strconv.Itoa(cmd.Process.Pid)
	return secs, float64(procStatus(pid, "VmRSS")) / 1024, float64(procStatus(pid, "VmHWM")) / 1024, nil
}

// agentmcpBinary returns the agentmcp program to start: -agentmcp, else
// agentmcp next to this program (scripts/bench builds both into bin/),
// else one built now with go build.
func agentmcpBinary(ctx context.Context, c *config, tmp string) (string, error) {
	if c.agentmcp != "" {
		return c.agentmcp, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if p := filepath.Join(filepath.Dir(exe), "agentmcp"); fileExists(p) {
		return p, nil
	}
	p := filepath.Join(tmp, "agentmcp")
	progress(c.stderr, "serve start: building agentmcp (go build), as no agentmcp is next to %s", exe)
	if _, err := childOutput(ctx, "go build", "go", "build", "-o", p, "github.com/agentmcp/agentmcp/cmd/agentmcp"); err != nil {
		return "", fmt.Errorf("%w; build it with go build -o bin/agentmcp ./cmd/agentmcp, or give -agentmcp", err)
	}
	return p, nil
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// runAwakeCap requests c.capAgents agents in turn from an agent.Host
// (in this process) with MaxAwake c.capMaxAwake, and reports the most
// awake at once.
func runAwakeCap(ctx context.Context, c *config, tmp string, mh *mcpHost) (string, []figure, error) {
	db := filepath.Join(tmp, "cap.db")
	progress(c.stderr, "awake cap: storing %d agents", c.capAgents)
	rows := make([]store.Server, 0, c.capAgents)
	for i := range c.capAgents {
		rows = append(rows, store.Server{Namespace: fmt.Sprintf("%s/a%05d", hibCapClass, i), ID: "s0", Name: "s0", URL: hibDeadURL})
	}
	if _, err := seedRows(ctx, db, rows); err != nil {
		return "", nil, err
	}
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	h := agent.NewHost(st, &agent.HostOptions{MaxAwake: c.capMaxAwake})
	progress(c.stderr, "awake cap: requesting %d agents in turn, at most %d awake", c.capAgents, c.capMaxAwake)
	var awake []int
	start := time.Now()
	for i := range c.capAgents {
		a, release, err := h.Use(ctx, hibCapClass, fmt.Sprintf("a%05d", i))
		if err != nil {
			h.Close(context.Background())
			return "", nil, err
		}
		_ = a.MCPServers()
		release()
		awake = append(awake, h.Stats().Awake)
	}
	took := time.Since(start)
	stats := h.Stats()
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := h.Close(cctx); err != nil {
		return "", nil, err
	}
	t := newTable("requested", "max awake", "most awake seen", "awake at the end", "wakes", "hibernations", "ms/request")
	t.add(fmt.Sprint(c.capAgents), fmt.Sprint(c.capMaxAwake), fmt.Sprint(stats.MaxAwakeSeen), fmt.Sprint(stats.Awake),
		fmt.Sprint(stats.Wakes), fmt.Sprint(stats.Hibernations), fmt.Sprintf("%.2f", took.Seconds()*1000/float64(c.capAgents)))
	title := "Awake cap: agent.Host.Use then release of each agent in turn (in this process; one stored server each, on a dead loopback port), SQLite\n"
	return title + t.String(), []figure{
		{name: "awake_cap_holds", value: float64(stats.MaxAwakeSeen), goal: fmt.Sprintf("<= %d", c.capMaxAwake),
			note: fmt.Sprintf("HostStats.MaxAwakeSeen, %d agents requested in turn, MaxAwake %d; Awake after each release at most %d",
				c.capAgents, c.capMaxAwake, slices.Max(awake))},
	}, nil
}
