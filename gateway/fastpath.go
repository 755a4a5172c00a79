//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway answers the common tools/call itself, below go-sdk's server:
// go-sdk v1.8.0 decodes a request five times on its way to a tool handler
// (the message, the _meta checks, the name, the params), each decode
// through a streaming decoder that allocates a 32 KiB buffer
// (docs/UPSTREAM.md, 1), and serves a 2026-07-28 request on a temporary
// session. The fast path decodes the body once with encoding/json, runs
// the same forwarding code as go-sdk's path (forward), and writes the
// JSON-RPC response as go-sdk's server does with an application/json
// response (what a streamable HTTP client must accept in either era).
//
// It takes a request only when it understands all of it, and only where
// go-sdk would run the tool handler: a POST that passes go-sdk's checks
// (Host, Content-Type, Accept, protocol version, the Mcp-Method and
// Mcp-Name headers of 2026-07-28), whose body is one tools/call request
// with an integer or string id, params of exactly name, arguments and
// _meta, for a tool in the catalog. Everything else goes to go-sdk's
// handler untouched, so that go-sdk answers it (and its errors are
// go-sdk's): batches, other methods, malformed JSON, unknown or expired
// session ids, a progress token, a 2026-07-28 retry carrying input
// responses, a log level, a tool whose input schema binds headers
// (x-mcp-header). A session's requests reach it only from the session's
// own user (ServeHTTP checks it first, as go-sdk would).
//
// 2025-11-25 sessions: only a session go-sdk made and the gateway holds
// (liveSession), and only when its client declared neither elicitation nor
// sampling. A request the upstream server makes during such a call then
// goes where go-sdk's path sends it too (the agent's handlers), and
// nothing needs the session's connection while the call runs; a client
// that declared either is served by go-sdk, whose session carries the
// upstream requests on the call's stream. A notifications/cancelled for a
// call the fast path runs cancels it (the upstream server is told), and
// the call ends with its session. The gateway keeps the sessions' idle
// timeout itself (go-sdk's would not see the calls it does not serve).
//
// 2026-07-28: the request's version is checked as go-sdk checks it (the
// header, and the _meta triple matching it); the call's context is the
// HTTP request's (and the gateway's: Close ends it), so a client that
// hangs up cancels the call, as go-sdk's stateless handler does; a call that needs the client's input answers
// with an input-required result (forward, callStateless), and the retry
// that carries the answer goes through go-sdk.

// maxFastBody bounds the body the gateway reads to decide; a larger one
// goes to go-sdk, which applies its own limit.
const maxFastBody = mcp.DefaultMaxRequestBodyBytes

// peekBody reads r's body up to maxFastBody and puts it back for go-sdk.
// It returns nil when the body is larger (go-sdk then reads all of it) or
// cannot be read.
func peekBody(r *http.Request) []byte {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFastBody+1))
	if err != nil {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return nil
	}
	if len(body) > maxFastBody {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return nil
	}
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// message is a JSON-RPC request as the fast path reads it.
type message struct {
	method string
	id     any    // int64 or string, as go-sdk reads an id; nil for a notification
	idKey  string // id as a map key
	params map[string]json.RawMessage
}

// decodeMessage decodes one JSON-RPC request: an object of jsonrpc
// "2.0", method, an optional id (an integer or a string) and optional
// params (an object); anything else is not ok.
func decodeMessage(body []byte) (*message, bool) {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, false
	}
	var m message
	for k, v := range top {
		switch k {
		case "jsonrpc":
			var tag string
			if !isString(v) || json.Unmarshal(v, &tag) != nil || tag != "2.0" {
				return nil, false
			}
		case "method":
			if !isString(v) || json.Unmarshal(v, &m.method) != nil {
				return nil, false
			}
		case "id":
			id, key, ok := decodeID(v)
			if !ok {
				return nil, false
			}
			m.id, m.idKey = id, key
		case "params":
			if !isObject(v) || json.Unmarshal(v, &m.params) != nil {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if _, ok := top["jsonrpc"]; !ok || m.method == "" {
		return nil, false
	}
	return &m, true
}

// decodeID decodes a JSON-RPC id the fast path takes: a string, or an
// integer that a float64 holds exactly (go-sdk reads ids as float64).
func decodeID(raw json.RawMessage) (id any, key string, ok bool) {
	if isString(raw) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, "", false
		}
		return s, "s" + s, true
	}
	digits := string(raw)
	digits = strings.TrimPrefix(digits, "-")
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return nil, "", false
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return nil, "", false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil, "", false
	}
	return n, "n" + strconv.FormatInt(n, 10), true
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }
func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// callParams returns the params of a tools/call the fast path takes:
// exactly name (a string), arguments (an object or null) and _meta (an
// object), with the _meta keys decoded raw for the era's checks. The
// params' Meta is left empty: forward reads no more of it than the
// progress token (which the fast path leaves to go-sdk) and the
// capabilities (which the caller passes).
func callParams(m *message) (*mcp.CallToolParamsRaw, map[string]json.RawMessage, bool) {
	if m.method != "tools/call" || m.id == nil || m.params == nil {
		return nil, nil, false
	}
	var p mcp.CallToolParamsRaw
	var meta map[string]json.RawMessage
	for k, v := range m.params {
		switch k {
		case "name":
			if !isString(v) || json.Unmarshal(v, &p.Name) != nil {
				return nil, nil, false
			}
		case "arguments":
			if !isObject(v) && string(v) != "null" {
				return nil, nil, false
			}
			p.Arguments = v
		case "_meta":
			if !isObject(v) || json.Unmarshal(v, &meta) != nil {
				return nil, nil, false
			}
			if _, ok := meta["progressToken"]; ok {
				return nil, nil, false
			}
		default:
			return nil, nil, false
		}
	}
	if _, ok := m.params["name"]; !ok {
		return nil, nil, false
	}
	return &p, meta, true
}

