package clustertest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) {
	code := pg.Main(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the agentmcp the tests of this package build once and share.
var built struct {
	once     sync.Once
	dir, bin string
	out      []byte
	err      error
}

// EnvProfile selects the run: "fast" (make cluster-fast), "full" (make
// cluster), unset skips the test. Set to "control", it runs the fast profile on three serves without --cluster, a
// check of the test itself: each opens every agent it is asked for, and the
// run must fail with duplicate owners.
const EnvProfile = "AGENTMCP_CLUSTER"

// EnvBin names a built agentmcp to run instead of building one; EnvLogs,
// set, prints the replicas' logs (their ends) when the test passes too.
const (
	EnvBin  = "AGENTMCP_CLUSTER_BIN"
	EnvLogs = "AGENTMCP_CLUSTER_LOGS"
)

func control() bool { return os.Getenv(EnvProfile) == "control" }

// profile sizes a run. Times of the fault plan (killDown, stopFor, pgDown)
// are the plan, not synchronisation: every wait for a process or a port
// is for the event itself, with a deadline as a safety net.
type profile struct {
	name         string
	lease        time.Duration // --lease-ttl
	drainTimeout time.Duration // --drain-timeout
	idleTimeout  time.Duration // --idle-timeout
	agents       int
	servers      int // per agent; every third agent has one behind OAuth
	workers      int
	subscribers  int
	rounds       int
	kills        int           // kill -9 cycles per round
	tokenTTL     time.Duration // OAuth access tokens
	killDown     time.Duration // a killed replica is restarted after this
	stopFor      time.Duration // SIGSTOP length, longer than the lease
	pgDown       time.Duration // PostgreSQL outage
	failoverP50  float64       // holds, seconds
	failoverMax  float64
}

var (
	fastProfile = profile{name: "fast", lease: 3 * time.Second, drainTimeout: 10 * time.Second, idleTimeout: 20 * time.Second,
		agents: 9, servers: 3, workers: 4, subscribers: 4, rounds: 1, kills: 3, tokenTTL: 4 * time.Second,
		killDown: 2 * time.Second, stopFor: 5 * time.Second, pgDown: 3 * time.Second,
		// The lease part of the bounds scales with the lease; what a wake
		// and the edge's polling cost does not.
		failoverP50: 3 + 1.5, failoverMax: 3 + 4}
	fullProfile = profile{name: "full", lease: 8 * time.Second, drainTimeout: 30 * time.Second, idleTimeout: 30 * time.Second,
		agents: 24, servers: 4, workers: 8, subscribers: 10, rounds: 2, kills: 10, tokenTTL: 10 * time.Second,
		killDown: 5 * time.Second, stopFor: 12 * time.Second, pgDown: 10 * time.Second,
		failoverP50: 9.5, failoverMax: 12}
)

const class = "chaos"

// maxScratch bounds the scratch servers a load worker keeps added: the
// stored state stays the same size through the run, so that a survivor's
// memory after the last kill cycle compares with its memory after the
// first.
const maxScratch = 3

func agentName(i int) string { return fmt.Sprintf("a%d", i) }
func agentPath(i int) string { return "/agents/" + class + "/" + agentName(i) }
func namespace(i int) string { return class + "/" + agentName(i) }

// buildAgentmcp builds the program and says whether its serve has the
// cluster flags.
func buildAgentmcp(t *testing.T) string {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build agentmcp: %v", err)
	}
	bin := os.Getenv(EnvBin)
	if bin == "" {
		built.once.Do(func() {
			if built.dir, built.err = os.MkdirTemp("", "clustertest-"); built.err != nil {
				return
			}
			built.bin = filepath.Join(built.dir, "agentmcp")
			built.out, built.err = exec.Command(goTool, "build", "-o", built.bin, "../../../cmd/agentmcp").CombinedOutput()
		})
		if built.err != nil {
			t.Fatalf("go build: %v\n%s", built.err, built.out)
		}
		bin = built.bin
	}
	out, _ := exec.Command(bin, "help", "serve").CombinedOutput()
	if control() {
		return bin
	}
	for _, flag := range []string{"--cluster", "--cluster-addr", "--lease-ttl", "--drain-timeout"} {
		if !strings.Contains(string(out), flag) {
			t.Skipf("agentmcp serve has no %s flag yet: the cluster test needs the replicas' serve side (agentmcp help serve does not list it)", flag)
		}
	}
	return bin
}

// activity is one request an MCP test server received: from its arrival
// to its end (the handler's return or the client's connection closing).
type activity struct {
	pid        int
	slot       int
	method     string
	start, end time.Time
	// hungUp: the end is the client's connection closing (seen by this
	// process's HTTP server), not the handler's return.
	hungUp bool
}

// handoverSlack is how much later than the next owner's first request the
// end of a request its client hung up may be seen, and still count as
// ended before it: this process sees a hang-up when its HTTP server's
// goroutine reading the connection runs, which on a loaded machine can
// come after the handler goroutine of a request that arrived later. An
// owner that had not let go (a fencing failure) holds on for as long as
// its lease, seconds, not milliseconds.
const handoverSlack = 20 * time.Millisecond

// recorder wraps the MCP test servers and records who sends what.
type recorder struct {
	c      *cluster
	finder *pidFinder

	mu     sync.Mutex
	byKey  map[string][]*activity
	fenced *fenceWatch

	unattributed   atomic.Int64
	unattributedAt []time.Time
	fencedRequests atomic.Int64
	fencedLog      []string
}

// fenceWatch is the SIGSTOP fault's check: a request from the resumed
// process to a server of an agent its current incarnation does not own.
type fenceWatch struct {
	pid         int
	staleID     string
	clusterURL  string
	from, until time.Time
	db          *pgxpool.Pool
	ns          func(key string) string
}

func (rec *recorder) wrap(key string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request's arrival, before the look-up of its sender (which
		// takes its time on a busy machine).
		arrived := time.Now()
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		pid := 0
		if local != nil {
			pid = rec.finder.pidOf(r.RemoteAddr, local.String())
		}
		if pid == 0 {
			rec.unattributed.Add(1)
			rec.mu.Lock()
			rec.unattributedAt = append(rec.unattributedAt, arrived)
			rec.mu.Unlock()
			next.ServeHTTP(w, r)
			return
		}
		slot, _ := rec.c.slotOfPid(pid)
		a := &activity{pid: pid, slot: slot, method: r.Method, start: arrived}
		rec.mu.Lock()
		rec.byKey[key] = append(rec.byKey[key], a)
		fw := rec.fenced
		rec.mu.Unlock()
		if fw != nil && fw.pid == pid && a.start.After(fw.from) && a.start.Before(fw.until) {
			rec.checkFenced(fw, key, a.start)
		}
		var once sync.Once
		end := func(hungUp bool) {
			once.Do(func() {
				rec.mu.Lock()
				a.end, a.hungUp = time.Now(), hungUp
				rec.mu.Unlock()
			})
		}
		stop := context.AfterFunc(r.Context(), func() { end(true) })
		defer stop()
		next.ServeHTTP(w, r)
		// A handler that returned because the client hung up (a standing
		// stream closed by its owner) may get here before the AfterFunc
		// above runs: that end is a hang-up all the same.
		end(r.Context().Err() != nil)
	})
}

