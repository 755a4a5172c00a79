package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

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

// Memory is the path that opens a private in-memory database.
const Memory = ":memory:"

// Defaults of Options.
const (
	DefaultBusyTimeout = 10 * time.Second
	DefaultMaxReaders  = 4
)

// Options configure a Store. The zero value of every field is usable.
type Options struct {
	// Cipher encrypts server options, the userinfo, query and fragment of
	// server URLs, and key-value values before they are written. Nil stores them in plaintext (marked as such, so a key
	// configured later still reads them).
	Cipher *store.Cipher
	// Now is the clock for timestamps and key-value expiry. Nil means
	// time.Now.
	Now func() time.Time
	// BusyTimeout is how long a write waits while another process holds
	// the database's write lock. Zero means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxReaders caps the connections used for reads, which run in
	// parallel with the single write connection. Zero means
	// DefaultMaxReaders.
	MaxReaders int
	// Timeout bounds each operation, the wait for the write lock
	// (BusyTimeout) included: one that has not finished by then fails
	// with store.ErrUnavailable and changes nothing. Zero means
	// store.DefaultTimeout; negative means no bound but the caller's ctx.
	Timeout time.Duration
	// Logger receives the writes the database refuses (disk full,
	// read-only file system), at most one line every 10 seconds, and the
	// first write that goes through after them. Nil discards them.
	Logger *slog.Logger
	// ReadOnly opens an existing database to read it beside the process
	// that owns it (agentmcp serve, holding LockFileAs): the file is not
	// created (a missing one is an error wrapping fs.ErrNotExist), not
	// switched to WAL, not migrated (one with migrations pending is an
	// error), and every connection is query_only, so that every write
	// fails with store.ErrUnavailable, without taking the database's
	// write lock. False opens it to read and write.
	ReadOnly bool
}

// Store is a store.Store in one SQLite database. See the package
// documentation.
type Store struct {
	cipher *store.Cipher
	now    codec.Clock
	g      *guard.Guard // deadlines, ErrUnavailable, refused writes

	w *sql.DB // the one write connection; every transaction runs here
	r *sql.DB // read connections (query_only); w itself for Memory

	locks  lockTable
	closed atomic.Bool

	closeOnce sync.Once
	closeErr  error

	audit auditStmts // the audit log's prepared INSERTs (audit.go)
}

// Open opens (creating if needed) the SQLite database at path, sets it to
// WAL mode, and applies any pending migrations. path is a file name, or
// Memory for a private in-memory database that lives until Close on a
// single connection (for tests; two Opens of Memory are two databases).
// opts may be nil.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.MaxReaders <= 0 {
		o.MaxReaders = DefaultMaxReaders
	}
	s := &Store{cipher: o.Cipher, now: codec.NewClock(o.Now),
		g: guard.New(guard.Options{Timeout: o.Timeout, Logger: o.Logger, Unavailable: unavailable})}
	s.locks.init()

	memory := path == Memory
	name := path
	if !memory {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		name = abs
		if o.ReadOnly {
			if _, err := os.Stat(name); err != nil {
				return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
			}
		} else if err := create(name); err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
	}

	w, err := sql.Open("sqlite", dsn(name, memory, o.ReadOnly, o.BusyTimeout))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// One connection: writes queue in Go instead of spinning on SQLite's
	// busy handler, and a Memory database is kept alive by it.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s.w, s.r = w, w
	setup := s.setup
	if o.ReadOnly {
		setup = s.checkSetup
	}
	if err := setup(ctx, memory, o.BusyTimeout); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if !memory {
		r, err := sql.Open("sqlite", dsn(name, false, true, o.BusyTimeout))
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		r.SetMaxOpenConns(o.MaxReaders)
		r.SetMaxIdleConns(o.MaxReaders)
		s.r = r
	}
	return s, nil
}

