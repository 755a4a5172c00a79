package postgres

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
)

func TestListNamespaces(t *testing.T) {
	s, err := Open(t.Context(), pg.Database(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.ListNamespaces(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{}, got); diff != "" {
		t.Fatalf("empty store (-want +got):\n%s", diff)
	}
	for _, row := range []store.Server{
		{Namespace: "b/one", ID: "x", URL: "http://127.0.0.1/"},
		{Namespace: "a/two", ID: "x", URL: "http://127.0.0.1/"},
		{Namespace: "b/one", ID: "y", URL: "http://127.0.0.1/"},
	} {
		if err := s.PutServer(t.Context(), row); err != nil {
			t.Fatal(err)
		}
	}
	got, err = s.ListNamespaces(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b/one", "a/two"}, got); diff != "" {
		t.Fatalf("namespaces (-want +got):\n%s", diff)
	}
}
