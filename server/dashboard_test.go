package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// page drives one dashboard page in a test: do runs steps, text and eval
// read the page; each fails the test with the page's problems.
type page struct {
	t        *testing.T
	ctx      context.Context
	problems func() []string
}

func newPage(t *testing.T) *page {
	ctx, problems := browser(t)
	return &page{t: t, ctx: ctx, problems: problems}
}

func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 40*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		if shot, serr := chromedp.Run(p.ctx, chromedp.FullScreenshot(100)); serr == nil {
			artifact(p.t, "failed-"+p.t.Name()+".png", shot)
		}
		p.t.Fatalf("%s: %v (problems: %v)", what, err, p.problems())
	}
}

func (p *page) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatalf("text of %s: %v (problems: %v)", sel, err, p.problems())
	}
	return s
}

func eval[T any](p *page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v (problems: %v)", js, err, p.problems())
	}
	return v
}

// screenshot saves the page under artifacts/.
func (p *page) screenshot(name string) {
	p.t.Helper()
	shot, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatal(err)
	}
	artifact(p.t, name, shot)
}

func (p *page) noProblems() {
	p.t.Helper()
	if pr := p.problems(); len(pr) > 0 {
		p.t.Errorf("the page reported problems: %v", pr)
	}
}

func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// gate serves h, or, while down, refuses every API and stream request as a
// server that went away would.
type gate struct {
	h    http.Handler
	down atomic.Bool
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.down.Load() && strings.HasPrefix(r.URL.Path, "/agents") {
		writeError(w, apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "down for the test"))
		return
	}
	g.h.ServeHTTP(w, r)
}

// connTracker is a listener that can close every connection it accepted,
// WebSockets (which net/http no longer tracks once hijacked) included.
type connTracker struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *connTracker) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *connTracker) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// TestDashboardDisconnected: when the page's stream to serve breaks, a
// banner says since when, and every server's state reads unknown (greyed,
// with the last one known), until the stream returns: then the states are
// live again.
func TestDashboardDisconnected(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	_, url := mcpServer(t, "s")
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	g := &gate{h: e.srv}
	ts := httptest.NewUnstartedServer(g)
	conns := &connTracker{Listener: ts.Listener}
	ts.Listener = conns
	ts.Start()
	defer ts.Close()
	row := `#servers tr[data-server-id="s"]`

	p.do("opening the dashboard",
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(row+` .state[data-state="ready"]`)),
	)
	if !eval[bool](p, `document.getElementById("stream-banner").hidden`) {
		t.Errorf("the banner shows while live")
	}

	g.down.Store(true)
	conns.closeAll()
	p.do("waiting for the banner",
		chromedp.WaitVisible(css(`#stream-banner`)),
		chromedp.WaitVisible(css(row+` .state[data-state="unknown"]`)),
	)
	if got := p.text("#stream-banner"); !strings.Contains(got, "Disconnected from serve since") {
		t.Errorf("banner %q", got)
	}
	if got := p.text(row + " .state"); !strings.Contains(got, "unknown") || !strings.Contains(got, "was ready") || !strings.Contains(got, "disconnected from serve since") {
		t.Errorf("state cell %q", got)
	}
	if n := eval[int](p, `document.querySelectorAll('#servers .state:not([data-state="unknown"])').length`); n != 0 {
		t.Errorf("%d rows still show a state", n)
	}
	p.screenshot("dashboard-disconnected.png")

	g.down.Store(false)
	p.do("waiting for the stream to return",
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(row+` .state[data-state="ready"]`)),
		chromedp.WaitNotVisible(css(`#stream-banner`)),
	)
	// The browser logs the refused requests while serve was down; nothing
	// else.
	for _, pr := range p.problems() {
		if !strings.Contains(pr, "503") {
			t.Errorf("the page reported a problem: %s", pr)
		}
	}
}