// create creates an empty database file readable by its owner only, if
// there is none: it will hold tokens. SQLite gives the WAL and shared-memory
// files the mode of the database file. An existing file keeps its mode.
func create(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// dsn returns the driver's data source name for the database file name.
// Every connection gets the busy timeout, foreign keys, synchronous=FULL
// and a 256 KiB page cache
// (with WAL, which setup turns on, a commit is on disk when it returns).
// The writer starts every transaction with BEGIN IMMEDIATE, so it never has
// to upgrade a read lock (which can fail with SQLITE_BUSY instead of
// waiting); readers are query_only.
func dsn(name string, memory, reader bool, busy time.Duration) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", "FULL")
	// A page cache of 256 KiB per connection (SQLite's default is 2,000
	// KiB): the rows are small and the OS caches the file too, and a
	// process holding many hibernated agents keeps less (make bench,
	// hibernated_agent_bytes_cold: 2,142 -> 1,184 bytes per agent).
	q.Add("_pragma", "cache_size(-256)")
	if reader {
		q.Set("_query_only", "1")
	} else {
		q.Set("_txlock", "immediate")
	}
	if memory {
		return Memory + "?" + q.Encode()
	}
	return "file:" + (&url.URL{Path: name}).EscapedPath() + "?" + q.Encode()
}

// setup switches the database to WAL mode and migrates it.
func (s *Store) setup(ctx context.Context, memory bool, busy time.Duration) error {
	if !memory {
		if err := s.enableWAL(ctx, busy); err != nil {
			return err
		}
	}
	return applyMigrations(ctx, s.w, migrations(), s.now().UnixMicro())
}

// checkSetup is setup for a read-only Store: it changes nothing, and fails
// unless the database is migrated.
func (s *Store) checkSetup(ctx context.Context, memory bool, busy time.Duration) error {
	return checkMigrations(ctx, s.w, migrations())
}

// enableWAL switches the database to WAL mode, which is persistent: a new
// database is converted once. The switch needs an exclusive lock, and when
// other processes are opening the same new file at once SQLite may report
// SQLITE_BUSY without waiting (its busy handler is not called when waiting
// could deadlock), so the switch is retried, with backoff, for up to busy.
func (s *Store) enableWAL(ctx context.Context, busy time.Duration) error {
	deadline := time.Now().Add(busy)
	delay := time.Millisecond
	for {
		var mode string
		err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		if err == nil {
			if mode != "wal" {
				return fmt.Errorf("journal mode is %q, not WAL (is the file on a network file system?)", mode)
			}
			return nil
		}
		var se *sqlite.Error
		if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().Add(delay).After(deadline) {
			return fmt.Errorf("enable WAL: %w", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("enable WAL: %w", ctx.Err())
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// Close closes the database. It is idempotent and safe to call
// concurrently.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		var errR error
		if s.r != s.w {
			errR = s.r.Close()
		}
		if err := errors.Join(errR, s.w.Close()); err != nil {
			s.closeErr = fmt.Errorf("sqlite: close: %w", err)
		}
	})
	return s.closeErr
}

const serverColumns = `id, name, url, callback_url, client_id, auth_url, options, keep_awake, created_at, updated_at`

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanServer reads one row of serverColumns.
func (s *Store) scanServer(ns string, row scanner) (store.Server, error) {
	srv := store.Server{Namespace: ns}
	var opts []byte
	var created, updated int64
	if err := row.Scan(&srv.ID, &srv.Name, &srv.URL, &srv.CallbackURL, &srv.ClientID, &srv.AuthURL, &opts, &srv.KeepAwake, &created, &updated); err != nil {
		return srv, err
	}
	u, o, err := codec.OpenServer(s.cipher, ns, srv.URL, opts)
	if err != nil {
		return srv, fmt.Errorf("server %q: %w", srv.ID, err)
	}
	srv.URL, srv.Options = u, o
	srv.CreatedAt = time.UnixMicro(created).UTC()
	srv.UpdatedAt = time.UnixMicro(updated).UTC()
	return srv, nil
}

// ListServers implements store.Servers.
func (s *Store) ListServers(ctx context.Context, ns string) ([]store.Server, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	out, err := s.listServers(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list servers of %q: %w", ns, s.g.Err(ctx, err))
	}
	return out, nil
}

func (s *Store) listServers(ctx context.Context, ns string) ([]store.Server, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+serverColumns+` FROM servers WHERE namespace = ? ORDER BY seq`, ns)
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
	if err := codec.CheckScope(ns, id); err != nil {
		return store.Server{}, fmt.Errorf("sqlite: get server %q of %q: %w", id, ns, err)
	}
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	row := s.r.QueryRowContext(ctx, `SELECT `+serverColumns+` FROM servers WHERE namespace = ? AND id = ?`, ns, id)
	srv, err := s.scanServer(ns, row)
	if err != nil {
		return store.Server{}, fmt.Errorf("sqlite: get server %q of %q: %w", id, ns, s.g.Err(ctx, notFound(err)))
	}
	return srv, nil
}

