package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

// extAppsView returns a view built on the extension's own App class
// (@modelcontextprotocol/ext-apps, pinned in test/npm, its browser bundle
// inlined): it shows the tool's result, calls "second" through the host,
// asks to open a link and reports in a ui/message.
func extAppsView(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(peers.Require(t), "@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"))
	if err != nil {
		t.Fatal(err)
	}
	bundle := string(b)
	// The bundle's exports become an object the inline module uses.
	exports := regexp.MustCompile(`export\s*\{([^}]*)\};?\s*$`)
	m := exports.FindStringSubmatchIndex(bundle)
	if m == nil {
		t.Fatal("no export list at the end of the ext-apps bundle")
	}
	var fields []string
	for _, pair := range strings.Split(bundle[m[2]:m[3]], ",") {
		local, name, ok := strings.Cut(strings.TrimSpace(pair), " as ")
		if !ok {
			local, name = strings.TrimSpace(pair), strings.TrimSpace(pair)
		}
		fields = append(fields, name+": "+local)
	}
	bundle = bundle[:m[0]] + "\nconst ExtApps = {" + strings.Join(fields, ", ") + "};\n"
	return `<!doctype html>
<meta charset="utf-8">
<p id="result">waiting</p><p id="second"></p>
<script type="module">
` + strings.ReplaceAll(bundle, "</script", `<\/script`) + `
const app = new ExtApps.App({ name: "ext-apps-view", version: "1.0.0" }, {});
let input = {};
app.ontoolinput = (p) => { input = p.arguments || {}; };
app.ontoolresult = async (result) => {
  const out = { protocol: app.getHostVersion ? (app.getHostVersion() || {}).name : "" };
  document.getElementById("result").textContent = result.content[0].text;
  out.result = result.content[0].text;
  out.input = input.text;
  try {
    const second = await app.callServerTool({ name: "second", arguments: { text: input.text } });
    out.second = second.content[0].text;
  } catch (e) { out.second = "failed: " + e; }
  try { await app.callServerTool({ name: "hidden", arguments: {} }); out.hidden = "called"; } catch (e) { out.hidden = "refused"; }
  await app.openLink({ url: "https://example.com/ext-apps" });
  await app.sendMessage({ role: "user", content: [{ type: "text", text: "REPORT " + JSON.stringify(out) }] });
};
await app.connect();
</script>`
}

// TestDashboardExtAppsView: a view built on the extension's own App class
// (the ext-apps SDK, as servers ship them) works with the dashboard as its
// host: it connects (ui/initialize, checked against the SDK's schemas),
// gets the tool's input and result, calls a second tool of its server
// through the dashboard, is refused a tool its server keeps from views,
// and its link and message are shown.
func TestDashboardExtAppsView(t *testing.T) {
	html := extAppsView(t)
	p := newPage(t)
	e, srv := appsEnv(t, html, func(string) map[string]any { return nil })
	tool := `details.tool[data-server-id="apps"][data-tool="show"]`
	view := `#apps > .app-view[data-tool="show"]:first-child`
	p.do("calling the tool from the dashboard",
		chromedp.Navigate(e.ts.URL+"/?token="+appsToken),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.Click(css(tool+" > summary")),
		chromedp.SetValue(css(tool+` input[name="text"]`), "from the sdk"),
		chromedp.Click(css(tool+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(view+` .app-message`)),
	)
	_, report, ok := strings.Cut(p.text(view+` .app-message`), "REPORT ")
	if !ok {
		t.Fatalf("the view's message: %q", p.text(view+` .app-message`))
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(report), &got); err != nil {
		t.Fatalf("the view's report %q: %v", report, err)
	}
	want := map[string]string{"protocol": "agentmcp-dashboard", "result": "shown: from the sdk", "input": "from the sdk",
		"second": "second: from the sdk", "hidden": "refused"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the SDK view's report (-want +got):\n%s", diff)
	}
	if got := srv.Calls(); strings.Join(got, ",") != "show,second" {
		t.Errorf("the server saw calls of %v", got)
	}
	if n := eval[int](p, `document.querySelectorAll('`+view+` a.app-open-link[href="https://example.com/ext-apps"]').length`); n != 1 {
		t.Errorf("%d links shown", n)
	}
	if p := appProblems(p.problems()); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
}
