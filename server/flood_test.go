package server

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// formParams returns the params of a form-mode elicitation whose schema
// has string properties up to about size bytes.
func formParams(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"mode":"form","message":"Fill this in.","requestedSchema":{"type":"object","properties":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field_%06d":{"type":"string","title":"Field %d","description":"Say something about field %d."}`, i, i, i)
	}
	b.WriteString(`}}}`)
	return []byte(b.String())
}

// samplingParams returns the params of a sampling request of about size
// bytes.
func samplingParams(size int) []byte {
	text, _ := json.Marshal(strings.Repeat("lorem ipsum ", size/12))
	return fmt.Appendf(nil, `{"maxTokens":10,"messages":[{"role":"user","content":{"type":"text","text":%s}}]}`, text)
}

func heapMiB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// TestServeFlood: a hostile server pushes elicitation and sampling
// requests on its standalone stream, with no call in flight, small ones
// and 2 MiB ones. serve keeps the first few pending (the per-server
// limit), refuses the rest with a JSON-RPC error at once, and its heap
// stays under a bound; the agent's other server, another agent and the
// flooding server's own tools keep working.
func TestServeFlood(t *testing.T) {
	// Not parallel: the heap figures are the process's.
	e := newEnv(t, nil)
	ctx, stop := context.WithTimeout(context.Background(), 3*time.Minute) // the flood is slow under -race
	defer stop()
	fl := mcptest.NewFlooder(t)
	good := mcptest.NewServer("good")
	goodURL := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return good.Server }).URL
	ca, cb := e.client("test", "a"), e.client("test", "b")
	for _, add := range []struct {
		c   *client.Client
		req api.AddRequest
	}{
		{ca, api.AddRequest{Name: "flooder", URL: fl.URL, ID: "flooder"}},
		{ca, api.AddRequest{Name: "good", URL: goodURL, ID: "good"}},
		{cb, api.AddRequest{Name: "good", URL: goodURL, ID: "good"}},
	} {
		if _, err := add.c.AddMCPServer(ctx, add.req); err != nil {
			t.Fatal(err)
		}
	}

	const (
		small, big, sampling = 40, 10, 5
		sent                 = small + big + sampling
		perServer            = 4       // mcpclient's default ServerRequestLimits.PerServer
		bound                = 64.0    // MiB of heap growth allowed: a sanity bound, with a wide margin
		bigSize              = 2 << 20 // as in the report: 2 MiB forms
	)
	before := heapMiB()
	for _, f := range []struct {
		method      string
		params      []byte
		first, size int
	}{
		{"elicitation/create", formParams(48 << 10), 1, small},
		{"elicitation/create", formParams(bigSize), small + 1, big},
		{"sampling/createMessage", samplingParams(bigSize), small + big + 1, sampling},
	} {
		if err := fl.Flood(ctx, f.method, f.params, f.first, f.size); err != nil {
			t.Fatal(err)
		}
	}

	// Settle: every request is either pending or answered.
	settleCtx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a safety net
	defer cancel()
	answers := map[string]int64{} // id: error code
	var pending []api.Elicitation
	tick := time.NewTicker(20 * time.Millisecond) // polls the pending list; the answers wake it too
	defer tick.Stop()
settle:
	for {
		var err error
		if pending, err = ca.Elicitations(ctx); err != nil {
			t.Fatal(err)
		}
		if len(pending)+len(answers) >= sent {
			break
		}
		select {
		case a := <-fl.Answers():
			if a.Error == nil {
				t.Fatalf("request %s was answered without an error: %s", a.ID, a.Result)
			}
			answers[a.ID] = a.Error.Code
		case <-tick.C:
		case <-settleCtx.Done():
			t.Errorf("the flood did not settle: %d pending, %d answered of %d", len(pending), len(answers), sent)
			break settle
		}
	}
	after := heapMiB()
	t.Logf("flood of %d elicitations (%d of 48 KiB, %d of 2 MiB) and %d sampling requests of 2 MiB: heap %.1f MiB before, %.1f MiB after, growth %.1f MiB (bound %.0f MiB); %d pending, %d refused",
		small+big, small, big, sampling, before, after, after-before, bound, len(pending), len(answers))
	if after-before > bound {
		t.Errorf("heap grew by %.1f MiB, more than %.0f MiB", after-before, bound)
	}
	if len(pending) != perServer {
		t.Errorf("%d elicitations pending; want %d (the per-server limit)", len(pending), perServer)
	}
	for _, p := range pending {
		if len(p.RequestedSchema) > 64<<10 {
			t.Errorf("a pending elicitation holds a schema of %d bytes", len(p.RequestedSchema))
		}
	}
	for i := small + 1; i <= sent; i++ {
		if code, ok := answers[fmt.Sprintf("flood-%d", i)]; !ok || code != jsonrpc.CodeInvalidParams {
			t.Errorf("2 MiB request flood-%d: answered %v with code %d; want refused as too large (%d)", i, ok, code, jsonrpc.CodeInvalidParams)
		}
	}

	// Everything else keeps working while the pending requests wait.
	for _, call := range []struct {
		c      *client.Client
		server string
	}{{ca, "good"}, {cb, "good"}, {ca, "flooder"}} {
		res, err := call.c.CallTool(ctx, call.server, "echo", map[string]any{"text": "still here"})
		if err != nil || len(toolResult(t, res).Content) == 0 || toolResult(t, res).Content[0].(*mcp.TextContent).Text != "echo: still here" {
			t.Errorf("calling %s during the flood: %+v %v", call.server, res, err)
		}
	}
}
