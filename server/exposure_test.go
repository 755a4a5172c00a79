package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExposureAPI: GET and PUT /agents/{class}/{name}/exposure read and
// replace the rules, which are stored (they survive a restart); bad
// patterns get a 400 that names them and changes nothing.
func TestExposureAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	_, url := mcpServer(t, "s")
	if status, _, b := e.do("POST", agentPath+"/servers", `{"name":"s","url":"`+url+`","id":"docs"}`); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, b)
	}
	get := func(e *env) ExposureRequest {
		t.Helper()
		status, _, b := e.do("GET", agentPath+"/exposure", "")
		if status != http.StatusOK {
			t.Fatalf("GET exposure: %d %s", status, b)
		}
		var got ExposureRequest
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if diff := cmp.Diff(ExposureRequest{Allow: []string{}, Deny: []string{}}, get(e)); diff != "" {
		t.Fatalf("rules of a new agent (-want +got):\n%s", diff)
	}
	rules := ExposureRequest{Allow: []string{"docs", "github/search_*"}, Deny: []string{"*/delete_*"}}
	body, _ := json.Marshal(rules)
	status, _, b := e.do("PUT", agentPath+"/exposure", string(body))
	if status != http.StatusOK {
		t.Fatalf("PUT exposure: %d %s", status, b)
	}
	var put ExposureRequest
	json.Unmarshal(b, &put)
	if diff := cmp.Diff(rules, put); diff != "" {
		t.Fatalf("PUT's answer (-want +got):\n%s", diff)
	}

	bad := []struct{ body, want string }{
		{`{"deny":["docs/"]}`, `deny pattern \"docs/\": no tool part`},
		{`{"allow":["/x"]}`, `allow pattern \"/x\": no server part`},
		{`{"allow":["Docs"]}`, `lower-case`},
		{`{"allow":[""]}`, `empty`},
		{`{"allow":"docs"}`, `invalid JSON body`},
		{`{"allow":[],"expose":[]}`, `unknown field`},
	}
	for _, tt := range bad {
		status, _, b := e.do("PUT", agentPath+"/exposure", tt.body)
		if status != http.StatusBadRequest || !strings.Contains(string(b), tt.want) {
			t.Errorf("PUT %s: %d %s, want 400 saying %q", tt.body, status, b, tt.want)
		}
	}
	if status, _, b := e.do("POST", agentPath+"/exposure", `{}`); status != http.StatusMethodNotAllowed {
		t.Errorf("POST exposure: %d %s, want 405", status, b)
	}
	if status, _, b := e.do("GET", "/agents/test/nobody/exposure", ""); status != http.StatusNotFound || !strings.Contains(string(b), CodeUnknownAgent) {
		t.Errorf("GET exposure of an unknown agent: %d %s, want 404 unknown_agent", status, b)
	}

	e.stop()
	e = openEnv(t, e.path, nil)
	if diff := cmp.Diff(rules, get(e)); diff != "" {
		t.Fatalf("rules after a restart (-want +got):\n%s", diff)
	}
	if status, _, b := e.do("PUT", agentPath+"/exposure", `{}`); status != http.StatusOK {
		t.Fatalf("PUT {}: %d %s", status, b)
	}
	if diff := cmp.Diff(ExposureRequest{Allow: []string{}, Deny: []string{}}, get(e)); diff != "" {
		t.Fatalf("rules after clearing (-want +got):\n%s", diff)
	}
}