// TestDashboardUnknownAgent: /?agent= naming an agent that does not exist
// says so and lists the agents; adding a server creates it, and the picker
// lists it.
func TestDashboardUnknownAgent(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	_, url := mcpServer(t, "s")
	p.do("opening an unknown agent",
		chromedp.Navigate(e.ts.URL+"/?agent=test/nosuch"),
		chromedp.WaitVisible(css(`#status[data-status="unknown_agent"]`)),
		chromedp.WaitVisible(css(`#notice a[href="/?agent=test%2Fa"]`)),
	)
	if got := p.text("#notice"); !strings.Contains(got, "There is no agent test/nosuch") || !strings.Contains(got, "agentmcp/default") {
		t.Errorf("notice %q", got)
	}
	if got := e.srv.Agents(); len(got) != 0 {
		t.Errorf("the page opened agents: %v", got)
	}
	p.do("adding a server, which creates the agent",
		chromedp.SendKeys(css(`#add-form input[name="name"]`), "s"),
		chromedp.SendKeys(css(`#add-form input[name="url"]`), url),
		chromedp.SendKeys(css(`#add-form input[name="id"]`), "s"),
		chromedp.Click(css(`#add-form button[type="submit"]`)),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(`#servers tr[data-server-id="s"] .state[data-state="ready"]`)),
		chromedp.WaitNotVisible(css(`#notice`)),
		chromedp.WaitReady(css(`#agent-picker option[value="test/a"]`)),
	)
	p.screenshot("dashboard-unknown-agent.png")
	got := eval[[]string](p, `[...document.querySelectorAll("#agent-picker option")].map((o) => o.value + (o.selected ? "*" : ""))`)
	if diff := cmp.Diff([]string{"test/a", "agentmcp/default", "test/nosuch*", ""}, got); diff != "" {
		t.Errorf("picker (-want +got):\n%s", diff)
	}
	// The browser logs the 404s of the unknown agent; nothing else.
	for _, pr := range p.problems() {
		if !strings.Contains(pr, "404") {
			t.Errorf("the page reported a problem: %s", pr)
		}
	}
}

// formSchema has defaults, enumerations with titles (enumNames, and
// oneOf of consts), arrays (free items, and enumerated items) and a nested
// object.
const formSchema = `{"type":"object","properties":{
	"greeting":{"type":"string","default":"hi"},
	"count":{"type":"integer","default":3},
	"loud":{"type":"boolean","default":true},
	"color":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"],"default":"g"},
	"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
	"tags":{"type":"array","items":{"type":"string"},"default":["a","b"]},
	"days":{"type":"array","items":{"type":"string","enum":["mon","tue"]}},
	"owner":{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"age":{"type":"integer"}}}
},"required":["greeting"]}`

// panelServer is the test server with the tools the dashboard tests call:
// "form" (formSchema; returns its arguments), "media" (an image, a bad
// image, audio, a resource link and an embedded resource).
func panelServer(t *testing.T) (*mcptest.Server, string) {
	srv := mcptest.NewServer("panels")
	srv.Server.AddTool(&mcp.Tool{Name: "form", InputSchema: json.RawMessage(formSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for x := range 3 {
		for y := range 2 {
			img.Set(x, y, color.RGBA{R: 200, A: 255})
		}
	}
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	srv.Server.AddTool(&mcp.Tool{Name: "media", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "some media"},
				&mcp.ImageContent{Data: pngData.Bytes(), MIMEType: "image/png"},
				&mcp.ImageContent{Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), MIMEType: "image/svg+xml"},
				&mcp.AudioContent{Data: wav(), MIMEType: "audio/wav"},
				&mcp.ResourceLink{URI: "test://static", Name: "static", MIMEType: "text/plain"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded", MIMEType: "text/plain", Text: "embedded text"}},
			}}, nil
		})
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	return srv, hs.URL
}

// wav is a tiny silent WAV file.
func wav() []byte {
	var b bytes.Buffer
	samples := make([]byte, 800)
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + len(samples)))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))
	w(uint16(1))
	w(uint32(8000))
	w(uint32(8000))
	w(uint16(1))
	w(uint16(8))
	b.WriteString("data")
	w(uint32(len(samples)))
	b.Write(samples)
	return b.Bytes()
}

