package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/gateway"
)

// rawReply is an HTTP response to a raw MCP request: its status, its
// Content-Type, and its JSON-RPC message (the body, or the data of an
// event stream's last message), or its body when it is neither.
type rawReply struct {
	status      int
	contentType string
	msg         string
}

// rawClient sends hand-made MCP requests to a gateway in one era: in
// 2025-11-25 within the session of a go-sdk client.
type rawClient struct {
	t       *testing.T
	url     string
	era     string
	session string
}

func newRawClient(t *testing.T, e *env, era string) *rawClient {
	rc := &rawClient{t: t, url: e.URL, era: era}
	if era == eraSessions {
		rc.session = e.connect(era, nil).ID()
	}
	return rc
}

// call is the body of a tools/call of tool with id (raw JSON), the
// arguments args (raw JSON, or "" for none), and _meta entries (raw JSON
// members, or ""); in 2026-07-28 the _meta triple is added.
func (rc *rawClient) call(id, tool, args, meta string) string {
	members := []string{}
	if rc.era == eraStateless {
		members = append(members, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`,
			`"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}`)
	}
	if meta != "" {
		members = append(members, meta)
	}
	params := fmt.Sprintf(`"name":%q`, tool)
	if args != "" {
		params += `,"arguments":` + args
	}
	if len(members) > 0 {
		params += `,"_meta":{` + strings.Join(members, ",") + `}`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s}}`, id, params)
}

// post sends body with the headers of the era (tool names the Mcp-Name
// of 2026-07-28), changed by set.
func (rc *rawClient) post(tool, body string, set map[string]string) rawReply {
	rc.t.Helper()
	req, err := http.NewRequestWithContext(testCtx(rc.t), http.MethodPost, rc.url, strings.NewReader(body))
	if err != nil {
		rc.t.Fatal(err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", rc.era)
	if rc.session != "" {
		h.Set("Mcp-Session-Id", rc.session)
	}
	if rc.era == eraStateless {
		h.Set("Mcp-Method", "tools/call")
		h.Set("Mcp-Name", tool)
	}
	for k, v := range set {
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rc.t.Fatal(err)
	}
	defer resp.Body.Close()
	r := rawReply{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type")}
	if strings.HasPrefix(r.contentType, "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				r.msg = data
			}
		}
		return r
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatal(err)
	}
	r.msg = strings.TrimSpace(string(data))
	return r
}

// both sends the same request with the gateway's own answer on and off,
// and returns both replies.
func both(rc *rawClient, g *gateway.Gateway, tool, body string, set map[string]string) (fast, sdk rawReply, took int64) {
	before := gateway.FastCalls(g)
	fast = rc.post(tool, body, set)
	took = gateway.FastCalls(g) - before
	gateway.SetFastPath(g, false)
	defer gateway.SetFastPath(g, true)
	sdk = rc.post(tool, body, set)
	return fast, sdk, took
}

// TestFastPath: a plain tools/call, from go-sdk's client in either era,
// is answered by the gateway itself, below go-sdk's server.
func TestFastPath(t *testing.T) {
	e := newEnv(t, nil)
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			ctx := testCtx(t)
			cs := e.connect(era, nil)
			before := gateway.FastCalls(e.g)
			for _, up := range []string{"alpha", "beta"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_" + up + "_echo", Arguments: map[string]any{"text": up}})
				if err != nil || text(res) != "echo: "+up {
					t.Fatalf("echo on %s = %+v, %v", up, res, err)
				}
			}
			if got := gateway.FastCalls(e.g) - before; got != 2 {
				t.Errorf("the gateway answered %d calls itself; want 2", got)
			}
		})
	}
}

// TestFastPathSameResponse: a call answered by the gateway itself gets
// the JSON-RPC response go-sdk's server gives the same request: results,
// tool errors, a tool refused since it was listed, string ids, no
// arguments, HTML characters, and (2026-07-28) an input-required result.
func TestFastPathSameResponse(t *testing.T) {
	var deny atomic.Bool
	e := newEnv(t, &gateway.Options{Expose: func(_, tool string) bool { return !(deny.Load() && tool == "add") }})
	state := regexp.MustCompile(`"requestState":"[^"]*"`)
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			rc := newRawClient(t, e, era)
			type tc struct {
				name, tool, body string
				deny             bool
			}
			cases := []tc{
				{"echo", "tool_alpha_echo", rc.call("1001", "tool_alpha_echo", `{"text":"<a & b>"}`, ""), false},
				{"session server", "tool_beta_echo", rc.call("1002", "tool_beta_echo", `{"text":"é \u2028"}`, `"trace":"x"`), false},
				{"string id", "tool_alpha_add", rc.call(`"id-<1>"`, "tool_alpha_add", `{"a":2,"b":3}`, ""), false},
				{"no arguments", "tool_alpha_fail", rc.call("0", "tool_alpha_fail", "", ""), false},
				{"null arguments", "tool_beta_fail", rc.call("-7", "tool_beta_fail", "null", ""), false},
				{"tool error", "tool_beta_fail", rc.call("1003", "tool_beta_fail", `{}`, ""), false},
				{"invalid arguments", "tool_alpha_add", rc.call("1004", "tool_alpha_add", `{"a":"x"}`, ""), false},
				{"refused since listed", "tool_alpha_add", rc.call("1005", "tool_alpha_add", `{"a":1,"b":1}`, ""), true},
			}
			if era == eraStateless {
				body := strings.Replace(rc.call("1006", "tool_alpha_ask", `{}`, ""), `"io.modelcontextprotocol/clientCapabilities":{}`,
					`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}`, 1)
				cases = append(cases, tc{name: "input required", tool: "tool_alpha_ask", body: body})
			}
			for _, c := range cases {
				deny.Store(c.deny)
				fast, sdk, took := both(rc, e.g, c.tool, c.body, nil)
				if took != 1 {
					t.Errorf("%s: the gateway answered %d calls itself; want 1", c.name, took)
				}
				if fast.status != http.StatusOK || sdk.status != http.StatusOK {
					t.Errorf("%s: status %d (gateway), %d (go-sdk)", c.name, fast.status, sdk.status)
				}
				if fast.contentType != "application/json" {
					t.Errorf("%s: Content-Type %q", c.name, fast.contentType)
				}
				f, s := state.ReplaceAllString(fast.msg, `"requestState":"…"`), state.ReplaceAllString(sdk.msg, `"requestState":"…"`)
				if f != s {
					t.Errorf("%s: the gateway answered\n%s\ngo-sdk answers\n%s", c.name, fast.msg, sdk.msg)
				}
			}
			deny.Store(false)
		})
	}
}