// checkFenced looks up, at the moment of the request, whether the
// sending process's current incarnation owns the agent.
func (rec *recorder) checkFenced(fw *fenceWatch, key string, at time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var owner, url *string
	err := fw.db.QueryRow(ctx, `SELECT a.owner, r.cluster_url FROM agentmcp_agents a
		LEFT JOIN agentmcp_replicas r ON r.id = a.owner AND r.expires_at > now()
		WHERE a.namespace = $1`, fw.ns(key)).Scan(&owner, &url)
	ok := err == nil && owner != nil && *owner != fw.staleID && url != nil && *url == fw.clusterURL
	if !ok {
		rec.fencedRequests.Add(1)
		o, u := "<none>", "<none>"
		if owner != nil {
			o = *owner
		}
		if url != nil {
			u = *url
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.fencedLog) >= 10 {
			return
		}
		rec.fencedLog = append(rec.fencedLog, fmt.Sprintf("%s +%.3fs after SIGCONT: server %s, lease owner %s (%s), stale id %s, err %v",
			at.Format(time.TimeOnly), at.Sub(fw.from).Seconds(), key, o, u, fw.staleID, err))
	}
}

// frozen is a window in which a process was stopped by SIGSTOP, extended
// by a grace second after SIGCONT for the sockets it held to close.
type frozen struct {
	pid      int
	from, to time.Time
}

// overlap is two processes active on one server at once.
type overlap struct {
	key  string
	a, b activity
}

// duplicates returns the overlapping activities of different processes.
func (rec *recorder) duplicates(frozenWins []frozen, runEnd time.Time) (n int, examples []overlap) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for key, acts := range rec.byKey {
		// Effective intervals: a request started while its process was
		// frozen cannot be; time spent frozen (and the grace after) does
		// not count for requests held across a stop.
		var ivs []activity
		for _, a := range acts {
			end := a.end
			if end.IsZero() {
				end = runEnd
			}
			parts := [][2]time.Time{{a.start, end}}
			for _, f := range frozenWins {
				if f.pid != a.pid {
					continue
				}
				var next [][2]time.Time
				for _, p := range parts {
					if p[1].Before(f.from) || !p[0].Before(f.to) {
						next = append(next, p)
						continue
					}
					if p[0].Before(f.from) {
						next = append(next, [2]time.Time{p[0], f.from})
					}
					if p[1].After(f.to) {
						next = append(next, [2]time.Time{f.to, p[1]})
					}
				}
				parts = next
			}
			for _, p := range parts {
				iv := *a
				iv.start, iv.end = p[0], p[1]
				ivs = append(ivs, iv)
			}
		}
		slices.SortFunc(ivs, func(x, y activity) int { return x.start.Compare(y.start) })
		var open []activity
		for _, iv := range ivs {
			kept := open[:0]
			for _, o := range open {
				if o.end.After(iv.start) && !(o.hungUp && o.end.Sub(iv.start) <= handoverSlack) {
					kept = append(kept, o)
				}
			}
			open = kept
			for _, o := range open {
				if o.pid != iv.pid {
					n++
					if len(examples) < 10 {
						examples = append(examples, overlap{key, o, iv})
					}
				}
			}
			open = append(open, iv)
		}
	}
	return n, examples
}

// call is one API request of the load.
type call struct {
	op         string
	start, end time.Time
	status     int
	code       string
	err        error
}

// window is a fault's time span, for classifying client errors.
type window struct {
	kind     string
	from, to time.Time
}

// subscriber is one WebSocket client through the balancer.
type subscriber struct {
	agent int

	mu      sync.Mutex
	frames  []time.Time
	drops   []time.Time
	dials   int
	reasons map[string]int // why streams ended or dials failed
	dialErr []dialError
}

type dialError struct {
	at  time.Time
	msg string
}

func (s *subscriber) reason(r string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reasons == nil {
		s.reasons = map[string]int{}
	}
	s.reasons[r]++
}

// hold pauses the subscribers: while it is held their streams are closed
// and they dial none.
type hold struct {
	mu     sync.Mutex
	held   bool
	ctx    context.Context // of the streams opened meanwhile: ends at the next hold
	cancel context.CancelFunc
	free   chan struct{} // closed when the hold ends
}

func newHold(ctx context.Context) *hold {
	h := &hold{free: make(chan struct{})}
	close(h.free)
	h.ctx, h.cancel = context.WithCancel(ctx)
	return h
}

// enter waits until the hold is free and returns the context of a stream
// opened now, or nil when ctx ended.
func (h *hold) enter(ctx context.Context) context.Context {
	for {
		h.mu.Lock()
		held, free, sctx := h.held, h.free, h.ctx
		h.mu.Unlock()
		if !held {
			return sctx
		}
		select {
		case <-free:
		case <-ctx.Done():
			return nil
		}
	}
}

func (h *hold) pause() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = true
	h.free = make(chan struct{})
	h.cancel()
}

func (h *hold) resume(ctx context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = false
	h.ctx, h.cancel = context.WithCancel(ctx)
	close(h.free)
}

func (s *subscriber) run(ctx context.Context, url string, h *hold) {
	for ctx.Err() == nil {
		sctx := h.enter(ctx)
		if sctx == nil {
			return
		}
		if s.stream(ctx, sctx, url) {
			return
		}
	}
}

// stream dials one stream and reads it until it ends; it reports whether
// ctx ended. sctx ends the stream without counting a drop (a hold).
func (s *subscriber) stream(ctx, sctx context.Context, url string) bool {
	{
		dctx, cancel := context.WithTimeout(sctx, 10*time.Second)
		ws, _, err := websocket.Dial(dctx, url, nil)
		cancel()
		s.mu.Lock()
		s.dials++
		s.mu.Unlock()
		if err != nil {
			if sctx.Err() == nil {
				s.reason("dial: " + shorten(err))
				s.mu.Lock()
				s.dialErr = append(s.dialErr, dialError{time.Now(), shorten(err)})
				s.mu.Unlock()
			}
			// Pacing of the redial, not synchronisation.
			select {
			case <-sctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			return ctx.Err() != nil
		}
		ws.SetReadLimit(64 << 20)
		for {
			_, _, err := ws.Read(sctx)
			if err != nil {
				if sctx.Err() == nil {
					s.reason("read: " + shorten(err))
				}
				break
			}
			s.mu.Lock()
			s.frames = append(s.frames, time.Now())
			s.mu.Unlock()
		}
		ws.CloseNow()
		if sctx.Err() == nil {
			s.mu.Lock()
			s.drops = append(s.drops, time.Now())
			s.mu.Unlock()
		}
	}
	return ctx.Err() != nil
}

// shorten returns err's text without addresses and ports, to count alike
// errors together.
func shorten(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg[:i], "127.0.0.1") {
		msg = msg[i+2:]
	}
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}

// firstFrameAfter returns the time of the first frame after t, if any
// before limit.
func (s *subscriber) firstFrameAfter(t, limit time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.frames {
		if f.After(t) && f.Before(limit) {
			return f, true
		}
	}
	return time.Time{}, false
}

func (s *subscriber) droppedIn(from, to time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.drops {
		if !d.Before(from) && d.Before(to) {
			return true
		}
	}
	return false
}

// ownerChange is a fault that moved agents away from a replica.
type ownerChange struct {
	kind   string
	at     time.Time
	agents map[string]bool // namespaces the replica owned
}

// figures collects the name=value lines.
type figures struct {
	mu    sync.Mutex
	names []string
	vals  map[string]string
}

func (f *figures) set(name string, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.vals == nil {
		f.vals = map[string]string{}
	}
	if _, ok := f.vals[name]; !ok {
		f.names = append(f.names, name)
	}
	f.vals[name] = fmt.Sprintf(format, args...)
}

