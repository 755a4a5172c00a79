package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openChildAgent opens, in a child process, agent name of TestAgent on
// the SQLite file AGENTMCP_TEST_DB names; an error is printed on stderr.
func openChildAgent(ctx context.Context, name string) (*agent.Agent, error) {
	st, err := sqlite.Open(ctx, os.Getenv("AGENTMCP_TEST_DB"), nil)
	if err == nil {
		var a *agent.Agent
		if a, err = agent.Open(ctx, st, "TestAgent", name, nil); err == nil {
			return a, nil
		}
	}
	fmt.Fprintln(os.Stderr, err)
	return nil, err
}

// crashChild runs in a child process: it adds servers from many goroutines
// and prints each id once its AddMCPServer has returned, until it is
// killed.
func crashChild() int {
	ctx := context.Background()
	a, err := openChildAgent(ctx, "crash")
	if err != nil {
		return 1
	}
	url := os.Getenv("AGENTMCP_TEST_URL")
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				res, err := a.AddMCPServer(ctx, fmt.Sprintf("s-%d-%d", g, i), fmt.Sprintf("%s?g=%d&i=%d", url, g, i), nil)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					continue
				}
				mu.Lock()
				fmt.Printf("added %s\n", res.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return 0
}

// TestCrash: a process adding servers concurrently is killed with SIGKILL;
// every add that had returned is stored, and no row is half-written.
func TestCrash(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return mcptest.NewServer("s").Server })
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGENTMCP_TEST_CRASH_CHILD=1", "AGENTMCP_TEST_DB="+path, "AGENTMCP_TEST_URL="+hs.URL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	added := map[string]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		id, ok := strings.CutPrefix(sc.Text(), "added ")
		if !ok {
			continue
		}
		added[id] = true
		if len(added) == 40 {
			cmd.Process.Signal(syscall.SIGKILL) // mid-way: adds are in flight
		}
	}
	cmd.Wait()
	if len(added) < 40 {
		t.Fatalf("the child added only %d servers; stderr:\n%s", len(added), stderr.String())
	}

	st := openSQLite(t, path)
	rows, err := st.ListServers(testCtx(t), "TestAgent/crash")
	if err != nil {
		t.Fatalf("reading after the crash: %v", err)
	}
	stored := map[string]bool{}
	for _, r := range rows {
		if r.ID == "" || r.Name == "" || !strings.HasPrefix(r.URL, "http://127.0.0.1:") || r.CreatedAt.IsZero() {
			t.Errorf("half-written row: %+v", r)
		}
		stored[r.ID] = true
	}
	for id := range added {
		if !stored[id] {
			t.Errorf("server %s was added but is not stored", id)
		}
	}
	t.Logf("%d adds returned before the kill, %d rows stored", len(added), len(rows))
}
