package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmcp/agentmcp/store"
)

// testTasks checks TaskStore: tasks listed in the order first stored,
// per namespace, replaced by a put of the same key (keeping their place
// and CreatedAt), deleted, kept across a reopen, and invalid keys refused.
func testTasks(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	if _, ok := s.(store.TaskStore); !ok {
		t.Skip("the backend keeps no tasks")
	}
	c := ctx(t)
	list := func(s store.Store, ns string) []store.Task {
		t.Helper()
		tasks, err := s.(store.TaskStore).ListTasks(c, ns)
		if err != nil {
			t.Fatalf("ListTasks(%q): %v", ns, err)
		}
		return tasks
	}
	put := func(s store.Store, task store.Task) {
		t.Helper()
		if err := s.(store.TaskStore).PutTask(c, task); err != nil {
			t.Fatalf("PutTask(%+v): %v", task, err)
		}
	}
	if got := list(s, ns); got == nil || len(got) != 0 {
		t.Fatalf("ListTasks of an agent without tasks = %#v, want an empty slice", got)
	}
	created := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	first := store.Task{
		Namespace: ns, ServerID: "a", TaskID: "t1", Tool: "research", Protocol: "2025-11-25",
		ArgumentsHash: "ab12", Correlation: "call-7", Status: "working", StatusMessage: "Gathering sources...",
		TTLMS: 300000, PollIntervalMS: 1000, ServerCreatedAt: created,
	}
	second := store.Task{Namespace: ns, ServerID: "b", TaskID: "t1", Tool: "work", Status: "working"}
	put(s, first)
	put(s, second)
	put(s, store.Task{Namespace: "other/ns", ServerID: "a", TaskID: "t9", Tool: "x"})

	done := first
	done.Status, done.StatusMessage, done.Done = "completed", "", true
	done.Result = json.RawMessage(`{"content":[{"type":"text","text":"report"}]}`)
	put(s, done)

	ignore := cmpopts.IgnoreFields(store.Task{}, "CreatedAt", "UpdatedAt")
	got := list(s, ns)
	if diff := cmp.Diff([]store.Task{done, second}, got, ignore); diff != "" {
		t.Fatalf("tasks after replacing the first (-want +got):\n%s", diff)
	}
	if got[0].CreatedAt.IsZero() || got[0].UpdatedAt.Before(got[0].CreatedAt) {
		t.Errorf("timestamps %v %v", got[0].CreatedAt, got[0].UpdatedAt)
	}
	if others := list(s, "other/ns"); len(others) != 1 || others[0].TaskID != "t9" {
		t.Errorf("tasks of another agent: %+v", others)
	}

	if err := s.(store.TaskStore).DeleteTask(c, ns, "b", "t1"); err != nil {
		t.Fatal(err)
	}
	if err := s.(store.TaskStore).DeleteTask(c, ns, "b", "unknown"); err != nil {
		t.Errorf("DeleteTask of an unknown task: %v", err)
	}
	for _, bad := range []store.Task{
		{Namespace: ns, ServerID: "a"},
		{Namespace: ns, TaskID: "t"},
		{ServerID: "a", TaskID: "t"},
		{Namespace: ns, ServerID: "a", TaskID: "bad\x00id"},
	} {
		if err := s.(store.TaskStore).PutTask(c, bad); err == nil {
			t.Errorf("PutTask(%+v) succeeded", bad)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	if diff := cmp.Diff([]store.Task{done}, list(s, ns), ignore); diff != "" {
		t.Fatalf("tasks after a reopen (-want +got):\n%s", diff)
	}
}
