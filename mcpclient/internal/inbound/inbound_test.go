//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package inbound

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/mcpclient/input"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func request(t *testing.T, id float64, method, params string) *jsonrpc.Request {
	t.Helper()
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		t.Fatal(err)
	}
	req := &jsonrpc.Request{ID: rid, Method: method}
	if params != "" {
		req.Params = []byte(params)
	}
	return req
}

func notification(method string) *jsonrpc.Request { return &jsonrpc.Request{Method: method} }

// verdict is what Admit decided, as text: "admit", "drop", or the
// message of the refusal.
func verdict(g *Gate, req *jsonrpc.Request) string {
	refuse, drop := g.Admit(req)
	switch {
	case drop:
		return "drop"
	case refuse != nil:
		return refuse.Message
	}
	return "admit"
}

// TestGate: the gate follows the era of what the client writes, and
// refuses past the handshake rule, the size limits and PerServer requests
// in flight.
func TestGate(t *testing.T) {
	g := NewGate(Limits{PerServer: 2, MaxElicitationSize: 40}, slog.New(slog.DiscardHandler), func() string { return "s" })

	g.Written(request(t, 1, "initialize", `{}`))
	if got := verdict(g, request(t, 1, "elicitation/create", `{}`)); !strings.Contains(got, "before the session is initialized") {
		t.Errorf("during the handshake: %s; want refused", got)
	}
	if got := verdict(g, request(t, 2, "ping", ``)); got != "admit" {
		t.Errorf("ping during the handshake: %s; want admit", got)
	}
	g.Answered(request(t, 2, "ping", ``).ID)
	g.Written(notification("notifications/initialized"))

	big := `{"message":"` + strings.Repeat("x", 40) + `"}`
	if got := verdict(g, request(t, 3, "elicitation/create", big)); !strings.Contains(got, "elicitation/create request too large") {
		t.Errorf("large elicitation: %s; want refused for its size", got)
	}
	if got := verdict(g, request(t, 4, "x/"+strings.Repeat("y", 10), `{"a":"`+strings.Repeat("x", 5000)+`"}`)); !strings.Contains(got, "unknown method request too large") {
		t.Errorf("a method of the server's: %s; want it named as unknown, not echoed", got)
	}
	for id := 5.0; id <= 6; id++ {
		if got := verdict(g, request(t, id, "roots/list", `{}`)); got != "admit" {
			t.Fatalf("request %v: %s; want admit", id, got)
		}
	}
	if got := verdict(g, request(t, 5, "roots/list", `{}`)); got != "admit" {
		t.Errorf("a duplicate id: %s; want it passed on for go-sdk to refuse", got)
	}
	if got := verdict(g, request(t, 7, "roots/list", `{}`)); !strings.Contains(got, "too many requests in flight (the limit is 2)") {
		t.Errorf("a third in flight: %s; want refused", got)
	}
	g.Answered(request(t, 5, "", ``).ID)
	if got := verdict(g, request(t, 8, "roots/list", `{}`)); got != "admit" {
		t.Errorf("after an answer: %s; want admit", got)
	}

	// A 2026-07-28 call makes the session modern: requests are dropped.
	g.Written(request(t, 9, "tools/call", `{"name":"x","_meta":{"`+mcp.MetaKeyProtocolVersion+`":"2026-07-28"}}`))
	if !g.Modern() {
		t.Fatal("not modern after a 2026-07-28 call")
	}
	if got := verdict(g, request(t, 10, "ping", ``)); got != "drop" {
		t.Errorf("a request on a modern session: %s; want drop", got)
	}
	g.Written(request(t, 11, "initialize", `{}`))
	if g.Modern() {
		t.Error("modern after a new handshake")
	}
}