func (f *figures) print(t *testing.T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for _, n := range f.names {
		fmt.Fprintf(&b, "%s=%s\n", n, f.vals[n])
	}
	t.Log("figures:\n" + b.String())
	fmt.Print(b.String())
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(p*float64(len(s)-1) + 0.5)
	return s[i]
}

// TestCluster is the cluster acceptance: three serve replicas on one
// PostgreSQL under load and faults; it prints the figures and fails when a
// hold is missed.
func TestCluster(t *testing.T) {
	prof := fastProfile
	switch os.Getenv(EnvProfile) {
	case "full":
		prof = fullProfile
	case "fast", "control":
	default:
		// make test sets it (scripts/test): a plain go test ./... does
		// not start three replicas.
		t.Skipf("the cluster test runs with make test or make cluster-fast (%s=fast), make cluster (full profile)", EnvProfile)
	}
	bin := buildAgentmcp(t)
	dsn := pg.Database(t)
	ctx, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	db, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	c := newCluster(t, bin, dsn, prof, 3)
	rec := &recorder{c: c, byKey: map[string][]*activity{}}
	rec.finder = &pidFinder{candidates: c.livePids, inode: map[uint64]int{}}

	// The MCP test servers: agent i, server j. Even servers stateless
	// (2026-07-28), odd ones stateful (legacy sessions); server 0 of every
	// third agent behind OAuth with short-lived tokens.
	// The authorization server honours a rotated refresh token presented
	// again within 60 s of its rotation, as real ones can (Auth0's reuse
	// interval, Okta's grace period, at most 60 s): a replica killed
	// between the server's answer and the save loses the rotated token,
	// and its successor presents the stored one again, which no client can
	// avoid. 60 s covers a kill, the lease's expiry, the takeover and the
	// successor's first refresh of both profiles. Reuse past the grace
	// revokes the grant, as without one, and is counted below.
	as := oauthtest.NewServer(t, &oauthtest.Options{AccessTokenTTL: prof.tokenTTL, RefreshReuseGrace: 60 * time.Second})
	mux := http.NewServeMux()
	type mcpServer struct {
		agent, idx int
		key, url   string
		oauth      bool
	}
	var servers []mcpServer
	keyNS := map[string]string{}
	hostL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := &http.Server{Handler: mux}
	go host.Serve(hostL)
	defer host.Close()
	for i := range prof.agents {
		for j := range prof.servers {
			key := fmt.Sprintf("a%d/s%d", i, j)
			keyNS[key] = namespace(i)
			srv := mcptest.NewServer(key)
			mode := mcptest.Stateless
			if j%2 == 1 {
				mode = mcptest.Stateful
			}
			h := rec.wrap(key, mcptest.Handler(t, mode, func() *mcp.Server { return srv.Server }))
			s := mcpServer{agent: i, idx: j, key: key}
			if j == 0 && i%3 == 0 {
				res := as.ServeMCP(t, h, nil)
				s.url, s.oauth = res.URL, true
			} else {
				mux.Handle("/"+key+"/mcp", h)
				s.url = "http://" + hostL.Addr().String() + "/" + key + "/mcp"
			}
			servers = append(servers, s)
		}
		// Scratch servers the load adds and removes.
		key := fmt.Sprintf("a%d/x", i)
		keyNS[key] = namespace(i)
		srv := mcptest.NewServer(key)
		mux.Handle("/"+key+"/mcp", rec.wrap(key, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })))
	}
	scratchURL := func(i int) string { return "http://" + hostL.Addr().String() + fmt.Sprintf("/a%d/x/mcp", i) }

	// Replicas.

	failed := false
	defer func() {
		if failed || t.Failed() || os.Getenv(EnvLogs) != "" {
			t.Logf("replica logs:\n%s", c.logTails(150))
		}
	}()
	for _, r := range c.reps {
		if err := c.startReady(r, time.Minute); err != nil {
			failed = true
			t.Fatal(err)
		}
		c.setPool(r.slot, true)
	}
	bal := newBalancer(t, c)
	hc := &http.Client{Timeout: 60 * time.Second}
	defer hc.CloseIdleConnections()

	// Seed: every server added through a random replica; OAuth servers
	// authorized through the balancer (the callback lands on any replica).
	for _, s := range servers {
		body := fmt.Sprintf(`{"name":"s%d","url":%q,"id":"s%d","callbackHost":%q}`, s.idx, s.url, s.idx, bal.URL())
		st, data, _, err := c.do(ctx, hc, "POST", agentPath(s.agent)+"/servers", body)
		if err != nil || st/100 != 2 {
			failed = true
			t.Fatalf("seeding %s: %d %s %v", s.key, st, data, err)
		}
		var added struct {
			State   string `json:"state"`
			AuthURL string `json:"authUrl"`
		}
		json.Unmarshal(data, &added)
		if s.oauth {
			if err := authorize(ctx, c, hc, as, s.agent, added.AuthURL); err != nil {
				failed = true
				t.Fatalf("authorizing %s: %v", s.key, err)
			}
		}
	}
	for _, s := range servers {
		if err := waitServerReady(ctx, c, hc, s.agent, fmt.Sprintf("s%d", s.idx), time.Minute); err != nil {
			failed = true
			t.Fatalf("server %s: %v", s.key, err)
		}
	}
	t.Logf("seeded %d agents with %d servers", prof.agents, len(servers))
	// Every replica wakes every agent once before the faults (hibernated
	// where it was awake, then woken on the next replica): what a first
	// wake fills once for good (caches of the servers' discovery, of the
	// code paths' types) is not counted as growth by the leak check.
	if !control() {
		var ww sync.WaitGroup
		for i := range prof.agents {
			ww.Go(func() {
				for _, r := range c.reps {
					for _, o := range c.reps {
						c.doAt(ctx, hc, o, "POST", agentPath(i)+"/hibernate", "")
					}
					if st, data, _, err := c.doAt(ctx, hc, r, "GET", agentPath(i)+"/tools", ""); err != nil || st != http.StatusOK {
						t.Logf("warm-up: agent %d on replica %d: %d %s %v", i, r.slot, st, data, err)
					}
					// A call on each server too: each replica's first
					// creates that server's series of the call metrics.
					for j := range prof.servers {
						path := fmt.Sprintf("%s/servers/s%d/tools/call", agentPath(i), j)
						if st, data, _, err := c.doAt(ctx, hc, r, "POST", path, `{"name":"echo","arguments":{"text":"warm-up"}}`); err != nil || st != http.StatusOK {
							t.Logf("warm-up: agent %d server s%d on replica %d: %d %s %v", i, j, r.slot, st, data, err)
						}
					}
				}
			})
		}
		ww.Wait()
	}

	// Load.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var callsMu sync.Mutex
	var calls []call
	type ackKey struct{ ns, id string }
	acked := map[ackKey]bool{}     // acknowledged scratch adds not removed since
	uncertain := map[ackKey]bool{} // a remove with an unknown outcome
	record := func(cl call) {
		callsMu.Lock()
		calls = append(calls, cl)
		callsMu.Unlock()
	}
	// The survivors' memory is sampled with the load paused (no request in
	// flight): paused held for writing.
	var paused sync.RWMutex
	for w := range prof.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(250 * time.Millisecond) // the load's pace
			defer tick.Stop()
			var mine []ackKey
			// busy holds the scratch ids that exist in an agent, or may
			// (an add or remove with an unknown outcome). An add takes the
			// lowest id free in its agent: ids are reused, as people reuse
			// server names, so that the survivors' memory, sampled after
			// each kill cycle, does not grow with names only this test
			// keeps inventing (every new server id is a new series of the
			// per-server metrics).
			busy := map[ackKey]bool{}
			for {
				select {
				case <-loadCtx.Done():
					return
				case <-tick.C:
				}
				i := rand.IntN(prof.agents)
				var op, method, path, body string
				var ak ackKey
				switch x := rand.IntN(10); {
				case x < 4:
					op, method, path = "tools", "GET", agentPath(i)+"/tools"
				case x < 7:
					j := rand.IntN(prof.servers)
					op, method, path = "call", "POST", fmt.Sprintf("%s/servers/s%d/tools/call", agentPath(i), j)
					body = `{"name":"echo","arguments":{"text":"hi"}}`
				case (x < 9 || len(mine) == 0) && len(mine) < maxScratch:
					for k := 1; ; k++ {
						ak = ackKey{namespace(i), fmt.Sprintf("x%d-%d", w, k)}
						if !busy[ak] {
							break
						}
					}
					id := ak.id
					busy[ak] = true
					op, method, path = "add", "POST", agentPath(i)+"/servers"
					body = fmt.Sprintf(`{"name":%q,"url":%q,"id":%q}`, id, scratchURL(i), id)
				default:
					k := rand.IntN(len(mine))
					ak = mine[k]
					mine = slices.Delete(mine, k, k+1)
					op, method, path = "remove", "DELETE", "/agents/"+ak.ns+"/servers/"+ak.id
				}
				paused.RLock()
				cl := call{op: op, start: time.Now()}
				st, data, _, err := c.do(loadCtx, hc, method, path, body)
				cl.end, cl.status, cl.err = time.Now(), st, err
				paused.RUnlock()
				if st/100 != 2 {
					cl.code = errorCode(data)
				}
				if loadCtx.Err() != nil && err != nil {
					if op == "remove" { // it may have run
						callsMu.Lock()
						uncertain[ak] = true
						callsMu.Unlock()
					}
					return // the run ended mid request
				}
				if err == errNoReplica {
					continue
				}
				record(cl)
				callsMu.Lock()
				switch {
				case op == "add" && st/100 == 2:
					acked[ak] = true
					mine = append(mine, ak)
				case op == "add" && st/100 == 4 && st != http.StatusConflict:
					delete(busy, ak) // refused: it does not exist
				case op == "remove" && st/100 == 2:
					delete(acked, ak)
					delete(busy, ak)
				case op == "remove":
					delete(acked, ak)
					uncertain[ak] = true
				}
				callsMu.Unlock()
			}
		}()
	}
	var subs []*subscriber
	subHold := newHold(loadCtx)
	for i := range min(prof.subscribers, prof.agents) {
		s := &subscriber{agent: i}
		subs = append(subs, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(loadCtx, "ws://"+strings.TrimPrefix(bal.URL(), "http://")+agentPath(i), subHold)
		}()
	}
	defer func() {
		stopLoad()
		wg.Wait()
	}()

	fig := &figures{}
	fig.set("profile", "%s", prof.name)
	fig.set("lease_ttl_seconds", "%g", prof.lease.Seconds())

	// owners returns the live leases: namespace -> slot.
	owners := func() (map[string]int, error) {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		rows, err := db.Query(qctx, `SELECT a.namespace, r.cluster_url FROM agentmcp_agents a
			JOIN agentmcp_replicas r ON r.id = a.owner WHERE r.expires_at > now()`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		m := map[string]int{}
		for rows.Next() {
			var ns, url string
			if err := rows.Scan(&ns, &url); err != nil {
				return nil, err
			}
			m[ns] = c.slotOfURL(url)
		}
		return m, rows.Err()
	}
	mostAgents := func() (*replica, map[string]bool, error) {
		own, err := owners()
		if err != nil {
			return nil, nil, err
		}
		count := map[int]int{}
		for _, s := range own {
			count[s]++
		}
		best := c.reps[0]
		for _, r := range c.reps {
			if count[r.slot] > count[best.slot] {
				best = r
			}
		}
		agents := map[string]bool{}
		for ns, s := range own {
			if s == best.slot {
				agents[ns] = true
			}
		}
		return best, agents, nil
	}
	fatal := func(format string, args ...any) {
		failed = true
		t.Fatalf(format, args...)
	}
	readyWithin := prof.lease*4 + time.Minute

	var (
		windows       []window
		changes       []ownerChange
		failovers     []float64
		frozenWins    []frozen
		memFirst      = map[int]memSample{} // pid -> its first sample, after a kill cycle
		memLast       = map[int]memSample{} // its last
		memCycles     = map[int]int{}       // pid -> kill cycles survived
		memFirstCycle = map[int]int{}       // kill cycles survived at the first sample
		memLastCycle  = map[int]int{}
		drainExits    []string
		pgRecovery    []float64
		stopResumes   []float64
	)
	runStart := time.Now()

	for round := 1; round <= prof.rounds; round++ {
		// kill -9 of the replica with the most agents, restarted.
		for k := 1; k <= prof.kills; k++ {
			victim, agents, err := mostAgents()
			if err != nil {
				fatal("leases: %v", err)
			}
			before := map[int]bool{}
			for _, p := range c.livePids() {
				before[p] = true
			}
			c.setPool(victim.slot, false)
			tk := time.Now()
			if err := c.signal(victim, syscall.SIGKILL); err != nil {
				fatal("kill: %v", err)
			}
			if _, ok := c.waitExit(victim, 30*time.Second); !ok {
				fatal("replica %d did not die after SIGKILL", victim.slot)
			}
			delete(before, 0)
			changes = append(changes, ownerChange{kind: "kill", at: tk, agents: agents})
			// When the victim's leases lapse, by the database's clock (the
			// same machine's).
			var expires time.Time
			if err := db.QueryRow(ctx, `SELECT max(expires_at) FROM agentmcp_replicas WHERE cluster_url = $1`, victim.clusterURL()).Scan(&expires); err != nil && !control() {
				fatal("expiry of replica %d: %v", victim.slot, err)
			}
			// Kill to the first answer through a survivor, per agent the
			// victim owned.
			var fmu sync.Mutex
			var fw sync.WaitGroup
			traces := map[string]*failoverTrace{}
			for ns := range agents {
				tr := &failoverTrace{}
				traces[ns] = tr
				fw.Add(1)
				go func() {
					defer fw.Done()
					deadline := tk.Add(prof.lease*3 + 30*time.Second)
					for time.Now().Before(deadline) && ctx.Err() == nil {
						r := c.pick()
						if r == nil || r.slot == victim.slot {
							continue // the pool has two survivors at least
						}
						pctx, cancel := context.WithDeadline(ctx, deadline)
						at := time.Now()
						st, data, _, err := c.doAt(pctx, hc, r, "GET", "/agents/"+ns+"/tools", "")
						cancel()
						tr.add(at, time.Now(), r.slot, st, errorCode(data), err)
						if st/100 == 2 {
							fmu.Lock()
							failovers = append(failovers, time.Since(tk).Seconds())
							fmu.Unlock()
							return
						}
						// Pacing of the retries (a 503 comes back at once),
						// not synchronisation: the figure's resolution.
						select {
						case <-time.After(100 * time.Millisecond):
						case <-ctx.Done():
						}
					}
					fmu.Lock()
					failovers = append(failovers, time.Since(tk).Seconds())
					fmu.Unlock()
					t.Errorf("agent %s: no answer through a survivor within %v of the kill", ns, time.Since(tk).Round(time.Millisecond))
				}()
			}
			// Restart after a few seconds (the plan).
			select {
			case <-time.After(prof.killDown):
			case <-ctx.Done():
			}
			if err := c.startReady(victim, readyWithin); err != nil {
				fatal("%v", err)
			}
			c.setPool(victim.slot, true)
			fw.Wait()
			windows = append(windows, window{"kill", tk, time.Now()})
			logFailovers(t, db, fmt.Sprintf("round %d kill %d", round, k), tk, expires, time.Duration(prof.failoverP50*float64(time.Second)), traces)
			var survivors []int
			for p := range before {
				if _, alive := c.slotOfPid(p); alive {
					survivors = append(survivors, p)
					memCycles[p]++
				}
			}
			// The survivors' memory after each kill cycle, in the same
			// state each time: no request of the test in flight, no
			// stream, every agent hibernated, no idle connection. What
			// stays is the process's own: what failovers left behind.
			{
				waitStreams(t, subs, tk, agents, readyWithin)
				paused.Lock()
				subHold.pause()
				hc.CloseIdleConnections()
				// Every replica's idle connections closed first (those
				// between replicas have a goroutine at each end).
				for _, r := range c.reps {
					c.runtimeStats(ctx, r)
				}
				for _, p := range survivors {
					slot, _ := c.slotOfPid(p)
					m, err := c.quietSample(ctx, hc, c.reps[slot], p, readyWithin)
					if err != nil {
						t.Logf("round %d kill %d: survivor replica %d (pid %d): %v", round, k, slot, p, err)
						continue
					}
					if _, ok := memFirst[p]; !ok {
						memFirst[p] = m
						memFirstCycle[p] = memCycles[p]
					}
					memLast[p] = m
					memLastCycle[p] = memCycles[p]
					if heapDir() != "" {
						if err := c.saveHeapProfile(ctx, c.reps[slot], fmt.Sprintf("heap-r%d-k%d-pid%d-c%d.pb.gz", round, k, p, memCycles[p])); err != nil {
							t.Logf("heap profile of pid %d: %v", p, err)
						}
					}
					t.Logf("round %d kill %d: survivor replica %d (pid %d, %d kill cycles): %d goroutines, heap %d B (%d objects), RSS %d KiB, %d threads, agents hibernated", round, k, slot, p,
						memCycles[p], m.Goroutines, m.HeapAlloc, m.HeapObjects, m.rssKiB, m.threads)
				}
				subHold.resume(loadCtx)
				paused.Unlock()
				// The agents awake again, each where a request lands, so
				// that the next kill has agents to move.
				var ww sync.WaitGroup
				for i := range prof.agents {
					ww.Go(func() { c.do(ctx, hc, "GET", agentPath(i)+"/tools", "") })
				}
				ww.Wait()
			}
			t.Logf("round %d kill %d: replica %d (%d agents) killed; failovers so far %d", round, k, victim.slot, len(agents), len(failovers))
		}

		// Rolling drain: SIGTERM each in turn, restarted and ready before
		// the next.
		for _, r := range c.reps {
			own, err := owners()
			if err != nil {
				fatal("leases: %v", err)
			}
			agents := map[string]bool{}
			for ns, s := range own {
				if s == r.slot {
					agents[ns] = true
				}
			}
			c.setPool(r.slot, false)
			tT := time.Now()
			if err := c.signal(r, syscall.SIGTERM); err != nil {
				fatal("drain: %v", err)
			}
			exitErr, ok := c.waitExit(r, prof.drainTimeout+prof.lease*2+30*time.Second)
			if !ok {
				fatal("replica %d did not exit within %v of SIGTERM", r.slot, prof.drainTimeout+prof.lease*2+30*time.Second)
			}
			if exitErr != nil {
				drainExits = append(drainExits, fmt.Sprintf("replica %d: %v", r.slot, exitErr))
			}
			windows = append(windows, window{"drain", tT, time.Now()})
			changes = append(changes, ownerChange{kind: "drain", at: tT, agents: agents})
			if err := c.startReady(r, readyWithin); err != nil {
				fatal("%v", err)
			}
			c.setPool(r.slot, true)
			t.Logf("round %d: replica %d drained in %v (%d agents)", round, r.slot, windows[len(windows)-1].to.Sub(tT).Round(time.Millisecond), len(agents))
		}

		// SIGSTOP past the lease, then SIGCONT.
		{
			victim, _, err := mostAgents()
			if err != nil {
				fatal("leases: %v", err)
			}
			var staleID string
			if err := db.QueryRow(ctx, `SELECT id FROM agentmcp_replicas WHERE cluster_url = $1 AND expires_at > now()
				ORDER BY started_at DESC LIMIT 1`, victim.clusterURL()).Scan(&staleID); err != nil {
				if !control() {
					fatal("replica id of %d: %v", victim.slot, err)
				}
			}
			pid := victim.pid()
			c.setPool(victim.slot, false)
			tS := time.Now()
			if err := c.signal(victim, syscall.SIGSTOP); err != nil {
				fatal("stop: %v", err)
			}
			select {
			case <-time.After(prof.stopFor):
			case <-ctx.Done():
			}
			tC := time.Now()
			rec.mu.Lock()
			rec.fenced = &fenceWatch{pid: pid, staleID: staleID, clusterURL: victim.clusterURL(),
				from: tC, until: tC.Add(prof.lease * 3), db: db, ns: func(k string) string { return keyNS[k] }}
			rec.mu.Unlock()
			frozenWins = append(frozenWins, frozen{pid: pid, from: tS, to: tC.Add(time.Second)})
			if err := c.signal(victim, syscall.SIGCONT); err != nil {
				fatal("cont: %v", err)
			}
			if err := c.waitReady(victim, readyWithin); err != nil {
				fatal("after SIGCONT: %v", err)
			}
			readyAfter := time.Since(tC)
			stopResumes = append(stopResumes, readyAfter.Seconds())
			c.setPool(victim.slot, true)
			windows = append(windows, window{"stop", tS, time.Now()})
			// The watch looks up leases in the database: it ends before the
			// database's outage.
			select {
			case <-time.After(time.Until(tC.Add(prof.lease * 3))):
			case <-ctx.Done():
			}
			rec.mu.Lock()
			rec.fenced = nil
			rec.mu.Unlock()
			t.Logf("round %d: replica %d stopped %v, ready %v after SIGCONT", round, victim.slot, tC.Sub(tS).Round(time.Millisecond), readyAfter.Round(time.Millisecond))
		}

		// PostgreSQL stopped and started.
		{
			tP := time.Now()
			if err := pg.Halt(); err != nil {
				fatal("%v", err)
			}
			resumed := false
			defer func() { // on a failure in between
				if !resumed {
					pg.Resume()
				}
			}()
			select {
			case <-time.After(prof.pgDown):
			case <-ctx.Done():
			}
			resumed = true
			if err := pg.Resume(); err != nil {
				fatal("%v", err)
			}
			tR := time.Now()
			for _, r := range c.reps {
				if err := c.waitReady(r, readyWithin); err != nil {
					fatal("after the database came back: %v", err)
				}
			}
			pgRecovery = append(pgRecovery, time.Since(tR).Seconds())
			windows = append(windows, window{"postgres", tP, time.Now()})
			t.Logf("round %d: postgres down %v, replicas ready %v after it came back", round, tR.Sub(tP).Round(time.Millisecond), time.Since(tR).Round(time.Millisecond))
		}
	}
	stopLoad()
	wg.Wait()
	runEnd := time.Now()

	// Figures.
	fig.set("run_seconds", "%.1f", runEnd.Sub(runStart).Seconds())
	dup, examples := rec.duplicates(frozenWins, runEnd)
	fig.set("duplicate_active_owners", "%d", dup)
	fig.set("unattributed_requests", "%d", rec.unattributed.Load())
	{
		// A request whose sender is gone by the time it is looked up: a
		// process killed with requests in flight.
		n := 0
		rec.mu.Lock()
		for _, at := range rec.unattributedAt {
			for _, w := range windows {
				if w.kind == "kill" && !at.Before(w.from) && at.Before(w.from.Add(time.Second)) {
					n++
					break
				}
			}
		}
		rec.mu.Unlock()
		fig.set("unattributed_requests_within_1s_of_a_kill", "%d", n)
	}

	// Acknowledged adds and rows.
	lost := 0
	var lostList []string
	for k := range acked {
		if uncertain[k] {
			continue
		}
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM agentmcp_servers WHERE namespace = $1 AND id = $2`, k.ns, k.id).Scan(&n); err != nil {
			fatal("acked adds: %v", err)
		}
		if n == 0 {
			lost++
			lostList = append(lostList, k.ns+"/"+k.id)
		}
	}
	fig.set("acked_adds", "%d", len(acked))
	fig.set("acked_adds_lost", "%d", lost)
	var dupRows int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM agentmcp_servers GROUP BY namespace, name, url HAVING count(*) > 1) d`).Scan(&dupRows); err != nil {
		fatal("duplicate rows: %v", err)
	}
	fig.set("duplicate_rows", "%d", dupRows)

	// OAuth.
	reuse := 0
	tokenErrs := map[string]int{}
	for _, tr := range as.TokenRequests() {
		if tr.Error == "invalid_grant" && strings.Contains(tr.ErrorDescription, "already used") {
			reuse++
		}
		if tr.Error != "" {
			tokenErrs[tr.Form.Get("grant_type")+": "+tr.Error+": "+tr.ErrorDescription]++
		}
	}
	for e, n := range tokenErrs {
		t.Logf("token requests refused: %d× %s", n, e)
	}
	fig.set("refresh_grants", "%d", as.Counts.RefreshGrants.Load())
	fig.set("refresh_token_reuse", "%d", reuse)
	fig.set("refresh_token_reuse_in_grace", "%d", as.Counts.RefreshReusedInGrace.Load())
	// A server the chaos sent back to authenticating stays there (it needs
	// the user); one seen authenticating for a moment while its agent
	// wakes becomes ready by itself.
	reauth, transient := 0, 0
	var reauthList []string
	var rmu sync.Mutex
	var rwg sync.WaitGroup
	for _, s := range servers {
		if !s.oauth {
			continue
		}
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			id := fmt.Sprintf("s%d", s.idx)
			st, data, _, err := c.do(ctx, hc, "GET", agentPath(s.agent)+"/servers/"+id, "")
			var got struct {
				State string `json:"state"`
			}
			json.Unmarshal(data, &got)
			if err == nil && st == 200 && got.State == "ready" {
				return
			}
			werr := waitServerReady(ctx, c, hc, s.agent, id, prof.lease*3+30*time.Second)
			rmu.Lock()
			defer rmu.Unlock()
			if werr != nil {
				reauth++
				reauthList = append(reauthList, fmt.Sprintf("%s: %v; stored: %s", s.key, werr, storedAuth(ctx, db, namespace(s.agent), id)))
				return
			}
			transient++
			t.Logf("server %s was %q (%d %v) at the end, ready soon after", s.key, got.State, st, err)
		}()
	}
	rwg.Wait()
	fig.set("oauth_servers_not_ready_at_end_then_ready", "%d", transient)
	fig.set("reauth_required", "%d", reauth)
	fig.set("requests_after_resume_from_fenced_replica", "%d", rec.fencedRequests.Load())

	fig.set("failover_samples", "%d", len(failovers))
	fig.set("failover_seconds_p50", "%.2f", percentile(failovers, 0.5))
	fig.set("failover_seconds_max", "%.2f", percentile(failovers, 1))

	// Client errors by window.
	inWindow := func(cl call, kind string) bool {
		for _, w := range windows {
			if w.kind == kind && cl.start.Before(w.to) && cl.end.After(w.from) {
				return true
			}
		}
		return false
	}
	for _, w := range windows {
		t.Logf("fault %s: %s..%s", w.kind, w.from.Format(time.TimeOnly+".000"), w.to.Format(time.TimeOnly+".000"))
	}
	byWindow := map[string]int{}
	pgNot503 := 0
	for _, cl := range calls {
		if cl.err == nil && cl.status/100 == 2 {
			continue
		}
		kind := "no fault"
		for _, w := range windows {
			if cl.start.Before(w.to) && cl.end.After(w.from) {
				kind = w.kind
			}
		}
		what := fmt.Sprintf("%d %s", cl.status, cl.code)
		if cl.err != nil {
			what = shorten(cl.err)
		}
		if kind == "postgres" && cl.status != http.StatusServiceUnavailable {
			pgNot503++
		}
		byWindow[kind+": "+cl.op+" "+what]++
	}
	for k, n := range byWindow {
		t.Logf("client errors: %d× during %s", n, k)
	}
	var drainErrs, steadyErrs, interrupted, total int
	var drainList []string
	for _, cl := range calls {
		total++
		ok := cl.err == nil && cl.status/100 == 2
		if cl.code == "interrupted" {
			interrupted++
			t.Logf("interrupted: %s at %s after %.3fs (status %d)", cl.op, cl.start.Format(time.TimeOnly+".000"), cl.end.Sub(cl.start).Seconds(), cl.status)
		}
		if ok {
			continue
		}
		switch {
		case inWindow(cl, "drain") && !inWindow(cl, "kill") && !inWindow(cl, "stop") && !inWindow(cl, "postgres") &&
			cl.end.Sub(cl.start) < prof.drainTimeout:
			// (a call that also overlapped another fault may have failed
			// for that one)
			drainErrs++
			if len(drainList) < 10 {
				drainList = append(drainList, fmt.Sprintf("%s %s +%.3fs: %d %s %v", cl.op, cl.start.Format(time.TimeOnly+".000"), cl.end.Sub(cl.start).Seconds(), cl.status, cl.code, cl.err))
			}
		case !inWindow(cl, "kill") && !inWindow(cl, "stop") && !inWindow(cl, "postgres") && !inWindow(cl, "drain"):
			steadyErrs++
		}
	}
	fig.set("client_calls", "%d", total)
	fig.set("client_errors_during_drain", "%d", drainErrs)
	fig.set("client_errors_outside_faults", "%d", steadyErrs)
	fig.set("interrupted_answers", "%d", interrupted)
	fig.set("drain_nonzero_exits", "%d", len(drainExits))

	// Stream gaps across owner changes.
	var gaps []float64
	missing := 0
	for _, ch := range changes {
		// A change's streams are watched until the next fault of any kind
		// begins: a stream that ends in a SIGSTOP or a database outage
		// after a drain is not the drain's.
		limit := runEnd
		for _, w := range windows {
			if w.from.After(ch.at) && w.from.Before(limit) {
				limit = w.from
			}
		}
		for _, s := range subs {
			if !ch.agents[namespace(s.agent)] && !s.droppedIn(ch.at, limit) {
				continue
			}
			f, ok := s.firstFrameAfter(ch.at, limit)
			gap := f.Sub(ch.at)
			if !ok {
				missing++
				gap = limit.Sub(ch.at)
			}
			gaps = append(gaps, gap.Seconds())
			if gap.Seconds() > prof.failoverP50 {
				t.Logf("stream gap of %.2fs: subscriber of %s across the %s at %s (frame: %v, watched until %s)", gap.Seconds(), agentName(s.agent),
					ch.kind, ch.at.Format(time.TimeOnly+".000"), ok, limit.Format(time.TimeOnly+".000"))
			}
		}
	}
	fig.set("stream_gap_samples", "%d", len(gaps))
	fig.set("stream_gap_seconds_max", "%.2f", percentile(gaps, 1))
	fig.set("stream_gaps_without_frame", "%d", missing)
	dials := 0
	for _, s := range subs {
		s.mu.Lock()
		dials += s.dials
		s.mu.Unlock()
	}
	fig.set("stream_dials", "%d", dials)
	reasons := map[string]int{}
	for _, s := range subs {
		s.mu.Lock()
		for r, n := range s.reasons {
			reasons[r] += n
		}
		s.mu.Unlock()
	}
	for r, n := range reasons {
		t.Logf("streams: %d× %s", n, r)
	}
	// Failed dials by the fault they happened in.
	dialErrs := map[string]int{}
	outside := 0
	for _, s := range subs {
		s.mu.Lock()
		for _, d := range s.dialErr {
			kind := "no fault"
			for _, w := range windows {
				if !d.at.Before(w.from) && !d.at.After(w.to) {
					kind = w.kind
				}
			}
			if kind == "no fault" {
				outside++
			}
			dialErrs[kind+": "+d.msg]++
		}
		s.mu.Unlock()
	}
	for r, n := range dialErrs {
		t.Logf("stream dials failed: %d× during %s", n, r)
	}
	fig.set("stream_dial_errors_outside_faults", "%d", outside)
	pgDialNot503 := 0
	for k, n := range dialErrs {
		if strings.HasPrefix(k, "postgres: ") && !strings.HasSuffix(k, " 503") {
			pgDialNot503 += n
		}
	}
	fig.set("postgres_outage_answers_not_503", "%d", pgNot503+pgDialNot503)
	fig.set("sigstop_ready_after_cont_seconds_max", "%.2f", slices.Max(append(stopResumes, 0)))
	fig.set("postgres_recovery_seconds_max", "%.2f", slices.Max(append(pgRecovery, 0)))

	// A survivor's memory: of the processes sampled twice or more, the one
	// that lived through the most kill cycles between its first and last
	// samples.
	var witness int
	span := func(p int) int { return memLastCycle[p] - memFirstCycle[p] }
	for p := range memLast {
		if witness == 0 || span(p) > span(witness) || (span(p) == span(witness) && p < witness) {
			witness = p
		}
	}
	change := func(first, last float64) float64 { return 100 * (last - first) / cmp.Or(first, 1) }
	var goroutineChange, heapChange float64
	if witness != 0 && span(witness) > 0 {
		f, l := memFirst[witness], memLast[witness]
		goroutineChange, heapChange = change(float64(f.Goroutines), float64(l.Goroutines)), change(float64(f.HeapAlloc), float64(l.HeapAlloc))
		fig.set("survivor_kill_cycles", "%d", memLastCycle[witness])
		fig.set("survivor_kill_cycles_sampled_first", "%d", memFirstCycle[witness])
		fig.set("survivor_goroutines_first", "%d", f.Goroutines)
		fig.set("survivor_goroutines_last", "%d", l.Goroutines)
		fig.set("survivor_goroutines_change_percent", "%.1f", goroutineChange)
		fig.set("survivor_heap_bytes_first", "%d", f.HeapAlloc)
		fig.set("survivor_heap_bytes_last", "%d", l.HeapAlloc)
		fig.set("survivor_heap_change_percent", "%.1f", heapChange)
		fig.set("survivor_heap_objects_first", "%d", f.HeapObjects)
		fig.set("survivor_heap_objects_last", "%d", l.HeapObjects)
		fig.set("survivor_rss_kib_first", "%d", f.rssKiB)
		fig.set("survivor_rss_kib_last", "%d", l.rssKiB)
		fig.set("survivor_rss_change_percent", "%.1f", change(float64(f.rssKiB), float64(l.rssKiB)))
		fig.set("survivor_threads_first", "%d", f.threads)
		fig.set("survivor_threads_last", "%d", l.threads)
	} else {
		fig.set("survivor_kill_cycles", "0")
	}
	fig.print(t)

	// Holds.
	for _, o := range examples {
		t.Errorf("two owners on server %s: pid %d (replica %d) %s %s..%s and pid %d (replica %d) %s %s..%s", o.key,
			o.a.pid, o.a.slot, o.a.method, o.a.start.Format(time.TimeOnly+".000"), o.a.end.Format(time.TimeOnly+".000"),
			o.b.pid, o.b.slot, o.b.method, o.b.start.Format(time.TimeOnly+".000"), o.b.end.Format(time.TimeOnly+".000"))
	}
	if dup != 0 {
		t.Errorf("duplicate_active_owners=%d, want 0", dup)
	}
	if lost != 0 {
		t.Errorf("acked_adds_lost=%d, want 0: %v", lost, lostList)
	}
	if dupRows != 0 {
		t.Errorf("duplicate_rows=%d, want 0", dupRows)
	}
	if reuse != 0 {
		t.Errorf("refresh_token_reuse=%d, want 0", reuse)
	}
	if reauth != 0 {
		t.Errorf("reauth_required=%d, want 0: %v", reauth, reauthList)
	}
	if n := rec.fencedRequests.Load(); n != 0 {
		t.Errorf("requests_after_resume_from_fenced_replica=%d, want 0: %v", n, rec.fencedLog)
	}
	if p := percentile(failovers, 0.5); p > prof.failoverP50 {
		t.Errorf("failover_seconds_p50=%.2f, want <= %g", p, prof.failoverP50)
	}
	if m := percentile(failovers, 1); m > prof.failoverMax {
		t.Errorf("failover_seconds_max=%.2f, want <= %g", m, prof.failoverMax)
	}
	if drainErrs != 0 {
		t.Errorf("client_errors_during_drain=%d, want 0: %v", drainErrs, drainList)
	}
	if len(drainExits) != 0 {
		t.Errorf("a drained replica did not exit with status 0: %v", drainExits)
	}
	if witness == 0 || span(witness) == 0 {
		t.Errorf("no survivor sampled after two kill cycles or more: no leak check")
	}
	// The process's own goroutines are few (about 14): one more or fewer
	// is within the hold whatever its percentage (a leak adds one a cycle
	// or more).
	if f, l := memFirst[witness].Goroutines, memLast[witness].Goroutines; math.Abs(goroutineChange) > 10 && max(f-l, l-f) > 1 {
		t.Errorf("survivor_goroutines_change_percent=%.1f, want within ±10 (or one goroutine)", goroutineChange)
	}
	if math.Abs(heapChange) > 10 {
		t.Errorf("survivor_heap_change_percent=%.1f, want within ±10", heapChange)
	}
	if m := percentile(gaps, 1); m > prof.failoverMax {
		t.Errorf("stream_gap_seconds_max=%.2f, want <= %g (the failover bound); %d owner changes without a frame", m, prof.failoverMax, missing)
	}
	if t.Failed() {
		failed = true
	}
}

