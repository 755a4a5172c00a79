package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMedianPercentile(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100 - i)
	}
	sortDurations(ds)
	if p50, p99 := percentile(ds, 50), percentile(ds, 99); p50 != 50 || p99 != 99 {
		t.Errorf("p50, p99 = %v, %v; want 50, 99", p50, p99)
	}
}

// TestReplay checks that the replaying server answers as the go-sdk server
// it recorded, to both the Manager and a raw go-sdk session, in both eras.
func TestReplay(t *testing.T) {
	srv := benchServer("bench", bigText())
	get := func(*http.Request) *mcp.Server { return srv }
	mux := http.NewServeMux()
	mux.Handle(pathStateful, mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle(pathStateless, mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true}))
	real := httptest.NewServer(mux)
	defer real.Close()
	defer func() {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			fast, err := recordFast(ctx, real.URL+e.path, e.name)
			if err != nil {
				t.Fatal(err)
			}
			replay := httptest.NewServer(fast)
			defer replay.Close()
			want, err := newRawCaller(ctx, real.URL+e.path, e.name, hc)
			if err != nil {
				t.Fatal(err)
			}
			defer want.close()
			raw, err := newRawCaller(ctx, replay.URL, e.name, hc)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.close()
			m, err := newManagerCaller(ctx, replay.URL, e.name, "")
			if err != nil {
				t.Fatal(err)
			}
			defer m.close()
			for _, tool := range []string{"echo", "big"} {
				w, err := want.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: toolArgs(tool)})
				if err != nil {
					t.Fatal(err)
				}
				r, err := raw.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: toolArgs(tool)})
				if err != nil {
					t.Fatal(err)
				}
				g, err := m.m.CallTool(ctx, "s", tool, toolArgs(tool), nil)
				if err != nil {
					t.Fatal(err)
				}
				opt := cmp.AllowUnexported(mcp.CallToolResult{})
				if diff := cmp.Diff(w, r, opt); diff != "" {
					t.Errorf("%s: replayed result differs for go-sdk (-want +got):\n%s", tool, diff)
				}
				// The Manager's direct path (transport.DirectCaller)
				// leaves the unexported result type empty where go-sdk reads
				// "complete": the same to go-sdk and to NeedsInput.
				if diff := cmp.Diff(w, g, cmpopts.IgnoreUnexported(mcp.CallToolResult{})); diff != "" || w.NeedsInput() != g.NeedsInput() {
					t.Errorf("%s: replayed result differs for the Manager (-want +got):\n%s", tool, diff)
				}
			}
		})
	}
}

// TestConnectOnce checks that every client of the connect section reaches
// its first listed tools against the go-sdk server in both eras, and that
// the Manager with ToolsOnly sends the same lists as go-sdk's client (one
// tools/list) while the default Manager lists all four.
func TestConnectOnce(t *testing.T) {
	srv := benchServer("bench", bigText())
	get := func(*http.Request) *mcp.Server { return srv }
	mux := http.NewServeMux()
	mux.Handle(pathStateful, mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle(pathStateless, mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true}))
	var mu sync.Mutex
	lists := map[string]int{}
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if m := regexp.MustCompile(`"method":"([a-z/]+/list)"`).FindSubmatch(body); m != nil {
			mu.Lock()
			lists[string(m[1])]++
			mu.Unlock()
		}
		mux.ServeHTTP(w, r)
	}))
	defer real.Close()
	defer func() {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, e := range eras {
		for _, kind := range connectClients {
			t.Run(e.name+"/"+kind, func(t *testing.T) {
				mu.Lock()
				clear(lists)
				mu.Unlock()
				if _, err := connectOnce(ctx, kind, real.URL+e.path, e.name); err != nil {
					t.Fatal(err)
				}
				want := map[string]int{"tools/list": 1}
				if kind == connectManagerAll {
					want = map[string]int{"tools/list": 1, "prompts/list": 1, "resources/list": 1, "resources/templates/list": 1}
				}
				mu.Lock()
				defer mu.Unlock()
				if diff := cmp.Diff(want, lists); diff != "" {
					t.Errorf("lists sent (-want +got):\n%s", diff)
				}
			})
		}
	}
}
