package postgres

import (
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/cluster/lease"
)

// TestHold: Hold makes a holder that is not a replica the owner of an
// agent nobody owns, registered draining with no cluster URL (never live
// for placement); a replica cannot claim the agent while it holds it, nor
// can another holder; a holder refused registers nothing. Released and
// deleted, the agent is the replica's to claim; held by a live replica, it
// cannot be held.
func TestHold(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, pg.Database(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const ns = "agentmcp/default"
	if err := s.RegisterReplica(ctx, "r1", "http://127.0.0.1:1", "test", time.Hour); err != nil {
		t.Fatal(err)
	}
	f, ok, err := s.Hold(ctx, ns, "cmd-1", "test", time.Hour)
	if err != nil || !ok || f.Replica != "cmd-1" || f.Epoch == 0 {
		t.Fatalf("Hold of an agent nobody owns: %+v, %v, %v", f, ok, err)
	}
	o, err := s.Resolve(ctx, ns)
	if err != nil || o.Replica != "cmd-1" || !o.Live || o.ClusterURL != "" || o.State != lease.ReplicaDraining {
		t.Errorf("Resolve while held: %+v, %v", o, err)
	}
	if _, ok, err := s.Claim(ctx, ns, "r1"); ok || err != nil {
		t.Errorf("Claim while held: %v, %v; want false", ok, err)
	}
	if _, ok, err := s.Hold(ctx, ns, "cmd-2", "test", time.Hour); ok || err != nil {
		t.Errorf("a second Hold: %v, %v; want false", ok, err)
	}
	if rs, err := s.LiveReplicas(ctx); err != nil || len(rs) != 2 {
		t.Errorf("LiveReplicas: %+v, %v; want r1 and cmd-1 (cmd-2 registered nothing)", rs, err)
	}
	if err := s.Release(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteReplica(ctx, "cmd-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Claim(ctx, ns, "r1"); !ok || err != nil {
		t.Errorf("Claim once released: %v, %v; want true", ok, err)
	}
	if _, ok, err := s.Hold(ctx, ns, "cmd-3", "test", time.Hour); ok || err != nil {
		t.Errorf("Hold of an agent a live replica owns: %v, %v; want false", ok, err)
	}
}