// memSample is a survivor's memory after a kill cycle.
type memSample struct {
	rssKiB, threads int
	api.RuntimeStats
}

// quietSample hibernates every agent of the replica's process pid (the
// test's requests and streams stopped: nothing keeps them awake) and then
// samples its memory a few times, keeping the least of each figure.
func (c *cluster) quietSample(ctx context.Context, hc *http.Client, r *replica, pid int, within time.Duration) (memSample, error) {
	deadline := time.Now().Add(within)
	for {
		rs, err := c.runtimeStats(ctx, r)
		if err != nil {
			return memSample{}, err
		}
		if rs.AwakeAgents == 0 {
			break
		}
		if time.Now().After(deadline) {
			return memSample{}, fmt.Errorf("%d agents still awake after %v", rs.AwakeAgents, within)
		}
		for i := range c.prof.agents {
			// 204 hibernated or asleep, 409 still busy (a stream closing).
			c.doAt(ctx, hc, r, "POST", agentPath(i)+"/hibernate", "")
		}
		// Pacing of the attempts, not synchronisation.
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return memSample{}, ctx.Err()
		}
	}
	var m memSample
	for i := range 3 {
		if i > 0 {
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return m, ctx.Err()
			}
		}
		rs, err := c.runtimeStats(ctx, r)
		if err != nil {
			return m, err
		}
		kib, th := rss(pid)
		if i == 0 {
			m = memSample{kib, th, rs}
			continue
		}
		m.rssKiB, m.threads = min(m.rssKiB, kib), min(m.threads, th)
		m.Goroutines, m.HeapAlloc, m.HeapObjects = min(m.Goroutines, rs.Goroutines), min(m.HeapAlloc, rs.HeapAlloc), min(m.HeapObjects, rs.HeapObjects)
	}
	return m, nil
}

