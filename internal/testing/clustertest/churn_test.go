package clustertest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// churnProfile sizes TestChurnSessions.
type churnProfile struct {
	agents      int
	before      time.Duration // churn before the kill -9
	after       time.Duration // churn after the restart
	idleTimeout time.Duration // serve --idle-timeout: agents hibernate between requests
}

var (
	fastChurn = churnProfile{agents: 8, before: 3 * time.Second, after: 3 * time.Second, idleTimeout: 200 * time.Millisecond}
	fullChurn = churnProfile{agents: 24, before: 15 * time.Second, after: 15 * time.Second, idleTimeout: 200 * time.Millisecond}
)

// churnServe is one agentmcp serve --db process of TestChurnSessions.
type churnServe struct {
	cmd  *exec.Cmd
	done chan struct{}
	base string
	log  string
}

// startChurnServe starts serve on db and waits until /readyz is 200.
func startChurnServe(t *testing.T, bin, db, logPath string, idle time.Duration) *churnServe {
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		f, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "serve", "--db", db, "--addr", addr, "--idle-timeout", idle.String())
		cmd.Stdout, cmd.Stderr = f, f
		cmd.Env = append(os.Environ(), "AGENTMCP_TOKEN=", "AGENTMCP_SECRET_KEY=")
		if err := cmd.Start(); err != nil {
			f.Close()
			t.Fatal(err)
		}
		s := &churnServe{cmd: cmd, done: make(chan struct{}), base: "http://" + addr, log: logPath}
		go func() {
			cmd.Wait()
			f.Close()
			close(s.done)
		}()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-s.done
		})
		hc := &http.Client{Timeout: 2 * time.Second}
		deadline := time.Now().Add(time.Minute)
		for {
			res, err := hc.Get(s.base + "/readyz")
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					return s
				}
			}
			select {
			case <-s.done:
			case <-time.After(50 * time.Millisecond):
				if time.Now().Before(deadline) {
					continue
				}
				t.Fatalf("serve not ready within a minute: %v", err)
			}
			break // it exited: its port may have been taken meanwhile
		}
		if attempt == 3 {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("serve exited before it was ready:\n%s", b)
		}
	}
}

// kill9 kills the serve process with SIGKILL, by its process id, and waits
// for it to be gone.
func (s *churnServe) kill9(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
}

