package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// TestHostKnown: the agents that exist are listed without opening any:
// the defaults first (once each, those keep accepts), then the stored ones
// in the order they were stored, then the other awake ones, up to limit.
func TestHostKnown(t *testing.T) {
	ctx := testCtx(t)
	st, err := sqlite.Open(ctx, sqlite.Memory, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, ns := range []string{"test-agent/stored1", "Bad/stored", "test-agent/stored2"} {
		if err := st.PutServer(ctx, store.Server{Namespace: ns, ID: "one", Name: "one", URL: "http://127.0.0.1:1/mcp"}); err != nil {
			t.Fatal(err)
		}
	}
	h, _ := newHost(t, st, &agent.HostOptions{Defaults: []string{"test-agent/default", "test-agent/default", "Bad/default"}})
	_, release := use(t, h, "awake")
	defer release()
	keep := func(class, name string) bool { return !strings.HasPrefix(class, "Bad") }

	got, more, err := h.Known(ctx, 10, keep)
	want := []string{"test-agent/default", "test-agent/stored1", "test-agent/stored2", "test-agent/awake"}
	if err != nil || more || !slices.Equal(got, want) {
		t.Errorf("Known(10) = %v, %v, %v; want %v", got, more, err, want)
	}
	got, more, err = h.Known(ctx, 2, keep)
	if err != nil || !more || !slices.Equal(got, want[:2]) {
		t.Errorf("Known(2) = %v, %v, %v; want %v and more", got, more, err, want[:2])
	}
	if !h.IsDefault("test-agent/default") || h.IsDefault("test-agent/stored1") {
		t.Error("IsDefault: want the defaults only")
	}
	if h.IsAwake("test-agent", "stored1") {
		t.Error("Known woke a stored agent")
	}
}
