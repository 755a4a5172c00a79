package main

import (
	"context"
	"testing"
	"time"
)

// TestHandshakeCounts checks the counter that wake_resumed_without_handshake
// relies on: a new connection to a legacy server counts its era probe and
// its initialize, to a 2026-07-28 one a server/discover, and each request is
// counted by method.
func TestHandshakeCounts(t *testing.T) {
	h, err := startMCPHost([]mcpPath{{"/legacy", false}, {"/stateless", true}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tt := range []struct {
		path           string
		init, discover int64
	}{
		{"/legacy", 1, 1}, // the era probe (server/discover, refused), then initialize
		{"/stateless", 0, 1},
	} {
		c, err := newManagerCaller(ctx, h.url+tt.path, "", "")
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		if _, err := c.m.CallTool(ctx, "s", "echo", map[string]any{"text": "x"}, nil); err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		c.close()
		pc := h.counts[tt.path]
		if got := pc.initialize.Load(); got != tt.init {
			t.Errorf("%s: %d initialize, want %d", tt.path, got, tt.init)
		}
		if got := pc.discover.Load(); got != tt.discover {
			t.Errorf("%s: %d server/discover, want %d", tt.path, got, tt.discover)
		}
		if got := pc.snapshot()["tools/call"]; got != 1 {
			t.Errorf("%s: %d tools/call counted, want 1 (all: %v)", tt.path, got, pc.snapshot())
		}
	}
}
