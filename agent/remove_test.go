package agent_test

import (
	"slices"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store"
)

// openSessions returns the sessions s handed out that no client ended.
func openSessions(s *counting) []string {
	all, ended := s.Sessions()
	return slices.DeleteFunc(all, func(id string) bool { return slices.Contains(ended, id) })
}

// TestRemoveEndsStoredSession: removing a server from an agent that holds
// no live session for it ends the session stored for it with a DELETE
// (2025-11-25), without a handshake: an agent opened dormant (agentmcp rm
// --db), one that has just woken (its connection still on its way), and
// one whose server is awake. Nothing is left open on the upstream.
func TestRemoveEndsStoredSession(t *testing.T) {
	for _, tt := range []struct {
		name string
		open func(t *testing.T, st store.Store) *agent.Agent
	}{
		{"dormant", func(t *testing.T, st store.Store) *agent.Agent {
			return openAgent(t, st, "remove", &agent.Options{Dormant: true})
		}},
		{"just woken", func(t *testing.T, st store.Store) *agent.Agent {
			return openAgent(t, st, "remove", nil)
		}},
		{"connected", func(t *testing.T, st store.Store) *agent.Agent {
			a := openAgent(t, st, "remove", nil)
			a.WaitRestored(testCtx(t))
			return a
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			up := serve(t, mcptest.Stateful)
			st := openSQLite(t, "")
			a, err := agent.Open(ctx, st, "TestAgent", "remove", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.AddMCPServer(ctx, "up", up.URL, &agent.AddOptions{ID: "up"}); err != nil {
				t.Fatal(err)
			}
			a.WaitForConnections(ctx)
			if err := a.Close(ctx); err != nil { // the session is kept, to resume
				t.Fatal(err)
			}
			row, err := st.GetServer(ctx, "TestAgent/remove", "up")
			if err != nil || row.Options.SessionID == "" {
				t.Fatalf("stored session: %+v, %v", row.Options, err)
			}
			if open := openSessions(up); !slices.Equal(open, []string{row.Options.SessionID}) {
				t.Fatalf("sessions open on the upstream before the remove: %v; want the stored one", open)
			}
			handshakes := up.handshakes.Load()

			b := tt.open(t, st)
			if err := b.RemoveMCPServer(ctx, "up"); err != nil {
				t.Fatal(err)
			}
			if open := openSessions(up); len(open) != 0 {
				t.Errorf("sessions left open on the upstream after the remove: %v", open)
			}
			if _, ended := up.Sessions(); !slices.Contains(ended, row.Options.SessionID) {
				t.Errorf("the stored session %s was not ended (ended: %v)", row.Options.SessionID, ended)
			}
			if tt.name == "dormant" {
				if n := up.handshakes.Load() - handshakes; n != 0 {
					t.Errorf("the remove made %d handshakes; want none", n)
				}
			}
		})
	}
}
