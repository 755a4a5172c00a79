package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.AuditStore = (*Store)(nil)

// AppendAudit implements store.AuditStore, in one write transaction.
func (s *Store) AppendAudit(ctx context.Context, records []store.AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := s.appendAudit(ctx, records)
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: append %d audit records: %w", len(records), s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

func (s *Store) appendAudit(ctx context.Context, records []store.AuditRecord) error {
	// The record columns are encoded into one buffer made one string, and
	// each row's column is a part of it: one allocation a batch, not one
	// a row.
	ends := make([]int, len(records))
	var sealed [][]byte                      // by record; nil when no record keeps arguments
	buf := make([]byte, 0, 128*len(records)) // a call's record is about 100 bytes
	for i := range records {
		var args []byte
		var err error
		if buf, args, err = codec.AppendAuditRecord(buf, s.cipher, &records[i]); err != nil {
			return err
		}
		ends[i] = len(buf)
		if args != nil {
			if sealed == nil {
				sealed = make([][]byte, len(records))
			}
			sealed[i] = args
		}
	}
	text := string(buf)
	column := func(i int) string {
		if i == 0 {
			return text[:ends[0]]
		}
		return text[ends[i-1]:ends[i]]
	}
	// The rows of each agent in turn, in the order given (a batch is
	// usually one agent's).
	order := make([]int, len(records))
	mixed := false
	for i := range records {
		order[i] = i
		mixed = mixed || records[i].Namespace != records[0].Namespace
	}
	if mixed {
		slices.SortStableFunc(order, func(i, j int) int { return strings.Compare(records[i].Namespace, records[j].Namespace) })
	}
	stmts, err := s.audit.prepared(ctx, s.w) // outside the transaction: it holds the one write connection
	if err != nil {
		return err
	}
	// Each agent's records are numbered on from its last seq
	// (audit_seq), in this write transaction (appends from other
	// processes wait for it), then written by multi-row INSERTs
	// (auditChunks): a few statements per batch rather than one per row,
	// without the arguments column when no row of the statement keeps
	// arguments.
	return s.tx(ctx, func(tx *sql.Tx) error {
		args := make([]any, 0, 2+6*auditChunks[0])
		for rest := order; len(rest) > 0; {
			ns := records[rest[0]].Namespace
			n := 1
			for n < len(rest) && records[rest[n]].Namespace == ns {
				n++
			}
			group := rest[:n]
			rest = rest[n:]
			var last int64
			if err := tx.StmtContext(ctx, stmts.seq).QueryRowContext(ctx, ns, int64(len(group))).Scan(&last); err != nil {
				return err
			}
			seq := last - int64(len(group)) + 1
			var boxNS any = ns
			// A batch's rows mostly repeat their server, tool and
			// decision: each is boxed once while it repeats.
			var server, tool, decision string
			var boxServer, boxTool, boxDecision any
			for len(group) > 0 {
				n := auditChunks[0]
				for _, c := range auditChunks {
					if n = c; c <= len(group) {
						break
					}
				}
				chunk := group[:n]
				group = group[n:]
				withArgs := false
				for _, i := range chunk {
					withArgs = withArgs || sealed != nil && sealed[i] != nil
				}
				args = append(args[:0], boxNS, seq)
				for _, i := range chunk {
					r := &records[i]
					if boxServer == nil || r.ServerID != server {
						server, boxServer = r.ServerID, r.ServerID
					}
					if boxTool == nil || r.Tool != tool {
						tool, boxTool = r.Tool, r.Tool
					}
					if boxDecision == nil || r.Decision != decision {
						decision, boxDecision = r.Decision, r.Decision
					}
					args = append(args, r.Time.UnixMicro(), boxServer, boxTool, boxDecision, column(i))
					if withArgs {
						args = append(args, sealed[i])
					}
				}
				seq += int64(n)
				if _, err := tx.StmtContext(ctx, stmts.insert[auditShape{n, withArgs}]).ExecContext(ctx, args...); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// auditChunks are the row counts of AppendAudit's INSERTs, largest
// first: a batch is written by as many of the largest as fit, then the
// smaller ones, each statement prepared once per Store.
var auditChunks = [...]int{256, 64, 16, 4, 1}

// auditShape is the shape of one of AppendAudit's INSERTs: its rows, and
// whether it writes their arguments column (NULL otherwise).
type auditShape struct {
	rows int
	args bool
}

// auditStmts are AppendAudit's prepared statements.
type auditStmts struct {
	mu sync.Mutex
	p  *auditPrepared // nil until prepared; never changed after
}

// auditPrepared are the statements of auditStmts.
type auditPrepared struct {
	seq    *sql.Stmt                // gives an agent's next seqs
	insert map[auditShape]*sql.Stmt // the INSERTs of auditChunks rows, by shape
}

// prepared returns AppendAudit's statements, prepared on db the first
// time.
func (a *auditStmts) prepared(ctx context.Context, db *sql.DB) (*auditPrepared, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.p != nil {
		return a.p, nil
	}
	p := &auditPrepared{insert: map[auditShape]*sql.Stmt{}}
	fail := func(err error) (*auditPrepared, error) {
		for _, st := range p.insert {
			st.Close()
		}
		if p.seq != nil {
			p.seq.Close()
		}
		return nil, err
	}
	var err error
	if p.seq, err = db.PrepareContext(ctx, `
		INSERT INTO audit_seq (namespace, last) VALUES (?, ?)
		ON CONFLICT (namespace) DO UPDATE SET last = last + excluded.last
		RETURNING last`); err != nil {
		return fail(err)
	}
	for _, n := range auditChunks {
		for _, args := range []bool{false, true} {
			st, err := db.PrepareContext(ctx, auditInsert(n, args))
			if err != nil {
				return fail(err)
			}
			p.insert[auditShape{n, args}] = st
		}
	}
	a.p = p
	return p, nil
}

// auditInsert returns the INSERT statement of n audit rows of one agent,
// with their arguments column or without (NULL). Its parameters are the
// agent's namespace (?1, bound once) and its first row's seq (?2, the
// others following it), then each row's other columns.
func auditInsert(n int, args bool) string {
	var b strings.Builder
	cols := ", ?, ?, ?, ?, ?)"
	b.WriteString(`INSERT INTO audit (namespace, seq, at, server_id, tool, decision, record`)
	if args {
		b.WriteString(`, arguments`)
		cols = ", ?, ?, ?, ?, ?, ?)"
	}
	b.WriteString(`) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == 0 {
			b.WriteString("(?1, ?2")
		} else {
			fmt.Fprintf(&b, "(?1, ?2 + %d", i)
		}
		b.WriteString(cols)
	}
	return b.String()
}

// QueryAudit implements store.AuditStore.
func (s *Store) QueryAudit(ctx context.Context, ns string, q store.AuditQuery) ([]store.AuditRecord, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	list, err := s.queryAudit(ctx, ns, q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query the audit log of %q: %w", ns, s.g.Err(ctx, err))
	}
	return list, nil
}

func (s *Store) queryAudit(ctx context.Context, ns string, q store.AuditQuery) ([]store.AuditRecord, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	where, order, args := codec.AuditWhere(ns, q, func(t time.Time) any { return t.UnixMicro() }, func(int) string { return "?" })
	rows, err := s.r.QueryContext(ctx, `SELECT seq, at, server_id, tool, decision, record, arguments FROM audit WHERE `+where+
		` ORDER BY `+order+fmt.Sprintf(` LIMIT %d`, codec.AuditLimit(q)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []store.AuditRecord{}
	for rows.Next() {
		r := store.AuditRecord{Namespace: ns}
		var at int64
		var record string
		var sealed []byte
		if err := rows.Scan(&r.Seq, &at, &r.ServerID, &r.Tool, &r.Decision, &record, &sealed); err != nil {
			return nil, err
		}
		r.Time = time.UnixMicro(at).UTC()
		if err := codec.DecodeAudit(s.cipher, []byte(record), sealed, &r); err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// PruneAudit implements store.AuditStore, in one write transaction.
func (s *Store) PruneAudit(ctx context.Context, ns string, keep int, before time.Time) (int64, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var n int64
	err := codec.CheckNamespace(ns)
	if err == nil {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			if !before.IsZero() {
				res, err := tx.ExecContext(ctx, `DELETE FROM audit WHERE namespace = ? AND at < ?`, ns, before.UnixMicro())
				if err != nil {
					return err
				}
				d, _ := res.RowsAffected()
				n += d
			}
			if keep > 0 {
				// seq has no gaps but at the oldest end: the newest keep
				// are those above the last seq minus keep.
				res, err := tx.ExecContext(ctx, `DELETE FROM audit WHERE namespace = ? AND seq <= (
					SELECT MAX(seq) FROM audit WHERE namespace = ?) - ?`, ns, ns, keep)
				if err != nil {
					return err
				}
				d, _ := res.RowsAffected()
				n += d
			}
			return nil
		})
	}
	if err != nil {
		return 0, s.g.Failed(fmt.Errorf("sqlite: prune the audit log of %q: %w", ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return n, nil
}