// TestChurnSessions: many agents under adds and removes of servers with
// legacy sessions (go-sdk's stateful streamable HTTP, behind a handler
// that records each session's requests), while the agents hibernate (an
// idle timeout of a fraction of a second, and explicit hibernations) and
// serve is killed with SIGKILL and restarted. Once every server is
// removed, every session whose handshake completed is ended on the
// upstream: hibernation keeps sessions (to resume them), and a remove, from
// an awake, sleeping or just-woken agent, ends the stored one; a handshake
// given up after the server made its session ends that session; a resumed
// session numbers its requests apart from those the hibernated agent left
// running, so none is refused as a duplicate in-flight request id. Left
// out, and counted in the figures: only the sessions the killed process
// had opened and not stored (no process knows them).
func TestChurnSessions(t *testing.T) {
	prof := fastChurn
	switch os.Getenv(EnvProfile) {
	case "full":
		prof = fullChurn
	case "fast", "control":
	default:
		t.Skipf("the churn test runs with make test or make cluster-fast (%s=fast), make cluster (full profile)", EnvProfile)
	}
	bin := buildAgentmcp(t)
	srv := mcptest.NewServer("up")
	var histMu sync.Mutex
	hist := map[string][]string{}    // per session, its requests, for a failure's message
	established := map[string]bool{} // sessions whose client completed the handshake
	duplicateID := map[string]bool{} // sessions that refused a request as a duplicate in-flight id
	inner := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	up := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		rw := &statusWriter{ResponseWriter: w}
		inner.ServeHTTP(rw, r)
		id := r.Header.Get("Mcp-Session-Id")
		if id == "" {
			id = w.Header().Get("Mcp-Session-Id")
		}
		histMu.Lock()
		if strings.Contains(string(body), `"notifications/initialized"`) {
			established[id] = true
		}
		if rw.code == http.StatusBadRequest && strings.Contains(string(rw.body), "duplicate in-flight request ID") {
			duplicateID[id] = true
		}
		hist[id] = append(hist[id], fmt.Sprintf("%s %s %d %.60s -> %.100s (client gone: %v)", time.Now().Format("15:04:05.000"), r.Method, rw.code, body, rw.body, r.Context().Err() != nil))
		histMu.Unlock()
	}))
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")

	var mu sync.Mutex
	s := startChurnServe(t, bin, db, filepath.Join(dir, "serve.1.log"), prof.idleTimeout)
	current := func() *churnServe {
		mu.Lock()
		defer mu.Unlock()
		return s
	}
	hc := &http.Client{Timeout: 20 * time.Second}
	defer hc.CloseIdleConnections()
	do := func(ctx context.Context, method, path, body string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, method, current().base+path, strings.NewReader(body))
		if err != nil {
			return 0, err.Error()
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := hc.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	agentPath := func(i int) string { return fmt.Sprintf("/agents/churn/a%d", i) }
	var ops, failed sync.Map // op name -> *int (counted under mu)
	count := func(m *sync.Map, k string) {
		v, _ := m.LoadOrStore(k, new(int))
		mu.Lock()
		*v.(*int)++
		mu.Unlock()
	}
	churn := func(d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		var wg sync.WaitGroup
		for i := range prof.agents {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
				for ctx.Err() == nil {
					k := r.IntN(3)
					var op string
					var st int
					switch n := r.IntN(10); {
					case n < 5:
						op = "add"
						st, _ = do(ctx, "POST", agentPath(i)+"/servers", fmt.Sprintf(`{"name":"x%d","url":%q,"id":"x%d"}`, k, up.URL, k))
					case n < 8:
						op = "remove"
						st, _ = do(ctx, "DELETE", agentPath(i)+fmt.Sprintf("/servers/x%d", k), "")
					default:
						op = "hibernate"
						st, _ = do(ctx, "POST", agentPath(i)+"/hibernate", "")
					}
					count(&ops, op)
					if st/100 != 2 && st != http.StatusNotFound && st != http.StatusConflict {
						count(&failed, op)
					}
				}
			})
		}
		wg.Wait()
	}

	t.Logf("%s churn begins", time.Now().Format("15:04:05.000"))
	churn(prof.before)
	current().kill9(t)
	t.Logf("%s serve killed", time.Now().Format("15:04:05.000"))
	// What the killed process stored, and the sessions it had: those it
	// had opened and not stored are known to no one now.
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for i := range prof.agents {
		rows, err := st.ListServers(context.Background(), fmt.Sprintf("churn/a%d", i))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			stored[r.Options.SessionID] = true
		}
	}
	st.Close()
	all, ended := up.Sessions()
	var orphans []string
	for _, id := range all {
		if !stored[id] && !slices.Contains(ended, id) {
			orphans = append(orphans, id)
		}
	}
	mu.Lock()
	s = startChurnServe(t, bin, db, filepath.Join(dir, "serve.2.log"), prof.idleTimeout)
	mu.Unlock()
	churn(prof.after)

	t.Logf("%s final removes", time.Now().Format("15:04:05.000"))
	// Remove every server, most agents asleep by now.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range prof.agents {
		for k := range 3 {
			if st, body := do(ctx, "DELETE", agentPath(i)+fmt.Sprintf("/servers/x%d", k), ""); st != http.StatusNoContent && st != http.StatusNotFound {
				t.Errorf("final remove of x%d from agent %d: %d %s", k, i, st, body)
			}
		}
	}
	all, ended = up.Sessions()
	var open, abandoned, refused []string
	for _, id := range all {
		if slices.Contains(ended, id) || slices.Contains(orphans, id) {
			continue
		}
		histMu.Lock()
		ok, dup := established[id], duplicateID[id]
		histMu.Unlock()
		switch {
		case dup:
			// A woken agent's resume of the session was refused as a
			// duplicate in-flight request id.
			refused = append(refused, id)
		case !ok:
			// A handshake given up after the server made the session
			// (a remove or a hibernation cancelled the connection).
			abandoned = append(abandoned, id)
		default:
			open = append(open, id)
		}
	}
	summary := func(m *sync.Map) string {
		var parts []string
		m.Range(func(k, v any) bool {
			mu.Lock()
			parts = append(parts, fmt.Sprintf("%s=%d", k, *v.(*int)))
			mu.Unlock()
			return true
		})
		slices.Sort(parts)
		return strings.Join(parts, " ")
	}
	t.Logf("churn: ops %s; failed %s; sessions %d, ended %d, orphaned by the kill %d, abandoned in their handshake %d, resume refused (duplicate request id) %d",
		summary(&ops), summary(&failed), len(all), len(ended), len(orphans), len(abandoned), len(refused))
	fmt.Printf("churn_sessions=%d churn_sessions_left_open=%d churn_sessions_orphaned_by_kill=%d churn_sessions_abandoned_in_handshake=%d churn_sessions_resume_refused=%d\n",
		len(all), len(open), len(orphans), len(abandoned), len(refused))
	if left := slices.Concat(open, abandoned, refused); len(left) > 0 {
		b, _ := os.ReadFile(current().log)
		for _, id := range left {
			histMu.Lock()
			t.Logf("session %s:\n%s", id, strings.Join(hist[id], "\n"))
			histMu.Unlock()
		}
		t.Errorf("%d of %d sessions left open on the upstream after every server was removed: %v (abandoned in their handshake: %v; resume refused as a duplicate request id: %v)\nserve's log:\n%s",
			len(left), len(all), open, abandoned, refused, tail(string(b), 40))
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

type statusWriter struct {
	http.ResponseWriter
	code int
	body []byte
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code >= 400 && len(w.body) < 200 {
		w.body = append(w.body, b...)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
