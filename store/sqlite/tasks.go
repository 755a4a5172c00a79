package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.TaskStore = (*Store)(nil)

// PutTask implements store.TaskStore.
func (s *Store) PutTask(ctx context.Context, t store.Task) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckTask(t.Namespace, t.ServerID, t.TaskID)
	if err == nil {
		var record []byte
		if record, err = codec.EncodeTask(t); err == nil {
			now := s.now().UnixMicro()
			_, err = s.w.ExecContext(ctx, `
				INSERT INTO tasks (namespace, server_id, task_id, record, seq, created_at, updated_at)
				VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks), ?, ?)
				ON CONFLICT (namespace, server_id, task_id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
				t.Namespace, t.ServerID, t.TaskID, string(record), now, now)
		}
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put task %q of %q/%q: %w", t.TaskID, t.Namespace, t.ServerID, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// ListTasks implements store.TaskStore.
func (s *Store) ListTasks(ctx context.Context, ns string) ([]store.Task, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	tasks, err := s.listTasks(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tasks of %q: %w", ns, s.g.Err(ctx, err))
	}
	return tasks, nil
}

func (s *Store) listTasks(ctx context.Context, ns string) ([]store.Task, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `
		SELECT server_id, task_id, record, created_at, updated_at FROM tasks
		WHERE namespace = ? ORDER BY seq`, ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tasks := []store.Task{}
	for rows.Next() {
		t := store.Task{Namespace: ns}
		var (
			record           string
			created, updated int64
		)
		if err := rows.Scan(&t.ServerID, &t.TaskID, &record, &created, &updated); err != nil {
			return nil, err
		}
		if err := codec.DecodeTask([]byte(record), &t); err != nil {
			return nil, err
		}
		t.CreatedAt, t.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
		tasks = append(tasks, t)
	}
	return tasks, rows.Err()
}

// DeleteTask implements store.TaskStore.
func (s *Store) DeleteTask(ctx context.Context, ns, serverID, taskID string) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckTask(ns, serverID, taskID)
	if err == nil {
		_, err = s.w.ExecContext(ctx, `DELETE FROM tasks WHERE namespace = ? AND server_id = ? AND task_id = ?`, ns, serverID, taskID)
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: delete task %q of %q/%q: %w", taskID, ns, serverID, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

var _ store.RunningTaskLister = (*Store)(nil)

// ListRunningTaskAgents implements store.RunningTaskLister.
func (s *Store) ListRunningTaskAgents(ctx context.Context) ([]string, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	out, err := s.namespaces(ctx, `
		SELECT DISTINCT namespace FROM tasks WHERE json_extract(record, '$.done') IS NULL ORDER BY namespace`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list agents with running tasks: %w", s.g.Err(ctx, err))
	}
	return out, nil
}