// TestDashboardPanels drives the tool forms, results, prompt and resource
// panels and the Cancel button: a form honours defaults, enumeration
// titles, arrays and nested objects; results show images (safely) and
// resource links; a prompt is got with its arguments and a resource read
// (by URI and by template); Cancel on a slow call cancels it on the MCP
// server.
func TestDashboardPanels(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	srv, url := panelServer(t)
	t.Cleanup(srv.ReleaseSlow)
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "panels", URL: url, ID: "p"}); err != nil {
		t.Fatal(err)
	}
	tool := func(n string) string { return fmt.Sprintf(`details.tool[data-server-id="p"][data-tool=%q]`, n) }
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(tool("form"))),
		chromedp.Click(css(tool("form")+" > summary")),
	)

	// The form starts with the schema's defaults and titles.
	form := tool("form") + " form"
	start := eval[map[string]any](p, `(() => {
		const f = document.querySelector('`+form+`');
		const q = (s) => f.querySelector(s);
		return {
			greeting: q('input[name="greeting"]').value,
			count: q('input[name="count"]').value,
			loud: q('input[name="loud"]').checked,
			color: q('select[name="color"]').selectedOptions[0].textContent,
			colors: [...q('select[name="color"]').options].map((o) => o.textContent),
			sizes: [...q('select[name="size"]').options].map((o) => o.textContent),
			tags: [...f.querySelectorAll('[data-name="tags"] .array-item input')].map((i) => i.value),
			days: [...f.querySelectorAll('[data-name="days"] label.choice')].map((l) => l.textContent.trim()),
			owner: q('fieldset[data-name="owner"] input[name="name"]').value,
		};
	})()`)
	want := map[string]any{
		"greeting": "hi", "count": "3", "loud": true, "color": "Green",
		"colors": []any{"", "Red", "Green"}, "sizes": []any{"", "Small", "Large"},
		"tags": []any{"a", "b"}, "days": []any{"mon", "tue"}, "owner": "Ada",
	}
	if diff := cmp.Diff(want, start); diff != "" {
		t.Errorf("the form's start (-want +got):\n%s", diff)
	}
	p.do("filling in the form",
		chromedp.Click(css(form+` [data-name="tags"] .add-item`)),
		chromedp.SendKeys(css(form+` [data-name="tags"] .array-item:nth-child(3) input`), "c"),
		chromedp.Click(css(form+` [data-name="tags"] .array-item:nth-child(1) button.remove`)),
		chromedp.SetValue(css(form+` select[name="size"]`), `"l"`),
		chromedp.Click(css(form+` [data-name="days"] input[value='"tue"']`)),
		chromedp.SendKeys(css(form+` fieldset[data-name="owner"] input[name="age"]`), "36"),
		chromedp.Click(css(form+` button[type="submit"]`)),
		chromedp.WaitVisible(css(tool("form")+` .result[data-outcome="ok"]`)),
	)
	var args, wantArgs any
	json.Unmarshal([]byte(p.text(tool("form")+" .result pre.content-text")), &args)
	json.Unmarshal([]byte(`{"greeting":"hi","count":3,"loud":true,"color":"g","size":"l","tags":["b","c"],"days":["tue"],"owner":{"name":"Ada","age":36}}`), &wantArgs)
	if diff := cmp.Diff(wantArgs, args); diff != "" {
		t.Errorf("arguments sent (-want +got):\n%s", diff)
	}

	// An image result is an image; an SVG one is not shown; a resource
	// link reads its resource.
	media := tool("media")
	p.do("calling media",
		chromedp.Click(css(media+" > summary")),
		chromedp.Click(css(media+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(media+` .result[data-outcome="ok"] img.content-image`)),
		chromedp.Click(css(media+` .content-link[data-uri="test://static"] button`)),
		chromedp.WaitVisible(css(media+` .content-link .content-resource`)),
	)
	shown := eval[map[string]any](p, `(() => {
		const r = document.querySelector('`+media+` .result');
		const imgs = [...r.querySelectorAll("img")];
		return {
			images: imgs.length,
			width: imgs[0].naturalWidth,
			src: imgs[0].src.slice(0, 22),
			audio: r.querySelectorAll("audio.content-audio").length,
			svg: r.textContent.includes("image: image/svg+xml"),
			link: r.querySelector(".content-link .content-resource pre").textContent,
			embedded: r.querySelector(".content-embedded pre").textContent,
		};
	})()`)
	wantShown := map[string]any{"images": 1.0, "width": 3.0, "src": "data:image/png;base64,", "audio": 1.0, "svg": true,
		"link": "static content", "embedded": "embedded text"}
	if diff := cmp.Diff(wantShown, shown); diff != "" {
		t.Errorf("media result (-want +got):\n%s", diff)
	}

	// Prompts and resources.
	prompt := `details.prompt[data-server-id="p"][data-prompt="greet"]`
	resource := `details.resource[data-server-id="p"][data-uri="test://static"]`
	template := `details.template[data-server-id="p"][data-uri-template="test://items/{id}"]`
	p.do("getting a prompt and reading resources",
		chromedp.Click(css(prompt+" > summary")),
		chromedp.SendKeys(css(prompt+` input[name="name"]`), "Ada"),
		chromedp.Click(css(prompt+` button[type="submit"]`)),
		chromedp.WaitVisible(css(prompt+` .result[data-outcome="ok"] .prompt-message`)),
		chromedp.Click(css(resource+" > summary")),
		chromedp.Click(css(resource+` button[type="submit"]`)),
		chromedp.WaitVisible(css(resource+` .result[data-outcome="ok"] .content-resource`)),
		chromedp.Click(css(template+" > summary")),
		chromedp.SendKeys(css(template+` input[name="id"]`), "7 x"),
		chromedp.Click(css(template+` button[type="submit"]`)),
		chromedp.WaitVisible(css(template+` .result[data-outcome="ok"] .content-resource`)),
	)
	if got := p.text(prompt + " .prompt-message pre"); got != "Hello, Ada!" {
		t.Errorf("prompt %q", got)
	}
	if got := p.text(resource + " .content-resource pre"); got != "static content" {
		t.Errorf("resource %q", got)
	}
	if got := eval[string](p, `document.querySelector('`+template+` .content-resource').dataset.uri`); got != "test://items/7%20x" {
		t.Errorf("template read %q", got)
	}
	p.screenshot("dashboard-panels.png")

	// Cancel on a slow call cancels it on the MCP server.
	slow := tool("slow")
	p.do("calling slow",
		chromedp.Click(css(slow+" > summary")),
		chromedp.Click(css(slow+` form button[type="submit"]`)),
		chromedp.WaitVisible(css(slow+` button.cancel`)),
	)
	select {
	case <-srv.SlowStarted:
	case <-p.ctx.Done():
		t.Fatal("the slow call did not start")
	}
	p.do("cancelling", chromedp.Click(css(slow+` button.cancel`)),
		chromedp.WaitVisible(css(slow+` .result[data-outcome="cancelled"]`)))
	select {
	case <-srv.SlowCancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the MCP server did not see the call cancelled")
	}
	p.noProblems()
}

