package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

const appsHTML = "<!doctype html><title>view</title><p>hello</p>"

// serveApps connects m to an AppsServer over streamable HTTP in mode.
func serveApps(t *testing.T, m *mcpclient.Manager, mode mcptest.Mode, opts mcpclient.ServerOptions) *mcptest.AppsServer {
	t.Helper()
	srv := mcptest.NewAppsServer("apps", appsHTML, map[string]any{"connectDomains": []any{"https://api.example.com"}})
	hs := mcptest.Serve(t, mode, func() *mcp.Server { return srv.Server })
	opts.URL = hs.URL
	connectReady(t, m, "s", opts)
	return srv
}

// TestAppsAdvertised: with Options.Apps, the client advertises the MCP
// Apps extension in its capabilities' extensions in both eras (the
// 2025-11-25 initialize, each 2026-07-28 request), beside the caller's own
// extensions, which are not modified; without it, nothing of it.
func TestAppsAdvertised(t *testing.T) {
	ui := map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app"}}
	for _, era := range elicitEras {
		for _, tt := range []struct {
			name  string
			apps  bool
			own   map[string]any
			wants map[string]any
		}{
			{"off", false, nil, nil},
			{"on", true, nil, map[string]any{mcpclient.AppsExtension: ui}},
			{"beside others", true, map[string]any{"com.example/x": map[string]any{}},
				map[string]any{mcpclient.AppsExtension: ui, "com.example/x": map[string]any{}}},
			{"others only", false, map[string]any{"com.example/x": map[string]any{}},
				map[string]any{"com.example/x": map[string]any{}}},
		} {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				m := newManager(t, &mcpclient.Options{Apps: tt.apps})
				var caps *mcp.ClientCapabilities
				if tt.own != nil {
					caps = &mcp.ClientCapabilities{Extensions: tt.own}
				}
				serveApps(t, m, era.mode, mcpclient.ServerOptions{Client: mcpclient.ClientOptions{ProtocolVersion: era.version, Capabilities: caps}})
				var got map[string]any
				if err := json.Unmarshal([]byte(callText(t, m, "caps", nil)), &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.wants, got); diff != "" {
					t.Errorf("the server saw extensions (-want +got):\n%s", diff)
				}
				info, _ := m.Server("s")
				var adv map[string]any
				if info.Advertised != nil {
					b, _ := json.Marshal(info.Advertised.Extensions)
					json.Unmarshal(b, &adv)
				}
				if diff := cmp.Diff(tt.wants, adv); diff != "" {
					t.Errorf("ServerInfo.Advertised.Extensions (-want +got):\n%s", diff)
				}
				if _, ok := tt.own[mcpclient.AppsExtension]; ok {
					t.Error("the caller's extensions were modified")
				}
			})
		}
	}
}

// TestToolView: ToolView reads the view a tool names, with its _meta
// (the CSP it asks for); it keeps it while the server's lists are
// unchanged and reads it again once they are listed again. A tool without
// a view, of this server or of one without apps, is ErrNoView, and
// ViewURI says so.
func TestToolView(t *testing.T) {
	for _, era := range elicitEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, nil)
			srv := serveApps(t, m, era.mode, mcpclient.ServerOptions{Client: mcpclient.ClientOptions{ProtocolVersion: era.version}})
			ctx := testCtx(t)
			v, err := m.ToolView(ctx, "s", "show")
			if err != nil {
				t.Fatal(err)
			}
			if v.URI != mcptest.AppsView || v.HTML != appsHTML || v.ServerID != "s" || v.Tool != "show" {
				t.Errorf("view = %+v", v)
			}
			want := mcpclient.ViewCSP{ConnectDomains: []string{"https://api.example.com"}}
			if diff := cmp.Diff(want, v.CSP()); diff != "" {
				t.Errorf("CSP (-want +got):\n%s", diff)
			}
			v.Meta["ui"].(map[string]any)["csp"] = nil // the caller's copy
			v2, err := m.ToolView(ctx, "s", "show")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, v2.CSP()); diff != "" {
				t.Errorf("cached CSP (-want +got):\n%s", diff)
			}
			if n := srv.Reads.Load(); n != 1 {
				t.Errorf("the view was read %d times; want once while the lists are unchanged", n)
			}
			if d, err := m.DiscoverIfConnected(ctx, "s", nil); err != nil || !d.Success {
				t.Fatalf("discover: %+v %v", d, err)
			}
			if _, err := m.ToolView(ctx, "s", "show"); err != nil {
				t.Fatal(err)
			}
			if n := srv.Reads.Load(); n != 2 {
				t.Errorf("the view was read %d times; want again after the lists were listed again", n)
			}
			for _, tool := range []string{"second", "nope"} {
				if _, err := m.ToolView(ctx, "s", tool); !errors.Is(err, mcpclient.ErrNoView) {
					t.Errorf("ToolView(%s) = %v; want ErrNoView", tool, err)
				}
			}
			for _, tl := range m.ListTools(mcpclient.Filter{}) {
				if got, want := mcpclient.ViewURI(&tl.Tool), map[string]string{"show": mcptest.AppsView}[tl.Name]; got != want {
					t.Errorf("ViewURI(%s) = %q; want %q", tl.Name, got, want)
				}
			}
		})
	}
}

// TestNoApps: a server without apps, and a Manager without Options.Apps,
// see what they saw before: no tool has a view, ToolView says so without
// reading anything, and nothing is advertised.
func TestNoApps(t *testing.T) {
	m := newManager(t, nil)
	plain := mcptest.NewServer("plain")
	connectReady(t, m, "p", mcpclient.ServerOptions{InProcess: inProcess(plain)})
	for _, tl := range m.ListTools(mcpclient.Filter{}) {
		if u := mcpclient.ViewURI(&tl.Tool); u != "" {
			t.Errorf("%s has a view %q", tl.Name, u)
		}
	}
	for tl := range m.AITools(mcpclient.Filter{}).All() {
		if tl.View() != "" || tl.AppOnly() {
			t.Errorf("aitools marks %s: view %q, app only %v", tl.Name, tl.View(), tl.AppOnly())
		}
	}
	if _, err := m.ToolView(context.Background(), "p", "echo"); !errors.Is(err, mcpclient.ErrNoView) {
		t.Errorf("ToolView = %v; want ErrNoView", err)
	}
	info, _ := m.Server("p")
	if info.Advertised != nil && info.Advertised.Extensions != nil {
		t.Errorf("advertised extensions %v", info.Advertised.Extensions)
	}
}

// TestAIToolsMarksViews: aitools marks a tool with a view (View) and one
// for views alone (AppOnly).
func TestAIToolsMarksViews(t *testing.T) {
	m := newManager(t, nil)
	serveApps(t, m, mcptest.Stateful, mcpclient.ServerOptions{})
	got := map[string][2]any{}
	for tl := range m.AITools(mcpclient.Filter{}).All() {
		got[tl.Name] = [2]any{tl.View(), tl.AppOnly()}
	}
	want := map[string][2]any{"show": {mcptest.AppsView, false}, "second": {"", false}, "hidden": {"", false}, "viewonly": {"", true}, "caps": {"", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
}
