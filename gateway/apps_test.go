package gateway_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

// addApps adds two MCP Apps servers, "one" (2025-11-25) and "two"
// (2026-07-28), whose views have the same ui:// URI and different HTML.
func addApps(t *testing.T, e *env) {
	t.Helper()
	ctx := testCtx(t)
	for _, s := range []struct {
		id   string
		mode mcptest.Mode
	}{{"one", mcptest.Stateful}, {"two", mcptest.Stateless}} {
		srv := mcptest.NewAppsServer(s.id, "<p>view of "+s.id+"</p>", nil)
		hs := mcptest.Serve(t, s.mode, func() *mcp.Server { return srv.Server })
		if _, err := e.a.AddMCPServer(ctx, s.id, hs.URL, &agent.AddOptions{ID: s.id}); err != nil {
			t.Fatal(err)
		}
	}
}

// wantViews are the views of addApps' servers through the gateway: each
// under a URI of its own server, with that server's HTML.
var wantViews = map[string]string{
	"tool_one_show": "ui://one/widget/view.html",
	"tool_two_show": "ui://two/widget/view.html",
}

var wantHTML = map[string]string{
	"ui://one/widget/view.html": "<p>view of one</p>",
	"ui://two/widget/view.html": "<p>view of two</p>",
}

// TestAppsViews: through the gateway, a go-sdk client of either era sees
// _meta.ui on the tools of two servers whose views have the same ui://
// URI, each made the server's own, lists both resources and reads each
// server's own HTML; the tools and resources of a server without apps are
// as they were.
func TestAppsViews(t *testing.T) {
	e := newEnv(t, nil)
	addApps(t, e)
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			ctx := testCtx(t)
			cs := e.connect(era, nil)
			var tools *mcp.ListToolsResult
			for {
				var err error
				if tools, err = cs.ListTools(ctx, nil); err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "tool_two_show" }) &&
					slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "tool_one_show" }) {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("the apps servers' tools never showed: %d tools", len(tools.Tools))
				case <-time.After(20 * time.Millisecond): // polled, bounded by ctx
				}
			}
			views := map[string]string{}
			for _, tl := range tools.Tools {
				if ui, ok := tl.Meta["ui"].(map[string]any); ok {
					if uri, ok := ui["resourceUri"].(string); ok {
						views[tl.Name] = uri
					}
				}
				if tl.Name == "tool_alpha_echo" && tl.Meta != nil {
					t.Errorf("a tool of a server without apps got _meta %v", tl.Meta)
				}
			}
			if diff := cmp.Diff(wantViews, views); diff != "" {
				t.Errorf("views (-want +got):\n%s", diff)
			}
			html := map[string]string{}
			for _, uri := range views {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Fatalf("read %s: %v", uri, err)
				}
				if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != "text/html;profile=mcp-app" {
					t.Errorf("read %s: contents %+v", uri, res.Contents)
					continue
				}
				html[uri] = res.Contents[0].Text
			}
			if diff := cmp.Diff(wantHTML, html); diff != "" {
				t.Errorf("views' HTML (-want +got):\n%s", diff)
			}
			res, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range res.Resources {
				uris = append(uris, r.URI)
			}
			for _, want := range []string{"ui://one/widget/view.html", "ui://two/widget/view.html", "test://static"} {
				if !slices.Contains(uris, want) {
					t.Errorf("resources/list has no %s: %v", want, uris)
				}
			}
			if slices.Contains(uris, mcptest.AppsView) {
				t.Errorf("resources/list has a server's own ui:// URI: %v", uris)
			}
			// A server's own URI, or another server's, reads nothing.
			for _, uri := range []string{mcptest.AppsView, "ui://one/../two/widget/view.html", "ui://three/widget/view.html"} {
				if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
					t.Errorf("read %s = %+v; want an error", uri, res)
				}
			}
			st, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static"})
			if err != nil || st.Contents[0].Text != "static content" {
				t.Errorf("a plain resource: %+v, %v", st, err)
			}
		})
	}
}

// TestTypeScriptClientApps: the official TypeScript SDK's client, as a
// host of MCP Apps, sees _meta.ui on the tools of two servers whose views
// have the same ui:// URI, reads both resources and gets each server's
// own HTML.
func TestTypeScriptClientApps(t *testing.T) {
	e := newEnv(t, nil)
	addApps(t, e)
	script, err := filepath.Abs("testdata/tsapps.mjs")
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, peers.Command{Path: peers.Node22(t), Args: []string{script, peers.Require(t), e.URL, "tool_one_show", "tool_two_show"}})
	var got struct {
		Views, HTML, MimeTypes map[string]string
		Resources              []string
	}
	p.step(testCtx(t), "views", &got)
	if diff := cmp.Diff(wantViews, got.Views); diff != "" {
		t.Errorf("views (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantHTML, got.HTML); diff != "" {
		t.Errorf("views' HTML (-want +got):\n%s", diff)
	}
	for uri, mt := range got.MimeTypes {
		if mt != "text/html;profile=mcp-app" {
			t.Errorf("%s: MIME type %q", uri, mt)
		}
	}
	for uri := range wantHTML {
		if !slices.Contains(got.Resources, uri) {
			t.Errorf("resources/list has no %s: %v", uri, got.Resources)
		}
	}
}