// TestDashboardReconnect: a failed server's row has a Reconnect button
// (its background retry is minutes away here); once the server is back,
// Reconnect brings it ready.
func TestDashboardReconnect(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	hs.Stop()
	slowRetry := &api.RetryRequest{MaxAttempts: 1, BaseDelayMS: 600_000, MaxDelayMS: 600_000}
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "s", URL: hs.URL, ID: "s", Retry: slowRetry, KeepIfUnreachable: true}); err == nil {
		t.Fatal("added a server that is down")
	}
	row := `#servers tr[data-server-id="s"]`
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(row+` .state[data-state="failed"]`)),
		chromedp.WaitVisible(css(row+` button.reconnect`)),
	)
	// The error's short form shows, the whole error one click away.
	errCell := eval[[]string](p, `(() => {
		const d = document.querySelector('`+row+` td.error details');
		if (!d) return [];
		d.open = true;
		return [d.querySelector("summary").textContent, d.querySelector("pre").textContent];
	})()`)
	if len(errCell) != 2 || !strings.Contains(errCell[0], "connection refused") || len(errCell[1]) <= len(errCell[0]) || !strings.Contains(errCell[1], "127.0.0.1") {
		t.Errorf("error cell %q, want a short form and the whole error", errCell)
	}
	p.screenshot("dashboard-failed.png")
	hs.Restart()
	p.do("reconnecting",
		chromedp.Click(css(row+` button.reconnect`)),
		chromedp.WaitVisible(css(row+` .state[data-state="ready"]`)),
		chromedp.WaitVisible(css(`details.tool[data-server-id="s"][data-tool="echo"]`)),
		chromedp.WaitNotPresent(css(row+` button.reconnect`)),
	)
	p.noProblems()
}

