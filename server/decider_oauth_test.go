package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/store"
)

// TestGatewayDecidedBySubject: in OAuth mode, an approval that a gateway
// client answers (through elicitation) names the subject of the client's
// access token as who decided, on the approval and in its audit record; a
// client of the server's own token names nobody.
func TestGatewayDecidedBySubject(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{JWT: "ES256"})
	editor := as.AddClient(oauthtest.Client{ID: "editor", RedirectURIs: []string{"http://127.0.0.1/cb"}})
	e := newEnv(t, &Options{Token: "secret", OAuth: &OAuthOptions{Issuer: as.Issuer()}})
	ctx := testCtx(t)
	_, url := mcpServer(t, "s")
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if status, _, b := e.do("PUT", agentPath+"/policy", `{"rules":[{"match":{"tools":["s/increment"],"callers":["gateway"]},"action":"ask"}]}`,
		"Authorization: Bearer secret"); status != http.StatusOK {
		t.Fatalf("PUT policy: %d %s", status, b)
	}
	endpoint := e.ts.URL + agentPath + "/mcp"

	// approveAs calls increment through the gateway with token, approves
	// the approval when asked, and returns the approval's id.
	approveAs := func(token string) string {
		t.Helper()
		asked := make(chan string, 1)
		hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
		mc := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				select {
				case asked <- "":
				default:
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, nil
			},
		})
		cs, err := mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_s_increment", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("the call: %+v %v", res, err)
		}
		select {
		case <-asked:
		default:
			t.Fatal("the client was not asked")
		}
		list, err := c.Approvals(ctx)
		if err != nil || len(list) == 0 {
			t.Fatalf("approvals: %v %v", list, err)
		}
		return list[0].ID // the most recent
	}

	viaOAuth := approveAs(as.IssueTokens(editor.ID, endpoint).AccessToken)
	viaSecret := approveAs("secret")
	want := map[string]string{viaOAuth: "sub:user-of-editor", viaSecret: ""}
	for id, by := range want {
		ap, err := c.Approval(ctx, id)
		if err != nil || ap.Caller != "gateway" || ap.DecidedBy != by {
			t.Errorf("approval %s: caller %q, decidedBy %q (%v); want gateway, %q", id, ap.Caller, ap.DecidedBy, err, by)
		}
	}
	// The API's read writes the agent's pending records first.
	page, err := c.Audit(ctx, client.AuditQuery{Decision: store.AuditApproved})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range page.Records {
		got[r.Approval] = r.Caller + " " + r.DecidedBy
	}
	if got[viaOAuth] != "gateway sub:user-of-editor" || got[viaSecret] != "gateway " {
		t.Errorf("the approved records: %q", got)
	}
}