// PutServer implements store.Servers.
func (s *Store) PutServer(ctx context.Context, srv store.Server) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	if err := s.putServer(ctx, srv); err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put server %q of %q: %w", srv.ID, srv.Namespace, s.g.Err(ctx, err)))
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
	now := s.now().UnixMicro()
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO servers (namespace, id, name, url, callback_url, client_id, auth_url, options, keep_awake, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`+upsert,
		srv.Namespace, srv.ID, srv.Name, urlColumn, srv.CallbackURL, srv.ClientID, srv.AuthURL, opts, srv.KeepAwake, now, now)
	return err
}

// upsert ends the INSERT of PutServer and PutServers: a row that exists is
// replaced but for its place (seq) and created_at.
const upsert = `
		ON CONFLICT (namespace, id) DO UPDATE SET
			name = excluded.name, url = excluded.url, callback_url = excluded.callback_url,
			client_id = excluded.client_id, auth_url = excluded.auth_url, options = excluded.options,
			keep_awake = excluded.keep_awake, updated_at = excluded.updated_at`

// batchRows is the number of rows PutServers writes per INSERT statement:
// 9 parameters each, well below SQLite's limit of 32766 per statement.
const batchRows = 500

// PutServers implements store.BatchPutter: the rows are sealed first, then
// written in one write transaction by multi-row INSERT statements.
func (s *Store) PutServers(ctx context.Context, servers []store.Server) error {
	// One transaction of any size: bounded by the caller's ctx only.
	if err := s.putServers(ctx, servers); err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put servers: %w", s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

func (s *Store) putServers(ctx context.Context, servers []store.Server) error {
	rows, err := codec.SealBatch(s.cipher, servers)
	if err != nil || len(rows) == 0 {
		return err
	}
	now := s.now().UnixMicro()
	return s.tx(ctx, func(tx *sql.Tx) error {
		var stmt *sql.Stmt // for full chunks, prepared once
		defer func() {
			if stmt != nil {
				stmt.Close()
			}
		}()
		args := make([]any, 0, 9*batchRows)
		for chunk := range slices.Chunk(rows, batchRows) {
			args = args[:0]
			for _, r := range chunk {
				args = append(args, r.Namespace, r.ID, r.Name, r.URLColumn, r.CallbackURL, r.ClientID, r.AuthURL, r.Options, r.KeepAwake)
			}
			var err error
			switch {
			case len(chunk) < batchRows:
				_, err = tx.ExecContext(ctx, batchInsert(len(chunk), now), args...)
			case stmt == nil:
				if stmt, err = tx.PrepareContext(ctx, batchInsert(batchRows, now)); err != nil {
					return err
				}
				fallthrough
			default:
				_, err = stmt.ExecContext(ctx, args...)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// batchInsert returns the INSERT statement of n rows of PutServers, all
// with the timestamp now.
func batchInsert(n int, now int64) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO servers (namespace, id, name, url, callback_url, client_id, auth_url, options, keep_awake, created_at, updated_at) VALUES `)
	row := fmt.Sprintf("(?, ?, ?, ?, ?, ?, ?, ?, ?, %d, %d)", now, now)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	b.WriteString(upsert)
	return b.String()
}

