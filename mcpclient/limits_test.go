//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// blockingForm is a form handler that reports each request on started and
// waits until its context ends.
func blockingForm(started chan<- string) *input.ElicitationHandlers {
	return &input.ElicitationHandlers{Form: func(ctx context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
		started <- serverID
		<-ctx.Done()
		return nil, ctx.Err()
	}}
}

// collect waits for n answers of f and returns how many had each error
// code (0 for a result).
func collect(t *testing.T, f *mcptest.Flooder, n int) map[int64]int {
	t.Helper()
	ctx := testCtx(t)
	codes := map[int64]int{}
	for range n {
		select {
		case a := <-f.Answers():
			var code int64
			if a.Error != nil {
				code = a.Error.Code
			}
			codes[code]++
		case <-ctx.Done():
			t.Fatalf("only %v answers of %d", codes, n)
		}
	}
	return codes
}

// waitStarted waits for n handlers to start and returns how many each
// server started.
func waitStarted(t *testing.T, started <-chan string, n int) map[string]int {
	t.Helper()
	ctx := testCtx(t)
	got := map[string]int{}
	for range n {
		select {
		case id := <-started:
			got[id]++
		case <-ctx.Done():
			t.Fatalf("only %v handlers started of %d", got, n)
		}
	}
	return got
}

const smallForm = `{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`

// TestServerRequestLimits: legacy servers that push requests with no call
// in flight get PerServer of them pending, then PerManager across servers;
// the rest, and any larger than the size limits, are refused at once with a
// JSON-RPC error, and the servers' tools keep working.
//
// With go-sdk's transport, whose reading the Manager does not see, the
// same limits hold once go-sdk has decoded a request.
func TestServerRequestLimits(t *testing.T) {
	for _, impl := range []mcpclient.TransportImplementation{mcpclient.ImplementationAgentMCP, mcpclient.ImplementationGoSDK} {
		t.Run(string(impl), func(t *testing.T) { testServerRequestLimits(t, impl) })
	}
}

func testServerRequestLimits(t *testing.T, impl mcpclient.TransportImplementation) {
	f1, f2 := mcptest.NewFlooder(t), mcptest.NewFlooder(t) // stopped after the Manager closes
	started := make(chan string, 16)
	m := newManager(t, &mcpclient.Options{ServerRequests: mcpclient.ServerRequestLimits{PerServer: 2, PerManager: 3, MaxElicitationSize: 4 << 10}})
	m.ConfigureElicitationHandlers(blockingForm(started))
	tr := mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP, Implementation: impl}
	connectReady(t, m, "f1", mcpclient.ServerOptions{URL: f1.URL, Transport: tr})
	connectReady(t, m, "f2", mcpclient.ServerOptions{URL: f2.URL, Transport: tr})
	ctx := testCtx(t)

	// f1: two pending (PerServer), three refused.
	if err := f1.Flood(ctx, "elicitation/create", []byte(smallForm), 1, 5); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, f1, 3); got[-32000] != 3 {
		t.Errorf("f1's answers by code: %v; want 3 refusals (-32000)", got)
	}
	if got := waitStarted(t, started, 2); got["f1"] != 2 {
		t.Errorf("handlers started: %v", got)
	}
	// f2: one pending (PerManager is 3), two refused.
	if err := f2.Flood(ctx, "elicitation/create", []byte(smallForm), 1, 3); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, f2, 2); got[-32000] != 2 {
		t.Errorf("f2's answers by code: %v; want 2 refusals (-32000)", got)
	}
	if got := waitStarted(t, started, 1); got["f2"] != 1 {
		t.Errorf("handlers started: %v", got)
	}
	// Too large: refused before anything decodes it, whatever is pending.
	big := fmt.Appendf(nil, `{"message":%q,"requestedSchema":{"type":"object"}}`, strings.Repeat("x", 8<<10))
	if err := f2.Flood(ctx, "elicitation/create", big, 10, 2); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, f2, 2); got[-32602] != 2 {
		t.Errorf("f2's answers to large requests by code: %v; want 2 refusals (-32602)", got)
	}
	// f1 has PerServer requests in flight: a ping waits its turn.
	if err := f1.Flood(ctx, "ping", []byte(`{}`), 20, 1); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, f1, 1); got[-32000] != 1 {
		t.Errorf("f1's answer to a ping beyond the limit: %v; want a refusal (-32000)", got)
	}
	// f2 has one slot left for roots/list, which it may not ask: roots
	// are not offered.
	if err := f2.Flood(ctx, "roots/list", []byte(`{}`), 30, 1); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, f2, 1); got[-32601] != 1 {
		t.Errorf("f2's answer to roots/list: %v; want method not found (-32601)", got)
	}
	for _, id := range []string{"f1", "f2"} {
		res, err := m.CallTool(ctx, id, "echo", map[string]any{"text": "hi"}, nil)
		if err != nil || res.IsError {
			t.Errorf("calling %s: %+v %v", id, res, err)
		}
	}
	select {
	case id := <-started:
		t.Errorf("a handler started beyond the limits, for %s", id)
	default:
	}
}

