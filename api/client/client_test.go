package client

import (
	"context"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
)

// TestClientTimeoutMS: the Go client sends the time left before its
// context's deadline as timeoutMs, within what the server takes.
func TestClientTimeoutMS(t *testing.T) {
	t.Parallel()
	if got := timeoutMS(context.Background()); got != 0 {
		t.Errorf("no deadline: %d", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := timeoutMS(ctx); got < 1 || got > 10_001 {
		t.Errorf("10s: %d", got)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Hour)
	defer cancel()
	if got := timeoutMS(ctx); got != api.MaxCallTimeout.Milliseconds() {
		t.Errorf("5h: %d, want %d", got, api.MaxCallTimeout.Milliseconds())
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if got := timeoutMS(ctx); got != 1 {
		t.Errorf("past: %d", got)
	}
}
