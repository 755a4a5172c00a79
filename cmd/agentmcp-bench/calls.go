package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/internal/benchopt"
	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// era is a protocol era and the server paths that speak it.
type era struct {
	name     string // the protocol version, pinned on every client
	path     string // the go-sdk server
	fastPath string // its answers, replayed
}

var eras = []era{
	{protocol.Stateless, pathStateless, pathFastStateless},
	{protocol.LatestSession, pathStateful, pathFast},
}

// Servers of the calls section.
const (
	serverFast  = "replay" // the go-sdk server's answers, replayed (fast.go)
	serverGoSDK = "go-sdk" // the go-sdk server itself
)

// pathOf returns the path of server kind kind in era e.
func (e era) pathOf(kind string) string {
	if kind == serverFast {
		return e.fastPath
	}
	return e.path
}

// Client names, as printed.
const (
	clientManager    = "agentmcp"
	clientManagerSDK = "agentmcp+go-sdk-transport"
	clientRaw        = "go-sdk ClientSession"
	// clientManagerOff is the Manager without its per-request telemetry
	// (Options.Bench), against which clientManager (the global no-op
	// OpenTelemetry providers, the default) is compared.
	clientManagerOff = "agentmcp, telemetry off"
	// clientManagerOTel is the Manager with OpenTelemetry SDK providers:
	// every span sampled and batched to an exporter that discards them,
	// the metrics aggregated.
	clientManagerOTel = "agentmcp+OTel SDK"
	clientFloor       = "HTTP floor"
)

// caller makes one tool call.
type caller interface {
	call(ctx context.Context, tool string) error
	close()
}

// toolArgs are the arguments of the tools called.
func toolArgs(tool string) map[string]any {
	if tool == "echo" {
		return map[string]any{"text": "hello"}
	}
	return map[string]any{}
}

// newHTTPClient returns a keep-alive client for the raw go-sdk session and
// the floor, pooled like the Manager's (16 idle connections per host, no
// cap across hosts), so that the comparison is of the MCP client code, not
// of pool settings.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConnsPerHost = 16
	t.MaxIdleConns = 0
	return &http.Client{Transport: t}
}

// managerCaller calls through a Manager with one ready server.
type managerCaller struct {
	m        *mcpclient.Manager
	shutdown func() // of its OpenTelemetry SDK providers, if any
}

func newManagerCaller(ctx context.Context, url, version string, impl mcpclient.TransportImplementation) (*managerCaller, error) {
	return newManagerCallerWith(ctx, url, version, impl, nil, nil)
}

// newManagerCallerWith is newManagerCaller with Manager options, and
// shutdown called on close.
func newManagerCallerWith(ctx context.Context, url, version string, impl mcpclient.TransportImplementation, mo *mcpclient.Options, shutdown func()) (*managerCaller, error) {
	m := mcpclient.New(mo)
	opts := mcpclient.ServerOptions{
		URL:       url,
		Transport: mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP, Implementation: impl},
		Client:    mcpclient.ClientOptions{ProtocolVersion: version},
	}
	if err := connectReady(ctx, m, "s", opts); err != nil {
		m.Close(ctx)
		if shutdown != nil {
			shutdown()
		}
		return nil, err
	}
	return &managerCaller{m: m, shutdown: shutdown}, nil
}

// newTelemetryOffCaller is a managerCaller built without per-request
// telemetry.
func newTelemetryOffCaller(ctx context.Context, url, version string) (*managerCaller, error) {
	return newManagerCallerWith(ctx, url, version, "", &mcpclient.Options{Bench: &benchopt.Options{NoRequestTelemetry: true}}, nil)
}

// newOTelCaller is a managerCaller with OpenTelemetry SDK providers: every
// span sampled, batched to an exporter that discards it; the metrics
// aggregated by a reader nobody collects.
func newOTelCaller(ctx context.Context, url, version string) (*managerCaller, error) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discardExporter{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	shutdown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tp.Shutdown(ctx)
		mp.Shutdown(ctx)
	}
	return newManagerCallerWith(ctx, url, version, "", &mcpclient.Options{TracerProvider: tp, MeterProvider: mp}, shutdown)
}

// discardExporter exports spans nowhere.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// connectReady registers, connects and discovers one server.
func connectReady(ctx context.Context, m *mcpclient.Manager, id string, opts mcpclient.ServerOptions) error {
	if _, err := m.RegisterServer(ctx, id, opts); err != nil {
		return err
	}
	res, err := m.ConnectToServer(ctx, id)
	if err != nil {
		return err
	}
	if res.State != mcpclient.StateConnected {
		return fmt.Errorf("connecting %s: %s: %v", id, res.State, res.Err)
	}
	d, err := m.DiscoverIfConnected(ctx, id, nil)
	if err != nil {
		return err
	}
	if !d.Success {
		return fmt.Errorf("discovering %s: %s: %v", id, d.State, d.Err)
	}
	return nil
}

func (c *managerCaller) call(ctx context.Context, tool string) error {
	res, err := c.m.CallTool(ctx, "s", tool, toolArgs(tool), nil)
	return checkResult(res, err)
}

func (c *managerCaller) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.m.Close(ctx)
	if c.shutdown != nil {
		c.shutdown()
	}
}

// rawCaller calls through a go-sdk ClientSession on go-sdk's transport.
type rawCaller struct {
	cs *mcp.ClientSession
}

func newRawCaller(ctx context.Context, url, version string, hc *http.Client) (*rawCaller, error) {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	// List the tools first, as any client does before calling them (and as
	// the Manager does): go-sdk then knows them, and sets a 2026-07-28
	// call's Mcp-Param-* headers from their schemas.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		cs.Close()
		return nil, err
	}
	return &rawCaller{cs: cs}, nil
}