// TestInputRequestLimits: 2026-07-28 input requests in a call's result
// count against the same limits; past them, or too large, the call fails
// with ErrServerRequestRefused.
func TestInputRequestLimits(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	srv.AddTool(&mcp.Tool{Name: "many", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) > 0 {
			return textResult("answered"), nil
		}
		reqs := mcp.InputRequestMap{}
		for i := range 3 {
			reqs[fmt.Sprint("q", i)] = &mcp.ElicitParams{Message: "Name?", RequestedSchema: map[string]any{"type": "object"}}
		}
		return &mcp.CallToolResult{InputRequests: reqs}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "big-sample", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) > 0 {
			return textResult("answered"), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: strings.Repeat("x", 8<<10)}}}}}}, nil
	})
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv })

	started := make(chan string, 16)
	var sampled atomic.Int64
	m := newManager(t, &mcpclient.Options{ServerRequests: mcpclient.ServerRequestLimits{PerServer: 2, MaxSamplingSize: 4 << 10}})
	m.ConfigureElicitationHandlers(blockingForm(started))
	m.ConfigureSampling(func(context.Context, *mcp.CreateMessageParams, string) (*mcp.CreateMessageResult, error) {
		sampled.Add(1)
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "ok"}}, nil
	})
	connectReady(t, m, "s", mcpclient.ServerOptions{URL: hs.URL, Client: mcpclient.ClientOptions{ProtocolVersion: "2026-07-28"}})
	ctx := testCtx(t)

	_, err := m.CallTool(ctx, "s", "many", nil, nil)
	if !errors.Is(err, mcpclient.ErrServerRequestRefused) {
		t.Errorf("three input requests with PerServer 2: %v; want ErrServerRequestRefused", err)
	}
	waitStarted(t, started, 2)
	_, err = m.CallTool(ctx, "s", "big-sample", nil, nil)
	if !errors.Is(err, mcpclient.ErrServerRequestRefused) || sampled.Load() != 0 {
		t.Errorf("an 8 KiB sampling request with MaxSamplingSize 4 KiB: %v (handler called %d times); want ErrServerRequestRefused", err, sampled.Load())
	}
}

// TestModernServerRequestDropped: a 2026-07-28 server sends no JSON-RPC
// requests; one that arrives (here in a call's response stream) is dropped
// unread, and never reaches a handler.
func TestModernServerRequestDropped(t *testing.T) {
	hs := interceptMode(t, mcptest.Stateless, func(w http.ResponseWriter, method, name string, id json.RawMessage) bool {
		if method != "tools/call" || name != "push" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", `{"jsonrpc":"2.0","id":"pushed","method":"elicitation/create","params":`+smallForm+`}`)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", id)
		return true
	})
	logs := make(messages, 64)
	started := make(chan string, 1)
	m := newManager(t, &mcpclient.Options{Logger: slog.New(logs)})
	m.ConfigureElicitationHandlers(blockingForm(started))
	connectReady(t, m, "s", mcpclient.ServerOptions{URL: hs.URL, Client: mcpclient.ClientOptions{ProtocolVersion: "2026-07-28"}})
	res, err := m.CallTool(testCtx(t), "s", "push", nil, nil)
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("call: %+v %v", res, err)
	}
	waitLog(t, logs, "mcp server sent a JSON-RPC request on a 2026-07-28 session, where servers send none; dropped")
	select {
	case <-started:
		t.Error("the request reached the elicitation handler")
	default:
	}
}