// TestFastPathFallbacks: what the gateway does not answer itself goes to
// go-sdk's server, which gives the answer it gives without the fast path:
// a progress token, an unknown session, malformed JSON, a batch, another
// method, an unknown tool, headers go-sdk refuses, an incomplete _meta.
func TestFastPathFallbacks(t *testing.T) {
	e := newEnv(t, nil)
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			rc := newRawClient(t, e, era)
			echo := rc.call("2001", "tool_alpha_echo", `{"text":"x"}`, "")
			type tc struct {
				name, tool, body string
				set              map[string]string
			}
			cases := []tc{
				{"progress token", "tool_alpha_echo", rc.call("2002", "tool_alpha_echo", `{"text":"x"}`, `"progressToken":"p"`), nil},
				{"malformed", "tool_alpha_echo", echo[:len(echo)-3], nil},
				{"batch", "tool_alpha_echo", "[" + echo + "]", nil},
				{"other method", "", `{"jsonrpc":"2.0","id":2003,"method":"tools/list","params":{}}`, map[string]string{"Mcp-Method": "tools/list"}},
				{"unknown tool", "tool_nope", rc.call("2004", "tool_nope", `{}`, ""), nil},
				{"fractional id", "tool_alpha_echo", rc.call("2005.5", "tool_alpha_echo", `{"text":"x"}`, ""), nil},
				{"extra params", "tool_alpha_echo", strings.Replace(echo, `"name"`, `"task":{},"name"`, 1), nil},
				{"no Accept", "tool_alpha_echo", echo, map[string]string{"Accept": "application/json"}},
				{"Content-Type", "tool_alpha_echo", echo, map[string]string{"Content-Type": "text/plain"}},
			}
			if era == eraSessions {
				cases = append(cases,
					tc{"unknown session", "tool_alpha_echo", echo, map[string]string{"Mcp-Session-Id": "nope"}},
					tc{"2026-07-28 _meta in a session", "tool_alpha_echo", rc.call("2006", "tool_alpha_echo", `{"text":"x"}`, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`), nil},
				)
			} else {
				cases = append(cases,
					tc{"Mcp-Name mismatch", "tool_alpha_add", echo, nil},
					tc{"no capabilities", "tool_alpha_echo", strings.Replace(echo, `"io.modelcontextprotocol/clientCapabilities":{},`, "", 1), nil},
					tc{"_meta version mismatch", "tool_alpha_echo", strings.Replace(echo, `protocolVersion":"2026-07-28"`, `protocolVersion":"2025-11-25"`, 1), nil},
					tc{"log level", "tool_alpha_echo", rc.call("2007", "tool_alpha_echo", `{"text":"x"}`, `"io.modelcontextprotocol/logLevel":"debug"`), nil},
					tc{"retry with input", "tool_alpha_echo", strings.Replace(echo, `"name"`, `"requestState":"s","inputResponses":{},"name"`, 1), nil},
				)
			}
			for _, c := range cases {
				fast, sdk, took := both(rc, e.g, c.tool, c.body, c.set)
				if took != 0 {
					t.Errorf("%s: the gateway answered it itself", c.name)
				}
				if fast != sdk {
					t.Errorf("%s: with the fast path on: %+v; off: %+v", c.name, fast, sdk)
				}
			}
		})
	}
}

// TestFastPathCancel: a call the gateway answers itself is cancelled on
// the upstream server when the client cancels it: by a
// notifications/cancelled in a session, by ending its request in
// 2026-07-28.
func TestFastPathCancel(t *testing.T) {
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			e := newEnv(t, nil)
			cs := e.connect(era, nil)
			ctx, cancel := context.WithCancel(testCtx(t))
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_slow", Arguments: map[string]any{}})
				errc <- err
			}()
			select {
			case <-e.beta.SlowStarted:
			case <-testCtx(t).Done():
				t.Fatal("the slow call did not start")
			}
			if got := gateway.FastCalls(e.g); got != 1 {
				t.Errorf("the gateway answered %d calls itself; want 1", got)
			}
			cancel()
			select {
			case <-e.beta.SlowCancelled:
			case <-testCtx(t).Done():
				t.Fatal("the upstream server did not see the cancellation")
			}
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call = %v", err)
			}
		})
	}
}

// TestFastPathDisconnect: a call the gateway answers itself that races
// its server's disconnect is a tool error the model can read, in either
// era.
func TestFastPathDisconnect(t *testing.T) {
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := testCtx(t)
			cs := e.connect(era, nil)
			callRacingDisconnect(ctx, t, e, cs)
			if got := gateway.FastCalls(e.g); got != 1 {
				t.Errorf("the gateway answered %d calls itself; want 1", got)
			}
		})
	}
}

// TestFastPathElicitingClient: a session whose client declared
// elicitation has its calls answered by go-sdk's server, whose session
// carries the upstream server's requests on the call's stream.
func TestFastPathElicitingClient(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	cs := e.connect(eraSessions, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_beta_ask", Arguments: map[string]any{}})
	if err != nil || text(res) != "accept:Ada" {
		t.Fatalf("ask = %+v, %v", res, err)
	}
	if got := gateway.FastCalls(e.g); got != 0 {
		t.Errorf("the gateway answered %d calls itself; want 0", got)
	}
}

// TestSessionTimeout: a session that sees no request for
// Options.SessionTimeout ends (the gateway keeps the timeout, since go-sdk
// does not see the calls the gateway answers itself); the client then
// finds it gone.
func TestSessionTimeout(t *testing.T) {
	e := newEnv(t, &gateway.Options{SessionTimeout: 2 * time.Second})
	ctx := testCtx(t)
	cs := e.connect(eraSessions, nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || text(res) != "echo: x" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	if got := gateway.FastCalls(e.g); got != 1 {
		t.Errorf("the gateway answered %d calls itself; want 1", got)
	}
	// The session's end closes the client's standalone stream, and the
	// client's session with it.
	done := make(chan struct{})
	go func() { cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the session did not time out")
	}
	rc := &rawClient{t: t, url: e.URL, era: eraSessions, session: cs.ID()}
	if r := rc.post("tool_alpha_echo", rc.call("1", "tool_alpha_echo", `{"text":"x"}`, ""), nil); r.status != http.StatusNotFound {
		t.Errorf("a call in the ended session: %+v; want 404", r)
	}
}
