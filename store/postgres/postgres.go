package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
	"github.com/agentmcp/agentmcp/store/internal/guard"
)

var (
	_ store.Store           = (*Store)(nil)
	_ store.KeepAwakeLister = (*Store)(nil)
	_ store.BatchPutter     = (*Store)(nil)
	_ store.WriteHealth     = (*Store)(nil)
)

// DefaultLockConns is the default of Options.LockConns.
const DefaultLockConns = 8

// Options configure a Store. The zero value of every field is usable.
type Options struct {
	// Cipher encrypts server options, the userinfo, query and fragment of
	// server URLs, and key-value values before they are written. Nil stores them in plaintext (marked as such, so a key
	// configured later still reads them).
	Cipher *store.Cipher
	// Now is the clock for timestamps and key-value expiry. Nil means
	// time.Now. Every process sharing the database should have a roughly
	// synchronised clock: expiry is judged by the clock of the reader.
	Now func() time.Time
	// LockConns caps the connections WithLock holds while its fn runs
	// (each lock holds one); more concurrent WithLock calls wait for one
	// to be free. They come from a pool of their own, so holders can
	// always use the Store inside fn. Zero means DefaultLockConns.
	LockConns int32
	// Timeout bounds each operation, from taking a connection to the
	// answer: one that has not finished by then (the server hangs, or the
	// network to it) fails with store.ErrUnavailable. For WithLock it
	// bounds the connection and the transaction's start, not the wait for
	// the lock nor fn. Zero means store.DefaultTimeout; negative means no
	// bound but the caller's ctx.
	Timeout time.Duration
	// Logger receives the writes the database refuses or does not answer,
	// at most one line every 10 seconds, and the first write that goes
	// through after them. Nil discards them.
	Logger *slog.Logger
	// ReadOnly opens the database for reading only: once the migrations
	// are applied, every session the Store opens is read-only
	// (default_transaction_read_only), so that every write fails. For a
	// program that reads agents another process owns.
	ReadOnly bool
}

// Store is a store.Store in a PostgreSQL database. See the package
// documentation.
type Store struct {
	cipher *store.Cipher
	now    codec.Clock
	g      *guard.Guard // deadlines, ErrUnavailable, refused writes

	pool  *pgxpool.Pool // every operation but WithLock
	locks *pgxpool.Pool // WithLock's transactions

	closed    atomic.Bool
	closeOnce sync.Once
}

// Open connects to the database named by dsn (a libpq connection string or
// postgres:// URL; pool settings such as pool_max_conns apply) and applies
// any pending migrations. opts may be nil.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LockConns <= 0 {
		o.LockConns = DefaultLockConns
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err) // pgx redacts the password
	}
	lockCfg := cfg.Copy()
	lockCfg.MaxConns = o.LockConns
	lockCfg.MinConns = 0

	s := &Store{cipher: o.Cipher, now: codec.NewClock(o.Now),
		g: guard.New(guard.Options{Timeout: o.Timeout, Logger: o.Logger, Unavailable: unavailable})}
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if err := applyMigrations(ctx, s.pool, migrations(), s.now()); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if o.ReadOnly {
		// The migrations need a session that writes; every later one
		// reads only.
		s.pool.Close()
		for _, c := range []*pgxpool.Config{cfg, lockCfg} {
			c.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
		}
		if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return nil, fmt.Errorf("postgres: open: %w", err)
		}
	}
	if s.locks, err = pgxpool.NewWithConfig(ctx, lockCfg); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	return s, nil
}

// Close closes the connection pools, waiting for connections in use to be
// returned. It is idempotent and safe to call concurrently.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.locks.Close()
		s.pool.Close()
	})
	return nil
}

// CloseIdle closes the store's database connections; those in use close
// when they are given back. Later operations open new ones. It is for
// measuring what a process holds beside its connections (a leak check).
func (s *Store) CloseIdle() {
	if s.closed.Load() {
		return
	}
	s.locks.Reset()
	s.pool.Reset()
}

const serverColumns = `id, name, url, callback_url, client_id, auth_url, options, keep_awake, created_at, updated_at`

