package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// TestEraShapesOtherResults: the lists, prompts and resource reads reach
// each era's client in that era's shape too, whatever the upstream
// server's era: a 2025-11-25 session gets none of 2026-07-28's fields
// (ttlMs and cacheScope, which go-sdk's server adds to lists and reads in
// every era, resultType, server info in _meta); a 2026-07-28 client gets
// them, with the gateway's own server info, never an upstream's.
func TestEraShapesOtherResults(t *testing.T) {
	e := newEnv(t, &gateway.Options{Name: "the-gateway"})
	requests := []struct{ method, name, params string }{
		{"tools/list", "", ""},
		{"prompts/list", "", ""},
		{"resources/list", "", ""},
		{"resources/templates/list", "", ""},
		{"prompts/get", "alpha.greet", `"name":"alpha.greet","arguments":{"name":"a"}`},
		{"prompts/get", "beta.greet", `"name":"beta.greet","arguments":{"name":"a"}`},
		{"resources/read", "test://static", `"uri":"test://static"`},
		{"resources/read", "test://items/1", `"uri":"test://items/1"`},
	}
	cacheable := map[string]bool{"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true, "resources/read": true}
	for _, era := range []string{eraSessions, eraStateless} {
		rc := newRawClient(t, e, era)
		for _, r := range requests {
			params := r.params
			if era == eraStateless {
				if params != "" {
					params += ","
				}
				params += `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s}}`, r.method, params)
			rep := rc.post("", body, map[string]string{"Mcp-Method": r.method, "Mcp-Name": r.name})
			var msg struct {
				Result map[string]json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal([]byte(rep.msg), &msg); err != nil || msg.Result == nil {
				t.Fatalf("%s %s %s: %d %s", era, r.method, r.name, rep.status, rep.msg)
			}
			var meta map[string]struct{ Name string }
			json.Unmarshal(msg.Result["_meta"], &meta)
			info, hasInfo := meta["io.modelcontextprotocol/serverInfo"]
			_, ttl := msg.Result["ttlMs"]
			_, scope := msg.Result["cacheScope"]
			resultType := string(msg.Result["resultType"])
			what := fmt.Sprintf("%s %s %s", era, r.method, r.name)
			switch era {
			case eraSessions:
				if ttl || scope || resultType != "" || hasInfo {
					t.Errorf("%s: %s; want none of ttlMs, cacheScope, resultType, serverInfo", what, rep.msg)
				}
			case eraStateless:
				if resultType != `"complete"` || !hasInfo || info.Name != "the-gateway" || ttl != cacheable[r.method] || scope != cacheable[r.method] {
					t.Errorf("%s: %s; want resultType complete, the gateway's server info, and the cache fields on lists and reads", what, rep.msg)
				}
			}
		}
	}
}