// TestInputs: a request for input takes a slot of its server and one of
// the Manager's, until it is released.
func TestInputs(t *testing.T) {
	var in Inputs
	var a, b ServerInputs
	l := Limits{PerServer: 2, PerManager: 3}
	var releases []func()
	take := func(srv *ServerInputs, id string) error {
		release, err := in.Acquire(srv, l, id, "elicitation")
		if err == nil {
			releases = append(releases, release)
		}
		return err
	}
	for range 2 {
		if err := take(&a, "a"); err != nil {
			t.Fatal(err)
		}
	}
	err := take(&a, "a")
	var rerr *RefusedError
	var jerr *jsonrpc.Error
	if !errors.Is(err, ErrRefused) || !errors.As(err, &rerr) || !errors.As(err, &jerr) || jerr.Code != codeRefused ||
		!strings.Contains(err.Error(), `mcp server "a" has 2 waiting`) {
		t.Errorf("third of a: %v; want refused for the server's limit", err)
	}
	if err := take(&b, "b"); err != nil {
		t.Fatal(err)
	}
	if err := take(&b, "b"); err == nil || !strings.Contains(err.Error(), "3 are waiting across all servers") {
		t.Errorf("fourth in all: %v; want refused for the Manager's limit", err)
	}
	if n := in.Pending(); n != 3 {
		t.Errorf("pending %d, want 3", n)
	}
	for _, r := range releases {
		r()
	}
	if n := in.Pending(); n != 0 || a.pending != 0 || b.pending != 0 {
		t.Errorf("after release: pending %d (a %d, b %d); want 0", n, a.pending, b.pending)
	}
}

func TestCheckSizes(t *testing.T) {
	l := Limits{MaxElicitationSize: 100, MaxSamplingSize: 100}.WithDefaults()
	req, err := input.NewElicitationRequest("s", &mcp.ElicitParams{Message: strings.Repeat("x", 200)})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckElicitation(l, "s", req); !errors.Is(err, ErrRefused) {
		t.Errorf("large elicitation: %v; want refused", err)
	}
	small, _ := input.NewElicitationRequest("s", &mcp.ElicitParams{Message: "name?"})
	if err := CheckElicitation(l, "s", small); err != nil {
		t.Errorf("small elicitation: %v", err)
	}
	p := &mcp.CreateMessageParams{SystemPrompt: strings.Repeat("x", 200)}
	if err := CheckSampling(l, "s", p); !errors.Is(err, ErrRefused) {
		t.Errorf("large sampling request: %v; want refused", err)
	}
	if err := CheckSampling(l, "s", &mcp.CreateMessageParams{}); err != nil {
		t.Errorf("small sampling request: %v", err)
	}
	if l.PerServer != defaultRequestsPerServer || l.PerManager != defaultRequestsPerManager {
		t.Errorf("defaults not filled in: %+v", l)
	}
}

// TestMiddleware: without a gate, the middleware refuses requests of
// modern sessions, large ones, and those past PerServer in flight.
func TestMiddleware(t *testing.T) {
	modern := false
	release := make(chan struct{})
	var started sync.WaitGroup
	next := func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		started.Done()
		<-release
		return &mcp.ListRootsResult{}, nil
	}
	h := Middleware(Limits{PerServer: 1, MaxElicitationSize: 40}, func(mcp.Request) bool { return modern })(next)
	ctx := context.Background()
	roots := &mcp.ListRootsRequest{Params: &mcp.ListRootsParams{}}

	started.Add(1)
	done := make(chan error)
	go func() {
		_, err := h(ctx, "roots/list", roots)
		done <- err
	}()
	started.Wait()
	if _, err := h(ctx, "roots/list", roots); err == nil || !strings.Contains(err.Error(), "too many requests in flight") {
		t.Errorf("second in flight: %v; want refused", err)
	}
	big := &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: strings.Repeat("x", 50)}}
	if _, err := h(ctx, "elicitation/create", big); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("large elicitation: %v; want refused for its size first", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	modern = true
	if _, err := h(ctx, "roots/list", roots); err == nil || !strings.Contains(err.Error(), "sends no requests") {
		t.Errorf("on a modern session: %v; want refused", err)
	}
}
