// Package aitest helps the adapters' end-to-end tests: a scripted fake
// model served on 127.0.0.1, and a mcpclient.Manager with real MCP
// servers (go-sdk in process, server-everything over stdio). It is for
// tests only.
package aitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// A Step is one request a Script expects, and its reply.
type Step struct {
	// Path is the request's path, e.g. "/v1/chat/completions".
	Path string
	// Check asserts on the request body (decoded JSON). It runs on the
	// server's goroutine: report with t.Errorf, not t.Fatal.
	Check func(t testing.TB, body map[string]any)
	// Reply is the JSON response body.
	Reply string
}

// Script is a scripted fake model: it expects its steps' requests, in
// order, and fails the test on any other request, or, when the test ends,
// if a step was not reached.
type Script struct {
	URL string

	t     testing.TB
	steps []Step

	mu sync.Mutex
	n  int // requests received
}

// Serve starts a Script on 127.0.0.1; it is stopped when the test ends.
func Serve(t testing.TB, steps ...Step) *Script {
	t.Helper()
	s := &Script{t: t, steps: steps}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = hs.URL
	t.Cleanup(func() {
		hs.Close()
		if n := s.Requests(); n != len(s.steps) {
			t.Errorf("the fake model got %d requests, want %d", n, len(s.steps))
		}
	})
	return s
}

// Requests returns the number of requests received.
func (s *Script) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *Script) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := s.n
	s.n++
	s.mu.Unlock()
	if i >= len(s.steps) {
		s.t.Errorf("fake model: unexpected request %d: %s %s", i+1, r.Method, r.URL.Path)
		http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusInternalServerError)
		return
	}
	step := s.steps[i]
	if r.Method != http.MethodPost || r.URL.Path != step.Path {
		s.t.Errorf("fake model: request %d is %s %s, want POST %s", i+1, r.Method, r.URL.Path, step.Path)
	}
	raw, err := io.ReadAll(r.Body)
	var body map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil {
		s.t.Errorf("fake model: request %d: %v", i+1, err)
	} else if step.Check != nil {
		step.Check(s.t, body)
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, step.Reply)
}

// Manager returns a Manager closed when the test ends.
func Manager(t testing.TB) *mcpclient.Manager {
	t.Helper()
	m := mcpclient.New(nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// Ctx returns a context bounded as a safety net, cancelled when the test
// ends.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// InProcess registers an mcptest server under id, in process, with one
// more tool, "release", that releases its "slow" calls (so a test can
// prove that two calls ran at the same time), and connects and discovers
// it.
func InProcess(t testing.TB, m *mcpclient.Manager, id string) *mcptest.Server {
	t.Helper()
	s := mcptest.NewServer(id)
	mcp.AddTool(s.Server, &mcp.Tool{Name: "release", Description: "Releases the calls of slow."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			s.ReleaseSlow()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
		})
	connect(t, m, id, mcpclient.ServerOptions{Name: id,
		InProcess: func(context.Context, map[string]any) (*mcp.Server, error) { return s.Server, nil }})
	return s
}

// Everything registers server-everything over stdio under id, connects
// and discovers it, and waits until its catalog holds tools. It skips the
// test when the npm test servers are not installed (see package peers).
func Everything(t testing.TB, m *mcpclient.Manager, id string, tools ...string) {
	t.Helper()
	cmd := peers.EverythingCommand(t)
	ready := make(chan struct{}, 1)
	has := func() bool {
		var names []string
		for _, tool := range m.ListTools(mcpclient.Filter{ServerID: []string{id}}) {
			names = append(names, tool.Name)
		}
		for _, want := range tools {
			if !slices.Contains(names, want) {
				return false
			}
		}
		return true
	}
	dispose := m.Subscribe(func(ev mcpclient.Event) {
		if ev.ServerID == id && has() {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	})
	defer dispose()
	connect(t, m, id, mcpclient.ServerOptions{Name: id,
		Command: &mcpclient.CommandOptions{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env}})
	ctx := Ctx(t)
	if !has() {
		select {
		case <-ready:
		case <-ctx.Done():
			t.Fatalf("server-everything's catalog lacks some of %v", tools)
		}
	}
	m.WaitForConnections(ctx)
}

func connect(t testing.TB, m *mcpclient.Manager, id string, opts mcpclient.ServerOptions) {
	t.Helper()
	ctx := Ctx(t)
	if _, err := m.RegisterServer(ctx, id, opts); err != nil {
		t.Fatal(err)
	}
	if res, err := m.ConnectToServer(ctx, id); err != nil || res.State != mcpclient.StateConnected {
		t.Fatalf("ConnectToServer(%s) = %+v, %v", id, res, err)
	}
	if res, err := m.DiscoverIfConnected(ctx, id, nil); err != nil || !res.Success {
		t.Fatalf("DiscoverIfConnected(%s) = %+v, %v", id, res, err)
	}
}

// Get returns the value at path in a decoded JSON document: map keys and
// slice indices; nil when absent.
func Get(v any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[p]
		case int:
			s, ok := v.([]any)
			if !ok || p < 0 || p >= len(s) {
				return nil
			}
			v = s[p]
		default:
			panic(fmt.Sprintf("aitest.Get: path element %T", p))
		}
	}
	return v
}

// JSON returns v as compact JSON, for messages.
func JSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
