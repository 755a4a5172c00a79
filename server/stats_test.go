package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/agentmcp/agentmcp/api"
)

// TestStatsAPI: GET .../stats has each stored server's tool calls (made
// through the API; a result with isError and arguments the tool refuses
// are failures; a call of an unknown tool, refused before anything is
// sent, is not counted), zero figures for a server never called, and needs
// the token like the rest of the API.
func TestStatsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{Token: "stats-token"})
	auth := "Authorization: Bearer stats-token"
	_, url := mcpServer(t, "s")
	for _, id := range []string{"busy", "idle"} {
		if status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":%q,"url":%q,"id":%q}`, id, url, id), auth); status != http.StatusCreated {
			t.Fatalf("add %s: %d %s", id, status, b)
		}
	}
	calls := []struct {
		tool string
		want int
	}{
		{"echo", 200}, {"echo", 200}, {"echo", 200}, {"echo", 200}, {"echo", 200},
		{"fail", 200},         // a result with isError
		{"add", 200},          // arguments the tool refuses
		{"no-such-tool", 404}, // refused before anything is sent: not counted
	}
	for _, c := range calls {
		if status, _, b := e.do("POST", agentPath+"/servers/busy/tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"text":"x"}}`, c.tool), auth); status != c.want {
			t.Fatalf("call %s: %d %s; want %d", c.tool, status, b, c.want)
		}
	}

	if status, _, b := e.do("GET", agentPath+"/stats", ""); status != http.StatusUnauthorized {
		t.Fatalf("stats without the token: %d %s; want 401", status, b)
	}
	status, _, b := e.do("GET", agentPath+"/stats", "", auth)
	if status != http.StatusOK {
		t.Fatalf("stats: %d %s", status, b)
	}
	var got api.Stats
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.WindowSeconds != 300 || len(got.Servers) != 2 {
		t.Fatalf("stats: %s", b)
	}
	busy := got.Servers["busy"]
	if busy.Calls != 7 || busy.Errors != 2 || busy.TotalCalls != 7 || busy.TotalErrors != 2 || busy.ErrorRate != 0.2857 {
		t.Errorf("busy: %+v; want 7 calls, 2 errors, error rate 0.2857", busy)
	}
	if busy.P50Ms <= 0 || busy.P95Ms < busy.P50Ms {
		t.Errorf("busy: p50 %v ms, p95 %v ms", busy.P50Ms, busy.P95Ms)
	}
	if viaClient, err := e.client("test", "a").Stats(testCtx(t)); err != nil || viaClient.Servers["busy"].TotalCalls != 7 {
		t.Errorf("Client.Stats: %+v, %v", viaClient, err)
	}
	if idle := got.Servers["idle"]; idle != (api.ServerStats{}) {
		t.Errorf("idle: %+v; want zero figures", idle)
	}

	if status, _, b := e.do("POST", agentPath+"/stats", "{}", auth); status != http.StatusMethodNotAllowed {
		t.Errorf("POST stats: %d %s; want 405", status, b)
	}
	if status, _, b := e.do("GET", "/agents/test/nobody/stats", "", auth); status != http.StatusNotFound || apiError(t, b).Code != api.CodeUnknownAgent {
		t.Errorf("stats of an unknown agent: %d %s; want 404 unknown_agent", status, b)
	}
}