// waitStreams waits until every subscriber the kill at tk concerned (its
// agent moved, or its stream dropped) has had a frame since, so that a
// pause of the streams does not count in their gaps. The deadline is a
// safety net.
func waitStreams(t *testing.T, subs []*subscriber, tk time.Time, moved map[string]bool, within time.Duration) {
	deadline := time.Now().Add(within)
	for _, s := range subs {
		for {
			now := time.Now()
			if !moved[namespace(s.agent)] && !s.droppedIn(tk, now) {
				break
			}
			if _, ok := s.firstFrameAfter(tk, now.Add(time.Second)); ok {
				break
			}
			if now.After(deadline) {
				t.Logf("subscriber of %s: no frame since the kill after %v", agentName(s.agent), within)
				break
			}
			time.Sleep(50 * time.Millisecond) // pacing of the look, not synchronisation
		}
	}
}

// failoverTrace is the requests of one agent's failover measure.
type failoverTrace struct {
	mu       sync.Mutex
	attempts []attempt
}

type attempt struct {
	start, end time.Time
	slot       int
	status     int
	code       string
	err        error
}

func (tr *failoverTrace) add(start, end time.Time, slot, status int, code string, err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.attempts = append(tr.attempts, attempt{start, end, slot, status, code, err})
}

// logFailovers logs where the time of a kill's failovers went, relative to
// the kill: when the victim's leases lapsed (by the database's clock, the
// same machine's), when the survivors claimed its agents, and when each
// agent first answered; and, for an agent slower than slow, every
// request until its first answer (runs of alike answers once).
func logFailovers(t *testing.T, db *pgxpool.Pool, label string, tk, expires time.Time, slow time.Duration, traces map[string]*failoverTrace) {
	rel := func(x time.Time) float64 { return x.Sub(tk).Seconds() }
	var claims, answers []float64
	var details []string
	for ns, tr := range traces {
		var claimed *time.Time
		db.QueryRow(context.Background(), `SELECT claimed_at FROM agentmcp_agents WHERE namespace = $1`, ns).Scan(&claimed)
		if claimed != nil {
			claims = append(claims, rel(*claimed))
		}
		tr.mu.Lock()
		if n := len(tr.attempts); n > 0 && tr.attempts[n-1].status/100 == 2 {
			answers = append(answers, rel(tr.attempts[n-1].end))
			if tr.attempts[n-1].end.Sub(tk) <= slow {
				tr.mu.Unlock()
				continue
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "slow failover of %s:", ns)
		if claimed != nil {
			fmt.Fprintf(&b, " claimed %+.2fs;", rel(*claimed))
		}
		for i := 0; i < len(tr.attempts); {
			a := tr.attempts[i]
			what := fmt.Sprintf("%d %s", a.status, a.code)
			if a.err != nil {
				what = shorten(a.err)
			}
			j := i + 1
			for j < len(tr.attempts) && tr.attempts[j].status == a.status && tr.attempts[j].code == a.code && (tr.attempts[j].err == nil) == (a.err == nil) {
				j++
			}
			last := tr.attempts[j-1]
			fmt.Fprintf(&b, " %d× %s from %+.2fs, the last on replica %d %+.2fs..%+.2fs;", j-i, what, rel(a.start), last.slot, rel(last.start), rel(last.end))
			i = j
		}
		tr.mu.Unlock()
		details = append(details, b.String())
	}
	span := func(xs []float64) string {
		if len(xs) == 0 {
			return "none"
		}
		return fmt.Sprintf("%+.2fs..%+.2fs", slices.Min(xs), slices.Max(xs))
	}
	t.Logf("%s: leases lapsed %+.2fs, claimed %s, first answers %s (after the kill)", label, rel(expires), span(claims), span(answers))
	for _, d := range details {
		t.Log(d)
	}
}

// authorize completes an OAuth authorization: the authorization server
// approves it, and its redirect goes to the callback through the
// balancer.
// storedAuth describes what the database holds of a server's
// authorisation (whether a pending authorization URL is stored, the
// key-value keys: the token, the registration, the OAuth state), for the
// report of a server left authenticating.
func storedAuth(ctx context.Context, db *pgxpool.Pool, ns, id string) string {
	var authURL bool
	var updated time.Time
	if err := db.QueryRow(ctx, `SELECT auth_url <> '', updated_at FROM agentmcp_servers WHERE namespace = $1 AND id = $2`, ns, id).Scan(&authURL, &updated); err != nil {
		return fmt.Sprintf("row: %v", err)
	}
	rows, err := db.Query(ctx, `SELECT key FROM agentmcp_kv WHERE namespace = $1 AND server_id = $2 ORDER BY key`, ns, id)
	if err != nil {
		return fmt.Sprintf("keys: %v", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Sprintf("keys: %v", err)
	}
	return fmt.Sprintf("pending authorization URL %v, row updated %s, keys %q", authURL, updated.UTC().Format("15:04:05.000"), keys)
}

func authorize(ctx context.Context, c *cluster, hc *http.Client, as *oauthtest.AuthServer, agent int, authURL string) error {
	if authURL == "" {
		return fmt.Errorf("no authorization URL")
	}
	loc, err := as.VisitAuthURL(ctx, authURL)
	if err != nil {
		return err
	}
	res, err := hc.Get(loc.String())
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode/100 != 2 && res.StatusCode/100 != 3 {
		return fmt.Errorf("callback: %d %s", res.StatusCode, body)
	}
	return nil
}

// waitServerReady polls the server's state until it is ready; the
// deadline is a safety net.
func waitServerReady(ctx context.Context, c *cluster, hc *http.Client, agent int, id string, within time.Duration) error {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for time.Now().Before(deadline) {
		st, data, _, err := c.do(ctx, hc, "GET", agentPath(agent)+"/servers/"+id, "")
		var got struct {
			State string `json:"state"`
		}
		json.Unmarshal(data, &got)
		if err == nil && st == 200 && got.State == "ready" {
			return nil
		}
		last = fmt.Sprintf("%d %s %v", st, got.State, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return fmt.Errorf("not ready within %v (last: %s)", within, last)
}
