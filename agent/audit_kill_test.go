package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store"
)

// auditChild runs in a child process: it makes sequential echo calls
// through an audited agent and prints each call's number and end time
// once it returned, until it is killed.
func auditChild() int {
	ctx := context.Background()
	a, err := openChildAgent(ctx, "audit")
	if err != nil {
		return 1
	}
	if _, err := a.AddMCPServer(ctx, "s", os.Getenv("AGENTMCP_TEST_URL"), &agent.AddOptions{ID: "s"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		if _, err := a.CallTool(ctx, "s", "echo", map[string]any{"text": strconv.Itoa(i)}, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(w, "called %d %d\n", i, time.Now().UnixNano())
		w.Flush()
	}
}

// TestAuditKill measures what kill -9 loses: a process making calls
// through an audited agent is killed with SIGKILL; the records stored are
// those of the first calls, without a gap (a batch is written whole or
// not at all), and the calls that returned without a stored record are
// the last ones, those of the last batch window (logged: how many, and
// over how long).
func TestAuditKill(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return mcptest.NewServer("s").Server })
	path := filepath.Join(t.TempDir(), "audit.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGENTMCP_TEST_AUDIT_CHILD=1", "AGENTMCP_TEST_DB="+path, "AGENTMCP_TEST_URL="+hs.URL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := map[int]time.Time{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var i int
		var ns int64
		if _, err := fmt.Sscanf(sc.Text(), "called %d %d", &i, &ns); err != nil {
			continue
		}
		ended[i] = time.Unix(0, ns)
		if len(ended) == 500 {
			cmd.Process.Signal(syscall.SIGKILL) // calls go on, records wait for their batch
		}
	}
	cmd.Wait()
	if len(ended) < 500 {
		t.Fatalf("the child made only %d calls; stderr:\n%s", len(ended), stderr.String())
	}

	st := openSQLite(t, path)
	hashes := map[string]int{}
	for i := range len(ended) + 1 {
		hashes[argsHash(fmt.Sprintf(`{"text":"%d"}`, i))] = i
	}
	var recorded []int
	q := store.AuditQuery{Tool: "echo", Limit: store.MaxAuditLimit}
	for {
		page, err := st.(store.AuditStore).QueryAudit(testCtx(t), "TestAgent/audit", q)
		if err != nil {
			t.Fatalf("reading after the kill: %v", err)
		}
		for _, r := range page {
			i, ok := hashes[r.ArgumentsHash]
			if !ok || r.Outcome != store.AuditOK {
				t.Fatalf("a record of no call made: %+v", r)
			}
			recorded = append(recorded, i)
		}
		if len(page) < q.Limit {
			break
		}
		q.Cursor = page[len(page)-1].Seq
	}
	for k, i := range recorded {
		if i != k {
			t.Fatalf("record %d is call %d's: the stored records are not the first calls' without a gap", k, i)
		}
	}
	lost := len(ended) - len(recorded)
	if lost < 0 {
		t.Fatalf("%d records of %d calls", len(recorded), len(ended))
	}
	var span time.Duration
	if lost > 0 {
		span = ended[len(ended)-1].Sub(ended[len(recorded)])
	}
	t.Logf("kill -9: %d calls returned, %d recorded; %d lost, the calls of the last %v (the batch window is %v)",
		len(ended), len(recorded), lost, span.Round(time.Millisecond), agent.DefaultAuditWindow)
}