// httpChecked reports whether r passes the checks go-sdk's handler makes
// of every POST before it reads the body: the Host (DNS rebinding), the
// Content-Type, the Accept header, no Last-Event-ID.
func (g *Gateway) httpChecked(r *http.Request) bool {
	if r.Method != http.MethodPost || len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if !g.opts.AnyHost {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil &&
			isLoopback(local.String()) && !isLoopback(r.Host) {
			return false
		}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	return jsonOK && streamOK
}

// isLoopback is go-sdk's test of a loopback host (with or without a port).
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// accepts is go-sdk's reading of a streamable HTTP request's Accept.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// fastTool returns the catalog entry of a tool the fast path may call.
func (g *Gateway) fastTool(key string) (toolEntry, bool) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	t, ok := g.cat.tools[key]
	return t, ok && !t.headerParams
}

// serveSessionFast answers a 2025-11-25 session's POST when it is a
// tools/call the fast path takes, or a notifications/cancelled of a call
// it runs; it reports whether it did. body is the request's body.
func (g *Gateway) serveSessionFast(w http.ResponseWriter, r *http.Request, ls *liveSession, body []byte) bool {
	if g.noFast.Load() || !g.httpChecked(r) {
		return false
	}
	if v := r.Header.Get(protocolVersionHeader); !protocol.IsSession(v) {
		return false
	}
	m, ok := decodeMessage(body)
	if !ok {
		return false
	}
	if m.method == "notifications/cancelled" && m.id == nil {
		if !ls.cancelCall(m) {
			return false
		}
		w.WriteHeader(http.StatusAccepted) // as go-sdk answers a notification
		return true
	}
	p, meta, ok := callParams(m)
	if !ok {
		return false
	}
	for k := range meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return false
		}
	}
	ip := ls.ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion >= firstStateless ||
		(ip.Capabilities != nil && (ip.Capabilities.Elicitation != nil || ip.Capabilities.Sampling != nil)) {
		return false
	}
	t, ok := g.fastTool(p.Name)
	if !ok {
		return false
	}
	ctx, end, ok := ls.beginCall(r.Context(), m.idKey)
	if !ok {
		return false // an id in flight: go-sdk answers
	}
	defer end()
	g.fastCalls.Add(1)
	res, err := g.forward(ctx, ls.ss, false, nil, p, t.serverID, t.name)
	if err == nil && res != nil {
		res = sessionResult(res)
	}
	writeResponse(w, m.id, res, err)
	return true
}

// serveStatelessFast answers a 2026-07-28 POST when it is a tools/call the
// fast path takes; it reports whether it did. body is the request's body.
func (g *Gateway) serveStatelessFast(w http.ResponseWriter, r *http.Request, body []byte) bool {
	version := r.Header.Get(protocolVersionHeader)
	if g.noFast.Load() || version != firstStateless || !g.httpChecked(r) || r.Header.Get(sessionIDHeader) != "" {
		return false
	}
	m, ok := decodeMessage(body)
	if !ok {
		return false
	}
	p, meta, ok := callParams(m)
	if !ok || r.Header.Get("Mcp-Method") != m.method || r.Header.Get("Mcp-Name") != p.Name {
		return false
	}
	// The _meta triple, as go-sdk checks it: the version (matching the
	// header), the capabilities (required), the client's info (optional).
	var metaVersion string
	if v, ok := meta[mcp.MetaKeyProtocolVersion]; !ok || !isString(v) || json.Unmarshal(v, &metaVersion) != nil || metaVersion != version {
		return false
	}
	caps := new(mcp.ClientCapabilities)
	if v, ok := meta[mcp.MetaKeyClientCapabilities]; !ok || !isObject(v) || json.Unmarshal(v, caps) != nil {
		return false
	}
	if v, ok := meta[mcp.MetaKeyClientInfo]; ok {
		var impl mcp.Implementation
		if !isObject(v) || json.Unmarshal(v, &impl) != nil {
			return false
		}
	}
	if _, ok := meta[mcp.MetaKeyLogLevel]; ok {
		return false
	}
	t, ok := g.fastTool(p.Name)
	if !ok {
		return false
	}
	g.fastCalls.Add(1)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(g.ctx, cancel)()
	res, err := g.forward(ctx, nil, true, caps, p, t.serverID, t.name)
	if err == nil && res != nil {
		res, err = g.statelessResult(res)
	}
	writeResponse(w, m.id, res, err)
	return true
}

