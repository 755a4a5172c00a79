package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// The agent whose servers are restored.
const (
	restoreClass = "bench"
	restoreName  = "restore"
)

// restoreReport is what the restore child prints.
type restoreReport struct {
	Seconds  float64 `json:"seconds"`
	Ready    int     `json:"ready"`
	Total    int     `json:"total"`
	VmHWMKiB int64   `json:"vmHWMKiB"`
	Slots    int     `json:"slots"`
	Error    string  `json:"error,omitempty"`
}

// runRestore stores c.restore servers in a SQLite database, then, in a
// child process per repetition, opens the agent and waits for all of them
// to be ready.
func runRestore(ctx context.Context, c *config, srv *serverProc) (string, []figure, error) {
	if len(srv.urls.Extra) < c.restore {
		return "", nil, fmt.Errorf("the server process has %d extra listeners, want %d", len(srv.urls.Extra), c.restore)
	}
	tmp, err := os.MkdirTemp("", "agentmcp-bench-restore")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	template := filepath.Join(tmp, "template.db")
	progress(c.stderr, "restore: storing %d servers", c.restore)
	if err := seedStore(ctx, template, srv.urls.Extra[:c.restore]); err != nil {
		return "", nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	var secs, rss []float64
	var slots int
	for rep := range c.reps {
		progress(c.stderr, "restore: repetition %d/%d", rep+1, c.reps)
		// A fresh copy each time: a restore saves the sessions it made,
		// which the next one would resume.
		db := filepath.Join(tmp, fmt.Sprintf("rep%d.db", rep))
		if err := copyFile(template, db); err != nil {
			return "", nil, err
		}
		var r restoreReport
		if err := childJSON(ctx, "restore child", &r, exe, "restore", "-db", db, "-concurrency", strconv.Itoa(c.restoreConns)); err != nil {
			return "", nil, err
		}
		if r.Error != "" || r.Ready != r.Total || r.Total != c.restore {
			return "", nil, fmt.Errorf("restore: %d of %d ready (%d stored): %s", r.Ready, r.Total, c.restore, r.Error)
		}
		secs = append(secs, r.Seconds)
		rss = append(rss, float64(r.VmHWMKiB)/1024)
		slots = r.Slots
		os.Remove(db)
	}
	t := newTable("servers", "Open to all ready s", "peak RSS MiB", "concurrent connects")
	t.add(fmt.Sprint(c.restore), fmt.Sprintf("%.2f", median(secs)), fmt.Sprintf("%.0f", median(rss)), fmt.Sprint(slots))
	title := "Restore: agent.Open on SQLite to every server ready (cold: no saved sessions; stateful go-sdk servers on their own ports; child process)\n"
	n := fmt.Sprint(c.restore)
	return title + t.String(), []figure{
		{name: "restore_" + n + "_seconds", value: median(secs), goal: "< 10", note: "agent.Open to all ready, " + fmt.Sprint(slots) + " concurrent connects"},
		{name: "restore_" + n + "_peak_rss_mib", value: median(rss), goal: "< 512", note: "VmHWM of the restoring process"},
	}, nil
}

// seedStore writes one agent's servers, one per URL, to a new database.
func seedStore(ctx context.Context, path string, bases []string) error {
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	for i, base := range bases {
		row := store.Server{
			Namespace: restoreClass + "/" + restoreName,
			ID:        fmt.Sprintf("srv%04d", i),
			Name:      fmt.Sprintf("Server %d", i),
			URL:       base + pathStateful,
		}
		if err := st.PutServer(ctx, row); err != nil {
			st.Close()
			return err
		}
	}
	return st.Close()
}

func copyFile(from, to string) error {
	for _, suffix := range []string{"", "-wal"} {
		src, err := os.Open(from + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			return err
		}
		dst, err := os.OpenFile(to+suffix, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			src.Close()
			return err
		}
		_, err = io.Copy(dst, src)
		src.Close()
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// restoreChild is the restore process: it opens the agent on the database
// and waits for every server to be ready, then prints a restoreReport.
func restoreChild(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	db := fs.String("db", "", "SQLite database")
	conc := fs.Int("concurrency", 0, "MaxConcurrentConnects (0: the default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, err := sqlite.Open(ctx, *db, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()

	start := time.Now()
	a, err := agent.Open(ctx, st, restoreClass, restoreName, &agent.Options{Manager: &mcpclient.Options{MaxConcurrentConnects: *conc}})
	if err != nil {
		return err
	}
	a.WaitForConnections(ctx)
	elapsed := time.Since(start)

	r := restoreReport{Seconds: elapsed.Seconds(), Slots: *conc}
	if r.Slots == 0 {
		r.Slots = 16 // mcpclient's default
	}
	for _, s := range a.MCPServers().Servers {
		r.Total++
		if s.State == string(mcpclient.StateReady) {
			r.Ready++
		} else if r.Error == "" && s.Error != nil {
			r.Error = s.State + ": " + *s.Error
		}
	}
	if ctx.Err() != nil {
		r.Error = "timed out after 120s; " + r.Error
	}
	r.VmHWMKiB = vmHWM()
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelClose()
	a.Close(closeCtx)
	return json.NewEncoder(stdout).Encode(r)
}

// vmHWM returns the peak resident set size of this process, in KiB.
func vmHWM() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return -1
}
