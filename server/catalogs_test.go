package server

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestListsAfterWakeFromStore: after a hibernation, with the MCP server's
// answers held, GET .../tools, the server state and the agent's MCP
// endpoint's tools/list answer from the stored catalog (the tools marked
// stale); once the server answers, the live list replaces it.
func TestListsAfterWakeFromStore(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer("s")
	var (
		mu   sync.Mutex
		open = make(chan struct{})
	)
	close(open)
	real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gate := open
		mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		real.ServeHTTP(w, r)
	}))
	e := newEnv(t, nil)
	ctx := testCtx(t)
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "s", URL: hs.URL, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	names := func(tools []api.Tool) (out []string, stale int) {
		for _, tool := range tools {
			out = append(out, tool.Name)
			if tool.Stale {
				stale++
			}
		}
		slices.Sort(out)
		return out, stale
	}
	tools, err := c.ListTools(ctx, client.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := names(tools)
	if status, _, b := e.do("POST", "/agents/test/a/hibernate", ""); status != http.StatusNoContent {
		t.Fatalf("hibernate: %d %s", status, b)
	}
	srv.AddTool("fresh")
	mu.Lock()
	open = make(chan struct{})
	mu.Unlock()
	release := sync.OnceFunc(func() {
		mu.Lock()
		close(open)
		mu.Unlock()
	})
	t.Cleanup(release)

	tools, err = c.ListTools(ctx, client.Filter{}) // wakes the agent
	if err != nil {
		t.Fatal(err)
	}
	if got, stale := names(tools); !slices.Equal(got, before) || stale != len(got) {
		t.Errorf("tools after the wake, the server held: %v (%d stale), want %v, all stale", got, stale, before)
	}
	st, err := c.Server(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !st.CatalogStale || st.ToolCount != len(before) || st.ToolBytes == 0 {
		t.Errorf("server state after the wake: stale %v, %d tools, %d bytes", st.CatalogStale, st.ToolCount, st.ToolBytes)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.ts.URL + "/agents/test/a/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lr, err := cs.ListTools(ctx, nil)
	if err != nil || len(lr.Tools) != len(before) {
		t.Errorf("the MCP endpoint's tools/list with the server held: %d tools, %v; want %d", len(lr.Tools), err, len(before))
	}

	release()
	for {
		tools, err = c.ListTools(ctx, client.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if got, stale := names(tools); slices.Contains(got, "fresh") && stale == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the live list never replaced the stored one: %v", tools)
		}
		waitBriefly(ctx)
	}
}

// waitBriefly is one step of a poll.
func waitBriefly(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Millisecond):
	}
}
