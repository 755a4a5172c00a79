package postgres

import (
	"context"
	"fmt"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.TaskStore = (*Store)(nil)

// PutTask implements store.TaskStore, fenced as the server writes are.
func (s *Store) PutTask(ctx context.Context, t store.Task) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckTask(t.Namespace, t.ServerID, t.TaskID)
	if err == nil {
		err = s.fenced(ctx, t.Namespace, func(db execer) error {
			record, err := codec.EncodeTask(t)
			if err != nil {
				return err
			}
			now := s.now()
			_, err = db.Exec(ctx, `
				INSERT INTO agentmcp_tasks (namespace, server_id, task_id, record, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $5)
				ON CONFLICT (namespace, server_id, task_id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
				t.Namespace, t.ServerID, t.TaskID, string(record), now)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put task %q of %q/%q: %w", t.TaskID, t.Namespace, t.ServerID, s.g.Err(ctx, err)))
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
		return nil, fmt.Errorf("postgres: list tasks of %q: %w", ns, s.g.Err(ctx, err))
	}
	return tasks, nil
}

func (s *Store) listTasks(ctx context.Context, ns string) ([]store.Task, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT server_id, task_id, record, created_at, updated_at FROM agentmcp_tasks
		WHERE namespace = $1 ORDER BY seq`, ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tasks := []store.Task{}
	for rows.Next() {
		t := store.Task{Namespace: ns}
		var record string
		if err := rows.Scan(&t.ServerID, &t.TaskID, &record, &t.CreatedAt, &t.UpdatedAt); err != nil {
			return nil, err
		}
		if err := codec.DecodeTask([]byte(record), &t); err != nil {
			return nil, err
		}
		t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
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
		err = s.fenced(ctx, ns, func(db execer) error {
			_, err := db.Exec(ctx, `DELETE FROM agentmcp_tasks WHERE namespace = $1 AND server_id = $2 AND task_id = $3`, ns, serverID, taskID)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: delete task %q of %q/%q: %w", taskID, ns, serverID, s.g.Err(ctx, err)))
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
		SELECT DISTINCT namespace FROM agentmcp_tasks WHERE (record::jsonb ->> 'done') IS NULL ORDER BY namespace`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list agents with running tasks: %w", s.g.Err(ctx, err))
	}
	return out, nil
}