// sessionResult is a result as go-sdk's server sends it in a session:
// content never null.
func sessionResult(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res.Content == nil {
		r := *res
		r.Content = []mcp.Content{}
		return &r
	}
	return res
}

// statelessResult is a result as go-sdk's server sends it to a
// 2026-07-28 client: its result type set (complete, or input_required
// with input requests), content never null but in an input-required
// result, the server's info in _meta.
func (g *Gateway) statelessResult(res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	needsInput := res.InputRequests != nil
	if needsInput && (len(res.Content) > 0 || res.StructuredContent != nil) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
	}
	protos := resultProtos()
	var r mcp.CallToolResult
	if needsInput {
		r = *protos.inputRequired
	} else {
		r = *protos.complete
	}
	// The exported fields of go-sdk v1.8.0's CallToolResult
	// (TestResultFields keeps this list whole); the copy carries the
	// result type, which go-sdk does not export.
	r.Meta = res.Meta
	r.Content = res.Content
	r.StructuredContent = res.StructuredContent
	r.IsError = res.IsError
	r.InputRequests = res.InputRequests
	r.RequestState = res.RequestState
	if r.Content == nil && !needsInput {
		r.Content = []mcp.Content{}
	}
	if _, ok := r.Meta[mcp.MetaKeyServerInfo]; !ok {
		meta := make(mcp.Meta, len(r.Meta)+1)
		for k, v := range r.Meta {
			meta[k] = v
		}
		meta[mcp.MetaKeyServerInfo] = g.impl
		r.Meta = meta
	}
	return &r, nil
}

// resultProtos are CallToolResults that carry each result type: go-sdk
// sets a result's type only when it decodes one.
var resultProtos = sync.OnceValue(func() (p struct{ complete, inputRequired *mcp.CallToolResult }) {
	p.complete, p.inputRequired = new(mcp.CallToolResult), new(mcp.CallToolResult)
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), p.complete); err != nil {
		panic(err)
	}
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"input_required"}`), p.inputRequired); err != nil {
		panic(err)
	}
	return p
})

// wireResponse is a JSON-RPC response as go-sdk's jsonrpc2 writes it.
type wireResponse struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// writeResponse writes the response to the call of id as go-sdk's
// streamable server does with an application/json response.
func writeResponse(w http.ResponseWriter, id any, res *mcp.CallToolResult, err error) {
	msg := wireResponse{VersionTag: "2.0", ID: id}
	if err == nil {
		// What go-sdk's encoder makes of the result: MarshalJSON's
		// output, compact already.
		msg.Result, err = res.MarshalJSON()
	}
	if err != nil {
		msg.Result = nil
		msg.Error = wireError(err)
	}
	data, err := marshal(&msg)
	if err != nil {
		http.Error(w, "encoding the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "application/json")
	w.Write(data)
}

// wireError is a handler's error on the wire, as go-sdk's jsonrpc2 makes
// it: a JSON-RPC error as it is, else its message with the code of the
// JSON-RPC error it wraps, if any.
func wireError(err error) *jsonrpc.Error {
	if e, ok := err.(*jsonrpc.Error); ok {
		return e
	}
	e := &jsonrpc.Error{Message: err.Error()}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) {
		e.Code = wrapped.Code
	}
	return e
}

// marshal is go-sdk's jsonrpc2 encoding: encoding/json without HTML
// escaping at the top level.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// beginCall registers a fast-path call of the session under its id key;
// the call's context ends with the session, the gateway, or a
// notifications/cancelled for it (not with the HTTP request: in a session,
// a client that hangs up has not cancelled, as with go-sdk's server). It
// is not ok when a call of that id is in flight.
func (ls *liveSession) beginCall(parent context.Context, key string) (context.Context, func(), bool) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	ls.mu.Lock()
	if _, dup := ls.calls[key]; dup {
		ls.mu.Unlock()
		cancel()
		return nil, nil, false
	}
	if ls.calls == nil {
		ls.calls = map[string]context.CancelFunc{}
	}
	ls.calls[key] = cancel
	ls.mu.Unlock()
	stop := context.AfterFunc(ls.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
		ls.mu.Lock()
		delete(ls.calls, key)
		ls.mu.Unlock()
	}, true
}

// cancelCall cancels the fast-path call a notifications/cancelled names;
// it reports whether there was one (else the notification is go-sdk's).
func (ls *liveSession) cancelCall(m *message) bool {
	raw, ok := m.params["requestId"]
	if !ok {
		return false
	}
	_, key, ok := decodeID(raw)
	if !ok {
		return false
	}
	ls.mu.Lock()
	cancel, ok := ls.calls[key]
	ls.mu.Unlock()
	if !ok {
		return false
	}
	cancel()
	return true
}
