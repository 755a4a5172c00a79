package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/gateway"
)

// TestProgressElicitingClient: a client that declares elicitation gets
// the progress of its call, in either era, from either upstream era (a
// 2026-07-28 client's call then runs detached, for its input requests).
func TestProgressElicitingClient(t *testing.T) {
	for _, era := range []string{eraStateless, eraSessions} {
		t.Run(era, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := testCtx(t)
			progress := make(chan *mcp.ProgressNotificationParams, 16)
			cs := e.connect(era, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					progress <- req.Params
				},
			})
			for _, up := range []string{"alpha", "beta"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_" + up + "_progress", Arguments: map[string]any{"steps": 3},
					Meta: mcp.Meta{"progressToken": "p-" + up}})
				if err != nil || text(res) != "done in 3 steps" {
					t.Fatalf("%s: progress call = %+v, %v", up, res, err)
				}
				for i := 1; i <= 3; i++ {
					select {
					case p := <-progress:
						if p.ProgressToken != "p-"+up || p.Progress != float64(i) || p.Total != 3 {
							t.Errorf("%s: progress %d = %+v", up, i, p)
						}
					case <-ctx.Done():
						t.Fatalf("%s: progress %d did not arrive", up, i)
					}
				}
			}
		})
	}
}

// TestEraShapes: a tool result reaches each era's client in that era's
// shape, whatever the upstream server's era: a 2025-11-25 session gets
// no resultType and no server info in _meta, a 2026-07-28 client gets
// "resultType": "complete" and the gateway's own server info, never the
// upstream's; on the gateway's own path and on go-sdk's alike.
func TestEraShapes(t *testing.T) {
	e := newEnv(t, &gateway.Options{Name: "the-gateway"})
	for _, era := range []string{eraSessions, eraStateless} {
		rc := newRawClient(t, e, era)
		for _, up := range []string{"alpha", "beta"} {
			tool := "tool_" + up + "_echo"
			fast, sdk, _ := both(rc, e.g, tool, rc.call("1", tool, `{"text":"x"}`, ""), nil)
			for _, r := range []struct {
				path string
				rep  rawReply
			}{{"gateway's", fast}, {"go-sdk's", sdk}} {
				var msg struct {
					Result map[string]json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal([]byte(r.rep.msg), &msg); err != nil || msg.Result == nil {
					t.Fatalf("%s from %s, %s path: %d %s", era, up, r.path, r.rep.status, r.rep.msg)
				}
				resultType, meta := string(msg.Result["resultType"]), string(msg.Result["_meta"])
				switch era {
				case eraSessions:
					if resultType != "" || strings.Contains(meta, "serverInfo") {
						t.Errorf("%s from %s, %s path: resultType %s, _meta %s; want neither", era, up, r.path, resultType, meta)
					}
				case eraStateless:
					var m map[string]struct{ Name string }
					json.Unmarshal(msg.Result["_meta"], &m)
					if resultType != `"complete"` || m["io.modelcontextprotocol/serverInfo"].Name != "the-gateway" {
						t.Errorf("%s from %s, %s path: resultType %s, _meta %s; want complete and the gateway's info", era, up, r.path, resultType, meta)
					}
				}
			}
		}
	}
}