// TestDashboardNoSecrets: header values and the userinfo and query of a
// server's URL never reach the page, whether the server is ready or failed
// (its error names the URL). The rows keep the order of the agent's state.
func TestDashboardNoSecrets(t *testing.T) {
	p := newPage(t)
	e := newEnv(t, &Options{DefaultAgent: "test/a"})
	_, url := mcpServer(t, "s")
	down := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("down").Server })
	down.Stop()
	c := e.client("test", "a")
	secretURL := func(u string) string {
		return strings.Replace(u, "http://", "http://user:url-password-1@", 1) + "?key=query-secret-2"
	}
	headers := &api.TransportRequest{Headers: map[string]string{"X-Api-Key": "header-secret-3"}}
	// Names in the other order than ids: the page keeps the state's order
	// (by name), not the order of the servers object's keys.
	if _, err := c.AddMCPServer(testCtx(t), api.AddRequest{Name: "a-up", URL: secretURL(url), ID: "up", Transport: headers}); err != nil {
		t.Fatal(err)
	}
	slowRetry := &api.RetryRequest{MaxAttempts: 1, BaseDelayMS: 600_000, MaxDelayMS: 600_000}
	if _, err := c.AddMCPServer(testCtx(t), api.AddRequest{Name: "b-down", URL: secretURL(down.URL), ID: "down", Transport: headers, Retry: slowRetry, KeepIfUnreachable: true}); err == nil {
		t.Fatal("added a server that is down")
	}
	p.do("opening the dashboard",
		chromedp.Navigate(e.ts.URL+"/"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(`#servers tr[data-server-id="up"] .state[data-state="ready"]`)),
		chromedp.WaitVisible(css(`#servers tr[data-server-id="down"] .state[data-state="failed"]`)),
		chromedp.Click(css(`details.tool[data-server-id="up"][data-tool="echo"] > summary`)),
		chromedp.SendKeys(css(`details.tool[data-server-id="up"][data-tool="echo"] input[name="text"]`), "x"),
		chromedp.Click(css(`details.tool[data-server-id="up"][data-tool="echo"] button[type="submit"]`)),
		chromedp.WaitVisible(css(`details.tool[data-server-id="up"][data-tool="echo"] .result[data-outcome="ok"]`)),
	)
	// Everything the page holds: its markup, with every details element
	// open, and the raw JSON it was sent.
	html := eval[string](p, `(() => {
		document.querySelectorAll("details").forEach((d) => (d.open = true));
		return document.documentElement.outerHTML;
	})()`)
	for _, secret := range []string{"url-password-1", "query-secret-2", "header-secret-3"} {
		if strings.Contains(html, secret) {
			t.Errorf("the page holds %q", secret)
		}
	}
	if !strings.Contains(html, "127.0.0.1") {
		t.Errorf("the page shows no server URL at all")
	}
	rows := eval[[]string](p, `[...document.querySelectorAll("#servers tbody tr")].map((r) => r.dataset.serverId)`)
	if diff := cmp.Diff([]string{"up", "down"}, stateOrder(t, e, "test/a")); diff != "" {
		t.Errorf("state order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(stateOrder(t, e, "test/a"), rows); diff != "" {
		t.Errorf("rows not in the state's order (-state +page):\n%s", diff)
	}
	p.noProblems()
}

// stateOrder returns the server ids of agent ns in the order its state
// gives (agent.ServerOrder).
func stateOrder(t *testing.T, e *env, ns string) []string {
	t.Helper()
	status, _, b := e.do("GET", "/agents/"+ns, "")
	if status != http.StatusOK {
		t.Fatalf("state: %d %s", status, b)
	}
	var st agent.MCPServersState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Order) != len(st.Servers) {
		t.Fatalf("state order %v for %d servers", st.Order, len(st.Servers))
	}
	return st.Order
}