// scanServer reads one row of serverColumns.
func (s *Store) scanServer(ns string, row pgx.Row) (store.Server, error) {
	srv := store.Server{Namespace: ns}
	var opts []byte
	if err := row.Scan(&srv.ID, &srv.Name, &srv.URL, &srv.CallbackURL, &srv.ClientID, &srv.AuthURL, &opts, &srv.KeepAwake, &srv.CreatedAt, &srv.UpdatedAt); err != nil {
		return srv, err
	}
	u, o, err := codec.OpenServer(s.cipher, ns, srv.URL, opts)
	if err != nil {
		return srv, fmt.Errorf("server %q: %w", srv.ID, err)
	}
	srv.URL, srv.Options = u, o
	srv.CreatedAt = srv.CreatedAt.UTC()
	srv.UpdatedAt = srv.UpdatedAt.UTC()
	return srv, nil
}

// ListServers implements store.Servers.
func (s *Store) ListServers(ctx context.Context, ns string) ([]store.Server, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	out, err := s.listServers(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("postgres: list servers of %q: %w", ns, s.g.Err(ctx, err))
	}
	return out, nil
}

func (s *Store) listServers(ctx context.Context, ns string) ([]store.Server, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+serverColumns+` FROM agentmcp_servers WHERE namespace = $1 ORDER BY seq`, ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.Server{}
	for rows.Next() {
		srv, err := s.scanServer(ns, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, srv)
	}
	return out, rows.Err()
}

// GetServer implements store.Servers.
func (s *Store) GetServer(ctx context.Context, ns, id string) (store.Server, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckScope(ns, id)
	var srv store.Server
	if err == nil {
		srv, err = s.scanServer(ns, s.pool.QueryRow(ctx, `SELECT `+serverColumns+` FROM agentmcp_servers WHERE namespace = $1 AND id = $2`, ns, id))
	}
	if err != nil {
		return store.Server{}, fmt.Errorf("postgres: get server %q of %q: %w", id, ns, s.g.Err(ctx, mapErr(err)))
	}
	return srv, nil
}

// PutServer implements store.Servers.
func (s *Store) PutServer(ctx context.Context, srv store.Server) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	if err := s.putServer(ctx, srv); err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put server %q of %q: %w", srv.ID, srv.Namespace, s.g.Err(ctx, mapErr(err))))
	}
	s.g.Wrote()
	return nil
}

func (s *Store) putServer(ctx context.Context, srv store.Server) error {
	if err := codec.CheckScope(srv.Namespace, srv.ID); err != nil {
		return err
	}
	urlColumn, opts, err := codec.SealServer(s.cipher, srv.Namespace, srv.URL, srv.Options)
	if err != nil {
		return err
	}
	now := s.now()
	return s.fenced(ctx, srv.Namespace, func(db execer) error {
		_, err := db.Exec(ctx, `
		INSERT INTO agentmcp_servers (namespace, id, name, url, callback_url, client_id, auth_url, options, keep_awake, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`+upsert,
			srv.Namespace, srv.ID, srv.Name, urlColumn, srv.CallbackURL, srv.ClientID, srv.AuthURL, opts, srv.KeepAwake, now)
		return err
	})
}

// upsert ends the INSERT of PutServer and PutServers: a row that exists is
// replaced but for its place (seq) and created_at.
const upsert = `
		ON CONFLICT (namespace, id) DO UPDATE SET
			name = excluded.name, url = excluded.url, callback_url = excluded.callback_url,
			client_id = excluded.client_id, auth_url = excluded.auth_url, options = excluded.options,
			keep_awake = excluded.keep_awake, updated_at = excluded.updated_at`

// batchRows is the number of rows PutServers writes per INSERT statement.
const batchRows = 5000

// analyzeRows is the size of a PutServers batch after which the table's
// statistics are refreshed.
const analyzeRows = 10_000

// PutServers implements store.BatchPutter: the rows are sealed first, then
// written in one transaction, batchRows at a time, each batch by one INSERT
// that reads its rows from arrays (unnest) in order. After a batch of
// 10,000 rows or more it runs ANALYZE on the table, so that the next
// queries are planned knowing its size and how few rows are keep-awake
// (without it, ListKeepAwake right after seeding 500,000 rows is a hundred
// times slower until autovacuum analyses the table); an ANALYZE that fails
// (the role does not own the table) is ignored.
func (s *Store) PutServers(ctx context.Context, servers []store.Server) error {
	// One transaction of any size: bounded by the caller's ctx only.
	if err := s.putServers(ctx, servers); err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put servers: %w", s.g.Err(ctx, mapErr(err))))
	}
	s.g.Wrote()
	if len(servers) >= analyzeRows {
		s.pool.Exec(ctx, `ANALYZE agentmcp_servers`)
	}
	return nil
}