func (c *rawCaller) call(ctx context.Context, tool string) error {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: toolArgs(tool)})
	return checkResult(res, err)
}

func (c *rawCaller) close() { c.cs.Close() }

func checkResult(res *mcp.CallToolResult, err error) error {
	switch {
	case err != nil:
		return err
	case res.IsError && len(res.Content) > 0:
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return fmt.Errorf("tool call failed: %s", tc.Text)
		}
		return errors.New("tool call failed")
	case res.IsError || len(res.Content) == 0:
		return errors.New("tool call failed")
	}
	return nil
}

// floorCaller replays, with plain net/http on a keep-alive connection, the
// very request go-sdk sent for each tool (headers and body, with a fresh
// JSON-RPC id), and reads the whole response: the cost of the HTTP round
// trip alone.
type floorCaller struct {
	hc   *http.Client
	url  string
	reqs map[string]*capturedRequest
	id   atomic.Int64
	bufs sync.Pool
	// keep holds the session whose requests were captured (its session id
	// is in the headers), open until close.
	keep *mcp.ClientSession
}

type capturedRequest struct {
	header         http.Header
	prefix, suffix []byte // the body around the id
}

func newFloorCaller(ctx context.Context, url, version string, hc *http.Client) (*floorCaller, error) {
	rec := &recorder{next: hc.Transport, reqs: map[string]*capturedRequest{}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rec}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	for _, tool := range []string{"echo", "big"} {
		rec.tool.Store(&tool)
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: toolArgs(tool)}); err != nil {
			cs.Close()
			return nil, err
		}
	}
	rec.tool.Store(nil)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) != 2 {
		cs.Close()
		return nil, fmt.Errorf("captured %d tools/call requests, want 2", len(rec.reqs))
	}
	f := &floorCaller{hc: hc, url: url, reqs: rec.reqs, keep: cs}
	f.id.Store(1 << 20)
	f.bufs.New = func() any { return new(bytes.Buffer) }
	return f, nil
}

func (f *floorCaller) call(ctx context.Context, tool string) error {
	cr := f.reqs[tool]
	buf := f.bufs.Get().(*bytes.Buffer)
	defer f.bufs.Put(buf)
	buf.Reset()
	buf.Write(cr.prefix)
	buf.Write(strconv.AppendInt(buf.AvailableBuffer(), f.id.Add(1), 10))
	buf.Write(cr.suffix)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(buf.Bytes()))
	if err != nil {
		return err
	}
	for k, v := range cr.header {
		req.Header[k] = v
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(buf.Bytes(), []byte(`"result"`)) {
		return fmt.Errorf("floor: %s", resp.Status)
	}
	return nil
}

func (f *floorCaller) close() { f.keep.Close() }

// recorder captures the tools/call request of the tool being called.
type recorder struct {
	next http.RoundTripper
	tool atomic.Pointer[string]
	mu   sync.Mutex
	reqs map[string]*capturedRequest
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if tool := r.tool.Load(); tool != nil && req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"tools/call"`)) {
			if i := bytes.Index(body, []byte(`"id":`)); i >= 0 {
				j := i + len(`"id":`)
				k := j
				for k < len(body) && body[k] >= '0' && body[k] <= '9' {
					k++
				}
				r.mu.Lock()
				r.reqs[*tool] = &capturedRequest{header: req.Header.Clone(),
					prefix: bytes.Clone(body[:j]), suffix: bytes.Clone(body[k:])}
				r.mu.Unlock()
			}
		}
	}
	return r.next.RoundTrip(req)
}

// workload is a block of calls of one tool by conc callers.
type workload struct {
	name string
	tool string
	conc int
	n    int
}

// sample is what one block measured.
type sample struct {
	p50, p99     time.Duration
	perSec       float64
	bytesPerCall float64
	allocsPerOp  float64
	// cpuPerCall is this process's CPU time (user and system, every
	// goroutine) per call: the client's work, less sensitive than time
	// per call to what else the machine runs.
	cpuPerCall time.Duration
}

// measure runs w on c: n calls in all, split over w.conc callers.
func measure(ctx context.Context, c caller, w workload) (sample, error) {
	lat := make([][]time.Duration, w.conc)
	for i := range lat {
		lat[i] = make([]time.Duration, 0, w.n/w.conc+1)
	}
	errs := make([]error, w.conc)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for g := range w.conc {
		calls := w.n / w.conc
		if g < w.n%w.conc {
			calls++
		}
		body := func() {
			for range calls {
				t0 := time.Now()
				if err := c.call(ctx, w.tool); err != nil {
					errs[g] = err
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		}
		if w.conc == 1 {
			body()
		} else {
			wg.Go(body)
		}
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&after)
	if err := errors.Join(errs...); err != nil {
		return sample{}, err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sortDurations(all)
	n := float64(len(all))
	return sample{
		p50:          percentile(all, 50),
		p99:          percentile(all, 99),
		perSec:       n / wall.Seconds(),
		bytesPerCall: float64(after.TotalAlloc-before.TotalAlloc) / n,
		allocsPerOp:  float64(after.Mallocs-before.Mallocs) / n,
		cpuPerCall:   time.Duration(float64(cpu) / n),
	}, nil
}

// warm makes n unmeasured calls.
func warm(ctx context.Context, c caller, tool string, n int) error {
	for range n {
		if err := c.call(ctx, tool); err != nil {
			return err
		}
	}
	return nil
}
