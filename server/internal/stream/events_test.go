package stream

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressQueue: Add never blocks and signals Ready once for any
// number of adds; past 64 waiting the oldest are dropped; Take empties.
func TestProgressQueue(t *testing.T) {
	q := NewProgressQueue()
	for i := range maxProgressQueued + 10 {
		q.Add(&mcp.ProgressNotificationParams{Progress: float64(i)})
	}
	select {
	case <-q.Ready():
	default:
		t.Fatal("Ready did not fire after Add")
	}
	got := q.Take()
	if len(got) != maxProgressQueued || got[0].Progress != 10 || got[len(got)-1].Progress != maxProgressQueued+9 {
		t.Errorf("took %d, from %v to %v; want the last %d", len(got), got[0].Progress, got[len(got)-1].Progress, maxProgressQueued)
	}
	if rest := q.Take(); len(rest) != 0 {
		t.Errorf("a second Take got %d", len(rest))
	}
}