func (s *Store) putServers(ctx context.Context, servers []store.Server) error {
	rows, err := codec.SealBatch(s.cipher, servers)
	if err != nil || len(rows) == 0 {
		return err
	}
	now := s.now()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if f, ok := store.FenceFrom(ctx); ok && slices.ContainsFunc(rows, func(r codec.SealedServer) bool { return r.Namespace == f.Namespace }) {
			if err := checkFence(ctx, tx, f); err != nil {
				return err
			}
		}
		for chunk := range slices.Chunk(rows, batchRows) {
			n := len(chunk)
			var text [7][]string // namespace, id, name, url, callback_url, client_id, auth_url
			for c := range text {
				text[c] = make([]string, n)
			}
			options, keepAwake := make([][]byte, n), make([]bool, n)
			for i, r := range chunk {
				for c, v := range [...]string{r.Namespace, r.ID, r.Name, r.URLColumn, r.CallbackURL, r.ClientID, r.AuthURL} {
					text[c][i] = v
				}
				options[i], keepAwake[i] = r.Options, r.KeepAwake
			}
			_, err := tx.Exec(ctx, `
				INSERT INTO agentmcp_servers (namespace, id, name, url, callback_url, client_id, auth_url, options, keep_awake, created_at, updated_at)
				SELECT namespace, id, name, url, callback_url, client_id, auth_url, options, keep_awake, $10, $10
				FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bytea[], $9::boolean[])
					WITH ORDINALITY AS r (namespace, id, name, url, callback_url, client_id, auth_url, options, keep_awake, ord)
				ORDER BY ord`+upsert,
				text[0], text[1], text[2], text[3], text[4], text[5], text[6], options, keepAwake, now)
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdateServer implements store.Servers. The row is locked (SELECT ... FOR
// UPDATE) from the read to the commit, so concurrent updaters, in any
// process, take turns. When fenced, the fence is checked (and the lease row
// share-locked) before the row is read, and fn is not called if the check
// fails.
func (s *Store) UpdateServer(ctx context.Context, ns, id string, fn func(*store.Server) error) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckScope(ns, id)
	if err == nil {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := checkFenceFor(ctx, tx, ns); err != nil {
				return err
			}
			srv, err := s.scanServer(ns, tx.QueryRow(ctx, `SELECT `+serverColumns+` FROM agentmcp_servers WHERE namespace = $1 AND id = $2 FOR UPDATE`, ns, id))
			if err != nil {
				return err
			}
			if err := fn(&srv); err != nil {
				return err
			}
			if srv.Namespace != ns || srv.ID != id {
				return codec.ErrIDChanged
			}
			urlColumn, opts, err := codec.SealServer(s.cipher, ns, srv.URL, srv.Options)
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `
				UPDATE agentmcp_servers SET name = $3, url = $4, callback_url = $5, client_id = $6, auth_url = $7, options = $8, keep_awake = $9, updated_at = $10
				WHERE namespace = $1 AND id = $2`,
				ns, id, srv.Name, urlColumn, srv.CallbackURL, srv.ClientID, srv.AuthURL, opts, srv.KeepAwake, s.now())
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: update server %q of %q: %w", id, ns, s.g.Err(ctx, mapErr(err))))
	}
	s.g.Wrote()
	return nil
}

// DeleteServer implements store.Servers in one statement (in a transaction
// after the fence check when fenced).
func (s *Store) DeleteServer(ctx context.Context, ns, id string) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckScope(ns, id)
	if err == nil {
		err = s.fenced(ctx, ns, func(db execer) error {
			_, err := db.Exec(ctx, `
				WITH kv AS (DELETE FROM agentmcp_kv WHERE namespace = $1 AND server_id = $2)
				DELETE FROM agentmcp_servers WHERE namespace = $1 AND id = $2`, ns, id)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: delete server %q of %q: %w", id, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// RenameServer implements store.Servers.
func (s *Store) RenameServer(ctx context.Context, ns, oldID, newID string) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := errors.Join(codec.CheckScope(ns, oldID), codec.CheckScope(ns, newID))
	if err == nil {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := checkFenceFor(ctx, tx, ns); err != nil {
				return err
			}
			var one int
			if err := tx.QueryRow(ctx, `SELECT 1 FROM agentmcp_servers WHERE namespace = $1 AND id = $2 FOR UPDATE`, ns, oldID).Scan(&one); err != nil {
				return err
			}
			if oldID == newID {
				return nil
			}
			switch err := tx.QueryRow(ctx, `SELECT 1 FROM agentmcp_servers WHERE namespace = $1 AND id = $2`, ns, newID).Scan(&one); {
			case err == nil:
				return store.ErrConflict
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
			// A concurrent insert of newID makes this fail with a unique
			// violation, reported as ErrConflict.
			if _, err := tx.Exec(ctx, `UPDATE agentmcp_servers SET id = $3, updated_at = $4 WHERE namespace = $1 AND id = $2`,
				ns, oldID, newID, s.now()); err != nil {
				return err
			}
			// Two statements: the parts of one statement run in no set
			// order, and the move must follow the delete.
			if _, err := tx.Exec(ctx, `DELETE FROM agentmcp_kv WHERE namespace = $1 AND server_id = $2`, ns, newID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE agentmcp_kv SET server_id = $3 WHERE namespace = $1 AND server_id = $2`, ns, oldID, newID); err != nil {
				return err
			}
			// The server's pinned tool definitions move with it, likewise.
			if _, err := tx.Exec(ctx, `DELETE FROM agentmcp_pins WHERE namespace = $1 AND server_id = $2`, ns, newID); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE agentmcp_pins SET server_id = $3 WHERE namespace = $1 AND server_id = $2`, ns, oldID, newID)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: rename server %q of %q to %q: %w", oldID, ns, newID, s.g.Err(ctx, mapErr(err))))
	}
	s.g.Wrote()
	return nil
}

// KVGet implements store.KV.
func (s *Store) KVGet(ctx context.Context, ns, serverID, key string) ([]byte, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckKey(ns, serverID, key, false)
	var stored []byte
	if err == nil {
		err = s.pool.QueryRow(ctx, `
			SELECT value FROM agentmcp_kv
			WHERE namespace = $1 AND server_id = $2 AND key = $3 AND (expires_at IS NULL OR expires_at > $4)`,
			ns, serverID, key, s.now()).Scan(&stored)
	}
	var v []byte
	if err == nil {
		v, err = codec.OpenValue(s.cipher, ns, key, stored)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get key of server %q of %q: %w", serverID, ns, s.g.Err(ctx, mapErr(err)))
	}
	return v, nil
}

// KVPut implements store.KV. The same statement deletes the server's other
// expired entries.
func (s *Store) KVPut(ctx context.Context, ns, serverID, key string, value []byte, expiresAt time.Time) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckKey(ns, serverID, key, false)
	if err == nil {
		var exp *time.Time
		if !expiresAt.IsZero() {
			e := codec.Expiry(expiresAt)
			exp = &e
		}
		err = s.write(ctx, `
			WITH sweep AS (
				DELETE FROM agentmcp_kv WHERE namespace = $1 AND server_id = $2 AND key <> $3 AND expires_at <= $6
			)
			INSERT INTO agentmcp_kv (namespace, server_id, key, value, expires_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (namespace, server_id, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
			ns, serverID, key, codec.SealValue(s.cipher, ns, key, value), exp, s.now())
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put key of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// KVDelete implements store.KV.
func (s *Store) KVDelete(ctx context.Context, ns, serverID, key string) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckKey(ns, serverID, key, false)
	if err == nil {
		err = s.write(ctx, `DELETE FROM agentmcp_kv WHERE namespace = $1 AND server_id = $2 AND key = $3`, ns, serverID, key)
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: delete key of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// KVTake implements store.KV with one DELETE ... RETURNING statement: of
// concurrent deleters of a row, the first one to lock it deletes it and
// the others find no row.
func (s *Store) KVTake(ctx context.Context, ns, serverID, key string) ([]byte, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckKey(ns, serverID, key, false)
	var stored []byte
	var exp *time.Time
	if err == nil {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { // see write
			return tx.QueryRow(ctx, `DELETE FROM agentmcp_kv WHERE namespace = $1 AND server_id = $2 AND key = $3 RETURNING value, expires_at`,
				ns, serverID, key).Scan(&stored, &exp)
		})
	}
	if err == nil && exp != nil && !exp.After(s.now()) {
		err = store.ErrNotFound // it had expired: deleted, but not taken
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, pgx.ErrNoRows) {
		return nil, s.g.Failed(fmt.Errorf("postgres: take key of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	var v []byte
	if err == nil {
		v, err = codec.OpenValue(s.cipher, ns, key, stored)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: take key of server %q of %q: %w", serverID, ns, mapErr(err))
	}
	return v, nil
}

// KVList implements store.KV.
func (s *Store) KVList(ctx context.Context, ns, serverID, prefix string) (map[string][]byte, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	out, err := s.kvList(ctx, ns, serverID, prefix)
	if err != nil {
		return nil, fmt.Errorf("postgres: list keys of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err))
	}
	return out, nil
}

func (s *Store) kvList(ctx context.Context, ns, serverID, prefix string) (map[string][]byte, error) {
	if err := codec.CheckKey(ns, serverID, prefix, true); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT key, value FROM agentmcp_kv
		WHERE namespace = $1 AND server_id = $2 AND starts_with(key, $3) AND (expires_at IS NULL OR expires_at > $4)`,
		ns, serverID, prefix, s.now())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var key string
		var stored []byte
		if err := rows.Scan(&key, &stored); err != nil {
			return nil, err
		}
		v, err := codec.OpenValue(s.cipher, ns, key, stored)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, rows.Err()
}

// WithLock implements store.Locker with a transaction-scoped advisory lock
// (pg_advisory_xact_lock) on a 64-bit hash of (ns, serverID, name): it
// excludes every caller using the database, in any process. The lock's
// transaction holds a connection of the lock pool (Options.LockConns) while
// fn runs and ends when fn returns; if that connection is lost (the server
// restarts, or kills it for idle_in_transaction_session_timeout), the lock
// is released while fn still runs.
func (s *Store) WithLock(ctx context.Context, ns, serverID, name string, fn func(ctx context.Context) error) error {
	if s.closed.Load() {
		return fmt.Errorf("postgres: lock %q of server %q of %q: store is closed", name, serverID, ns)
	}
	// The deadline bounds taking a connection and starting the
	// transaction; the wait for the lock is the caller's (another holder
	// may rightly hold it for longer).
	bctx, cancel := s.g.Bound(ctx)
	tx, err := s.locks.Begin(bctx)
	err = s.g.Err(bctx, err)
	cancel()
	if err == nil {
		_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, codec.LockID(ns, serverID, name))
		if err != nil {
			tx.Rollback(context.WithoutCancel(ctx))
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err() // a cancelled wait; pgx reports it less plainly
		} else {
			err = s.g.Err(ctx, err)
		}
		return fmt.Errorf("postgres: lock %q of server %q of %q: %w", name, serverID, ns, err)
	}
	// Rolling back ends the transaction and releases the lock, also when
	// fn panics.
	defer tx.Rollback(context.WithoutCancel(ctx))
	return fn(ctx)
}

// write runs the one statement sql in a transaction, as every write does
// (fenced, UpdateServer, ...): a statement sent on its own is committed
// when the server gets to it, even after the operation's deadline passed
// and its connection was closed (a server stopped, then resumed, runs what
// it had received), so a write the caller was told failed would happen
// later. In a transaction, only a COMMIT already sent can still land after
// the deadline. It costs two round trips more than the statement alone.
func (s *Store) write(ctx context.Context, sql string, args ...any) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	})
}

// unavailable reports whether err means the database cannot serve now:
// no connection (refused, reset, lost), the server shutting down, starting
// or out of resources (connections, disk), or in read-only mode.
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		c := pe.Code
		return strings.HasPrefix(c, "08") || // connection exception
			strings.HasPrefix(c, "53") || // insufficient resources: disk full, too many connections
			strings.HasPrefix(c, "57P") || // admin or crash shutdown, cannot connect now
			c == "57014" || // query cancelled
			c == "25006" || // read-only transaction (a standby)
			c == "58030" // I/O error
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}

// WriteHealth implements store.WriteHealth.
func (s *Store) WriteHealth() (failed uint64, refusing error) { return s.g.WriteHealth() }

// mapErr turns pgx.ErrNoRows into store.ErrNotFound and a unique violation
// into store.ErrConflict.
func mapErr(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	}
	return err
}
