package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestAPINotMCPEndpoint: a URL that answers 404, 405 or 501 to both
// transports is refused with a readable error, keepIfUnreachable or not,
// and nothing is stored.
func TestAPINotMCPEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, code := range []int{http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
		defer ts.Close()
		for _, keep := range []bool{false, true} {
			body := fmt.Sprintf(`{"name":"docs","url":%q,"keepIfUnreachable":%v}`, ts.URL+"/mpc", keep)
			status, _, b := e.do("POST", agentPath+"/servers", body)
			got := apiError(t, b)
			want := fmt.Sprintf("docs is not an MCP endpoint: %s/mpc answered HTTP %d", ts.URL, code)
			if status != http.StatusBadRequest || got.Code != api.CodeNotMCPEndpoint || !strings.Contains(got.Message, want) || !strings.Contains(got.Message, "nothing was saved") {
				t.Errorf("%d, keep %v: %d %s", code, keep, status, b)
			}
			if stored := e.stored("test/a"); len(stored) != 0 {
				t.Errorf("%d, keep %v: stored %v", code, keep, stored)
			}
		}
	}
}

// TestAPIReadableIDs: a server added without an id gets its name,
// normalised, with a short suffix only when that id is taken.
func TestAPIReadableIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	url := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server }).URL
	for _, tt := range []struct{ name, url, want string }{
		{"My Docs", url, "my-docs"},
		{"my docs", url, "my-docs-2"},     // another name, the same id
		{"My Docs", url + "/", "my-docs"}, // the same server again
		{"GitHub", url, "github"},
	} {
		status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":%q,"url":%q}`, tt.name, tt.url))
		var res struct{ ID string }
		json.Unmarshal(b, &res)
		if status/100 != 2 || res.ID != tt.want {
			t.Errorf("add %q: %d %s; want id %s", tt.name, status, b, tt.want)
		}
	}
	if diff := cmp.Diff([]string{"my-docs", "my-docs-2", "github"}, e.stored("test/a")); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

// TestAPINameInUse: adding a name another server has, with another URL,
// is refused naming that server; with "replace" the new one takes its
// place; never two rows of one name.
func TestAPINameInUse(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	serve := func(name string) string {
		return mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer(name).Server }).URL
	}
	first, second := serve("a"), serve("b")
	if status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":"docs","url":%q}`, first)); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":"docs","url":%q}`, second))
	got := apiError(t, b)
	if status != http.StatusConflict || got.Code != api.CodeNameInUse || got.ServerID != "docs" ||
		!strings.Contains(got.Message, `a server named "docs" already exists (id docs, `+first+")") {
		t.Errorf("same name, another URL: %d %s", status, b)
	}
	if diff := cmp.Diff([]string{"docs"}, e.stored("test/a")); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	status, _, b = e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":"docs","url":%q,"replace":true}`, second))
	if status != http.StatusCreated {
		t.Fatalf("replace: %d %s", status, b)
	}
	rows, err := e.st.ListServers(testCtx(t), "test/a")
	if err != nil || len(rows) != 1 || rows[0].ID != "docs" || rows[0].URL != second {
		t.Errorf("after replace: %+v %v", rows, err)
	}
}