// UpdateServer implements store.Servers.
func (s *Store) UpdateServer(ctx context.Context, ns, id string, fn func(*store.Server) error) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckScope(ns, id)
	if err == nil {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			row := tx.QueryRowContext(ctx, `SELECT `+serverColumns+` FROM servers WHERE namespace = ? AND id = ?`, ns, id)
			srv, err := s.scanServer(ns, row)
			if err != nil {
				return notFound(err)
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
			_, err = tx.ExecContext(ctx, `
			UPDATE servers SET name = ?, url = ?, callback_url = ?, client_id = ?, auth_url = ?, options = ?, keep_awake = ?, updated_at = ?
			WHERE namespace = ? AND id = ?`,
				srv.Name, urlColumn, srv.CallbackURL, srv.ClientID, srv.AuthURL, opts, srv.KeepAwake, s.now().UnixMicro(), ns, id)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: update server %q of %q: %w", id, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// DeleteServer implements store.Servers.
func (s *Store) DeleteServer(ctx context.Context, ns, id string) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckScope(ns, id)
	if err == nil {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `DELETE FROM servers WHERE namespace = ? AND id = ?`, ns, id); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE namespace = ? AND server_id = ?`, ns, id)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: delete server %q of %q: %w", id, ns, s.g.Err(ctx, err)))
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
		err = s.tx(ctx, func(tx *sql.Tx) error {
			const exists = `SELECT 1 FROM servers WHERE namespace = ? AND id = ?`
			var one int
			if err := tx.QueryRowContext(ctx, exists, ns, oldID).Scan(&one); err != nil {
				return notFound(err)
			}
			if oldID == newID {
				return nil
			}
			switch err := tx.QueryRowContext(ctx, exists, ns, newID).Scan(&one); {
			case err == nil:
				return store.ErrConflict
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE servers SET id = ?, updated_at = ? WHERE namespace = ? AND id = ?`,
				newID, s.now().UnixMicro(), ns, oldID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE namespace = ? AND server_id = ?`, ns, newID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE kv SET server_id = ? WHERE namespace = ? AND server_id = ?`, newID, ns, oldID); err != nil {
				return err
			}
			// The server's pinned tool definitions move with it, likewise.
			if _, err := tx.ExecContext(ctx, `DELETE FROM pins WHERE namespace = ? AND server_id = ?`, ns, newID); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE pins SET server_id = ? WHERE namespace = ? AND server_id = ?`, newID, ns, oldID)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: rename server %q of %q to %q: %w", oldID, ns, newID, s.g.Err(ctx, notFound(err))))
	}
	s.g.Wrote()
	return nil
}

// KVGet implements store.KV.
func (s *Store) KVGet(ctx context.Context, ns, serverID, key string) ([]byte, error) {
	if err := codec.CheckKey(ns, serverID, key, false); err != nil {
		return nil, fmt.Errorf("sqlite: get key of server %q of %q: %w", serverID, ns, err)
	}
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var stored []byte
	err := s.r.QueryRowContext(ctx, `
		SELECT value FROM kv WHERE namespace = ? AND server_id = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)`,
		ns, serverID, key, s.now().UnixMicro()).Scan(&stored)
	if err != nil {
		return nil, fmt.Errorf("sqlite: get key of server %q of %q: %w", serverID, ns, s.g.Err(ctx, notFound(err)))
	}
	v, err := codec.OpenValue(s.cipher, ns, key, stored)
	if err != nil {
		return nil, fmt.Errorf("sqlite: get key of server %q of %q: %w", serverID, ns, err)
	}
	return v, nil
}

// KVPut implements store.KV. It also deletes the server's expired entries.
func (s *Store) KVPut(ctx context.Context, ns, serverID, key string, value []byte, expiresAt time.Time) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckKey(ns, serverID, key, false)
	if err == nil {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			now := s.now().UnixMicro()
			if _, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE namespace = ? AND server_id = ? AND expires_at <= ?`,
				ns, serverID, now); err != nil {
				return err
			}
			var exp sql.NullInt64
			if !expiresAt.IsZero() {
				exp = sql.NullInt64{Int64: codec.Expiry(expiresAt).UnixMicro(), Valid: true}
			}
			_, err := tx.ExecContext(ctx, `
			INSERT INTO kv (namespace, server_id, key, value, expires_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (namespace, server_id, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
				ns, serverID, key, codec.SealValue(s.cipher, ns, key, value), exp)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put key of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// KVDelete implements store.KV.
func (s *Store) KVDelete(ctx context.Context, ns, serverID, key string) error {
	if err := codec.CheckKey(ns, serverID, key, false); err != nil {
		return fmt.Errorf("sqlite: delete key of server %q of %q: %w", serverID, ns, err)
	}
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	if _, err := s.w.ExecContext(ctx, `DELETE FROM kv WHERE namespace = ? AND server_id = ? AND key = ?`, ns, serverID, key); err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: delete key of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// KVTake implements store.KV with one DELETE ... RETURNING statement.
func (s *Store) KVTake(ctx context.Context, ns, serverID, key string) ([]byte, error) {
	if err := codec.CheckKey(ns, serverID, key, false); err != nil {
		return nil, fmt.Errorf("sqlite: take key of server %q of %q: %w", serverID, ns, err)
	}
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var stored []byte
	var exp sql.NullInt64
	err := s.w.QueryRowContext(ctx, `DELETE FROM kv WHERE namespace = ? AND server_id = ? AND key = ? RETURNING value, expires_at`,
		ns, serverID, key).Scan(&stored, &exp)
	if err == nil && exp.Valid && exp.Int64 <= s.now().UnixMicro() {
		err = store.ErrNotFound // it had expired: deleted, but not taken
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, sql.ErrNoRows) {
		return nil, s.g.Failed(fmt.Errorf("sqlite: take key of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	if err != nil {
		return nil, fmt.Errorf("sqlite: take key of server %q of %q: %w", serverID, ns, notFound(err))
	}
	v, err := codec.OpenValue(s.cipher, ns, key, stored)
	if err != nil {
		return nil, fmt.Errorf("sqlite: take key of server %q of %q: %w", serverID, ns, err)
	}
	return v, nil
}

// KVList implements store.KV.
func (s *Store) KVList(ctx context.Context, ns, serverID, prefix string) (map[string][]byte, error) {
	if err := codec.CheckKey(ns, serverID, prefix, true); err != nil {
		return nil, fmt.Errorf("sqlite: list keys of server %q of %q: %w", serverID, ns, err)
	}
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	rows, err := s.r.QueryContext(ctx, `
		SELECT key, value FROM kv
		WHERE namespace = ?1 AND server_id = ?2 AND substr(key, 1, length(?3)) = ?3 AND (expires_at IS NULL OR expires_at > ?4)`,
		ns, serverID, prefix, s.now().UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("sqlite: list keys of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err))
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var key string
		var stored []byte
		if err := rows.Scan(&key, &stored); err != nil {
			return nil, fmt.Errorf("sqlite: list keys of server %q of %q: %w", serverID, ns, err)
		}
		v, err := codec.OpenValue(s.cipher, ns, key, stored)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list keys of server %q of %q: %w", serverID, ns, err)
		}
		out[key] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list keys of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err))
	}
	return out, nil
}

// WithLock implements store.Locker with a lock table in this Store: it
// excludes the callers of this Store only, not other processes or other
// Stores on the same file.
func (s *Store) WithLock(ctx context.Context, ns, serverID, name string, fn func(ctx context.Context) error) error {
	if s.closed.Load() {
		return fmt.Errorf("sqlite: lock %q of server %q of %q: store is closed", name, serverID, ns)
	}
	release, err := s.locks.acquire(ctx, codec.LockName(ns, serverID, name))
	if err != nil {
		return fmt.Errorf("sqlite: lock %q of server %q of %q: %w", name, serverID, ns, err)
	}
	defer release()
	return fn(ctx)
}

// tx runs fn in a write transaction (BEGIN IMMEDIATE) and commits it if fn
// returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit, a no-op
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// notFound turns sql.ErrNoRows into store.ErrNotFound and a unique
// constraint violation into store.ErrConflict.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	}
	return err
}

// unavailable reports whether err means the database cannot serve now:
// busy or locked past the busy timeout, full, read-only, or failing I/O.
func unavailable(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM:
		return true
	}
	return false
}

// WriteHealth implements store.WriteHealth.
func (s *Store) WriteHealth() (failed uint64, refusing error) { return s.g.WriteHealth() }

// lockTable holds the named locks of WithLock.
type lockTable struct {
	mu sync.Mutex
	// locks holds an entry while the lock is held or waited for. A lock is
	// held by whoever put the token in sem.
	locks map[string]*lockEntry
}

type lockEntry struct {
	sem  chan struct{} // capacity 1
	refs int           // holder and waiters; guarded by lockTable.mu
}

func (lt *lockTable) init() { lt.locks = map[string]*lockEntry{} }

// acquire waits for the lock called name, or for ctx to end.
func (lt *lockTable) acquire(ctx context.Context, name string) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lt.mu.Lock()
	e := lt.locks[name]
	if e == nil {
		e = &lockEntry{sem: make(chan struct{}, 1)}
		lt.locks[name] = e
	}
	e.refs++
	lt.mu.Unlock()

	select {
	case e.sem <- struct{}{}:
		return func() {
			<-e.sem
			lt.unref(name, e)
		}, nil
	case <-ctx.Done():
		lt.unref(name, e)
		return nil, ctx.Err()
	}
}

func (lt *lockTable) unref(name string, e *lockEntry) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		delete(lt.locks, name)
	}
}
