package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

// envClusterKey is the default of --cluster-key.
const envClusterKey = "AGENTMCP_CLUSTER_KEY"

// clusterFlags are serve's replica flags.
type clusterFlags struct {
	on           bool
	addr, url    string
	key          string
	leaseTTL     time.Duration
	drainTimeout time.Duration
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.on, "cluster", false, "")
	fs.StringVar(&c.addr, "cluster-addr", "127.0.0.1:8788", "")
	fs.StringVar(&c.url, "cluster-url", "", "")
	fs.StringVar(&c.key, "cluster-key", "", "")
	fs.DurationVar(&c.leaseTTL, "lease-ttl", cluster.DefaultTTL, "")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", 30*time.Second, "")
}

// check validates the flags; dsn is --postgres.
func (c *clusterFlags) check(dsn string) error {
	if c.drainTimeout <= 0 {
		return usageErrorf("--drain-timeout %v: want a positive duration", c.drainTimeout)
	}
	if !c.on {
		return nil
	}
	if dsn == "" {
		return usageErrorf("--cluster needs --postgres: replicas share a PostgreSQL database")
	}
	if c.key == "" {
		c.key = os.Getenv(envClusterKey)
	}
	if len(c.key) < 16 {
		return usageErrorf("--cluster needs a shared key of 16 bytes or more in --cluster-key or %s (the same on every replica)", envClusterKey)
	}
	if _, _, err := net.SplitHostPort(c.addr); err != nil {
		return usageErrorf("--cluster-addr %q: want HOST:PORT", c.addr)
	}
	if c.url == "" {
		c.url = "http://" + c.addr
	}
	if _, err := parsePublicURL(c.url); err != nil {
		return usageErrorf("--cluster-url %q: want the http(s) URL other replicas reach this one's --cluster-addr at", c.url)
	}
	c.url = strings.TrimSuffix(c.url, "/")
	if c.leaseTTL < 3*time.Second {
		return usageErrorf("--lease-ttl %v: want 3s or more", c.leaseTTL)
	}
	return nil
}

// openServer is the server of a replica, set once it is open: what its
// OnUntrusted evicts agents from, its load, and what its exit checks.
type openServer struct{ p atomic.Pointer[server.Server] }

func (u *openServer) Store(s *server.Server) { u.p.Store(s) }

// Load returns the server, or nil before it is open.
func (u *openServer) Load() *server.Server { return u.p.Load() }

// join joins the cluster when --cluster is set (nil otherwise).
func (c *clusterFlags) join(ctx context.Context, st store.Store, logger *slog.Logger) (*cluster.Replica, *openServer, error) {
	u := &openServer{}
	if !c.on {
		return nil, u, nil
	}
	pg, ok := st.(*postgres.Store)
	if !ok {
		return nil, nil, errors.New("--cluster needs the PostgreSQL store")
	}
	r, err := cluster.Join(ctx, pg, &cluster.Options{
		URL:      c.url,
		Version:  mcpclient.Version,
		TTL:      c.leaseTTL,
		Interval: c.leaseTTL / 4,
		Margin:   c.leaseTTL / 4,
		Awake: func() int {
			if s := u.Load(); s != nil {
				return s.Host().Stats().Awake
			}
			return 0
		},
		OnUntrusted: func() {
			if s := u.Load(); s != nil {
				ectx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
				defer cancel()
				s.Host().Evict(ectx)
			}
		},
		Logger: logger,
	})
	return r, u, err
}

// listen serves srv's cluster listener on --cluster-addr.
func (c *clusterFlags) listen(srv *server.Server, logger *slog.Logger) (*http.Server, error) {
	l, err := net.Listen("tcp", c.addr)
	if err != nil {
		return nil, err
	}
	hs := srv.ClusterHTTPServer() // the public listener's connection limits
	hs.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	go hs.Serve(l)
	return hs, nil
}
