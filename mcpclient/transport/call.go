package transport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/agentmcp/agentmcp/internal/jsonrpcwire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call describes one request for the transport: what the caller knows
// that the transport would otherwise decode the params again for, and
// where the transport leaves what it decoded of the result. [WithCall]
// puts it in the request's context; that is the only value the transports
// of this package read from a context.
//
// A Call belongs to one caller's request (all of its rounds: multi
// round-trip retries and repeats go out with the same context). It may be
// used from the transport's goroutines while the request is in flight.
type Call struct {
	// Name is the tool or prompt name, or the resource URI, of a
	// tools/call, prompts/get or resources/read: the Mcp-Name header of a
	// 2026-07-28 request. Empty means the transport reads it from the
	// params.
	Name string

	// Tool is the definition of the tool a tools/call calls, for the
	// Mcp-Param-* headers its input schema asks for (2026-07-28). nil
	// means none are sent.
	Tool *mcp.Tool

	// SplitText, for a tools/call, lets the transport decode the plain
	// text items of the result itself, in one pass, and hand go-sdk the
	// result without them ("content": []): go-sdk's decoding of a large
	// text costs several copies and a streaming decoder
	// (docs/PERFORMANCE.md). [Call.FillContent] puts them back.
	SplitText bool

	// content holds the text items taken out of the response to the
	// request's latest round, if any.
	content atomic.Pointer[[]mcp.Content]

	// needsInput holds the result of a request sent with CallDirect that
	// needs input (2026-07-28 input_required): the next Write of a
	// request with this Call is answered with it locally (see
	// DirectCaller).
	needsInput atomic.Pointer[[]byte]

	// answer, set on the Call of a request sent with CallDirect, takes
	// the response instead of Read: it is called once, on the caller's
	// goroutine, with the response as jsonrpcwire.DecodeShared returned
	// it (its bytes valid only during the call).
	answer func(*jsonrpc.Response)

	// heard, if set, is told of every message of the request's stream
	// other than its response, before it is handed to Read (an early
	// listen's acknowledgment, earlylisten.go).
	heard func(jsonrpc.Message)
}

type callKey struct{}

// WithCall returns a context carrying call, for the Write of a request.
func WithCall(ctx context.Context, call *Call) context.Context {
	return context.WithValue(ctx, callKey{}, call)
}

// CallFrom returns the Call that [WithCall] put in ctx, or nil.
func CallFrom(ctx context.Context) *Call {
	call, _ := ctx.Value(callKey{}).(*Call)
	return call
}

// callFrom is CallFrom.
func callFrom(ctx context.Context) *Call { return CallFrom(ctx) }

// callOf returns the Call of ctx when it may take the text of a response
// to method, or nil.
func callOf(ctx context.Context, method string) *Call {
	if method != "tools/call" {
		return nil
	}
	if call := callFrom(ctx); call != nil && call.SplitText {
		return call
	}
	return nil
}

// FillContent puts the text items the transport took out of the response
// into res, go-sdk's decoding of the same response (whose content is then
// empty). It does nothing when the transport took none: another
// transport, a result with other items, or an error. Call it once the
// request returned res.
func (c *Call) FillContent(res *mcp.CallToolResult) {
	if c == nil || res == nil {
		return
	}
	if p := c.content.Swap(nil); p != nil {
		res.Content = *p
	}
}

// reset forgets what an earlier round of the request left: every round
// gets a response of its own.
func (c *Call) reset() {
	if c != nil {
		c.content.Store(nil)
	}
}

// take returns resp, the response to a round of c's request (c may be
// nil), with the text items of its result taken out and kept in c when
// SplitText can decode them. resp is as jsonrpcwire.DecodeShared returned
// it; what take returns owns its bytes.
func (c *Call) take(resp *jsonrpc.Response) *jsonrpc.Response {
	if c != nil && resp.Error == nil {
		if content, rest, ok := jsonrpcwire.SplitText(resp.Result, 0); ok {
			c.content.Store(&content)
			return &jsonrpc.Response{ID: resp.ID, Result: rest, Extra: resp.Extra}
		}
	}
	jsonrpcwire.Own(resp)
	return resp
}

// decodeResult decodes the result of resp, the response to a request
// sent with CallDirect, into result; a JSON-RPC error is returned as is.
// resp is as jsonrpcwire.DecodeShared returned it; nothing decoded shares
// its bytes.
func decodeResult(resp *jsonrpc.Response, result any) error {
	if resp.Error != nil {
		return resp.Error
	}
	if res, ok := result.(*mcp.CallToolResult); ok {
		return decodeToolResult(resp.Result, res)
	}
	return json.Unmarshal(resp.Result, result)
}

// decodeToolResult decodes a tools/call result into res: its plain text
// items in one pass (jsonrpcwire.SplitText), and the rest itself when it
// is simple (simpleResult), else with go-sdk's own decoding of the result
// (input_required results, other kinds of content, fields a newer server
// adds), exactly as go-sdk's session would.
func decodeToolResult(data []byte, res *mcp.CallToolResult) error {
	content, rest, split := jsonrpcwire.SplitText(data, 0)
	if split {
		if simpleResult(rest, res) {
			res.Content = content
			return nil
		}
		data = rest
	} else {
		data = bytes.Clone(data) // go-sdk's decoding may keep slices of it
	}
	if err := res.UnmarshalJSON(data); err != nil {
		return err
	}
	if split {
		res.Content = content
	}
	return nil
}

// simpleResult decodes rest, a tools/call result whose text items
// SplitText took out ("content": []), into res when it holds nothing else
// than _meta, structuredContent, isError and a "complete" resultType, each
// key spelled exactly and once (go-sdk matches keys case-sensitively), in
// valid UTF-8. It reports false for anything else (an input_required
// result, fields a newer server adds), leaving res partly filled. _meta and
// structuredContent, when not null, are decoded as encoding/json decodes
// them, by jsonrpcwire.DecodeAny.
func simpleResult(rest []byte, res *mcp.CallToolResult) bool {
	if !utf8.Valid(rest) {
		return false
	}
	var seen [5]bool
	err := jsonrpcwire.Members(rest, func(key, v []byte) error {
		i := slices.Index(simpleKeys[:], string(key))
		if i < 0 || seen[i] {
			return errNotSimple
		}
		seen[i] = true
		null := string(v) == "null"
		switch i {
		case 0: // content
			if !isEmptyArray(v) {
				return errNotSimple
			}
		case 1: // _meta
			if !null {
				m, err := jsonrpcwire.DecodeAny(v)
				meta, ok := m.(map[string]any)
				if err != nil || !ok {
					return errNotSimple // go-sdk's decoding refuses it
				}
				res.Meta = meta
			}
		case 2: // structuredContent
			if !null {
				sc, err := jsonrpcwire.DecodeAny(v)
				if err != nil {
					return err
				}
				res.StructuredContent = sc
			}
		case 3: // isError
			switch string(v) {
			case "true":
				res.IsError = true
			case "false", "null":
			default:
				return errNotSimple
			}
		case 4: // resultType
			switch string(v) {
			case `"complete"`, `""`, "null":
			default:
				return errNotSimple
			}
		}
		return nil
	})
	return err == nil
}

// simpleKeys are the keys of a simple tools/call result (simpleResult).
var simpleKeys = [5]string{"content", "_meta", "structuredContent", "isError", "resultType"}

var errNotSimple = errors.New("not a simple result")

// isEmptyArray reports whether v, a valid JSON value, is an empty array.
func isEmptyArray(v []byte) bool {
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return false
	}
	return len(bytes.TrimLeft(v[1:len(v)-1], " \t\r\n")) == 0
}

var metaVersionKey = []byte(`"io.modelcontextprotocol/protocolVersion":"`)

// metaProtocolVersion returns the protocol version in a request's
// params._meta (2026-07-28 requests carry one), or "".
func metaProtocolVersion(msg jsonrpc.Message) string {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return ""
	}
	i := bytes.Index(req.Params, metaVersionKey)
	if i < 0 {
		return ""
	}
	rest := req.Params[i+len(metaVersionKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// setModernHeaders sets Mcp-Method, Mcp-Name and Mcp-Param-* on a
// 2026-07-28 request (SEP-2243). It does nothing on legacy requests.
func setModernHeaders(ctx context.Context, h http.Header, call *jsonrpc.Request) {
	if h.Get(headerProtocolVersion) < ProtocolModern {
		return
	}
	if v, ok := methodHeaders[call.Method]; ok {
		h[headerMethod] = v // shared, as in setHeaders
	} else {
		h.Set(headerMethod, call.Method)
	}
	info := callFrom(ctx)
	switch call.Method {
	case "tools/call", "prompts/get", "resources/read":
	case "tasks/get", "tasks/update", "tasks/cancel":
		// The tasks extension mirrors params.taskId, which the Call
		// names.
		if info != nil && info.Name != "" {
			h.Set(headerName, encodeHeaderValue(info.Name))
		}
		return
	default:
		return
	}
	var name string
	if info != nil && info.Name != "" {
		name = info.Name
	} else {
		var p struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		}
		_ = json.Unmarshal(call.Params, &p)
		name = p.Name + p.URI
	}
	h.Set(headerName, encodeHeaderValue(name))
	if call.Method == "tools/call" && info != nil && info.Tool != nil {
		setParamHeaders(h, info.Tool, call.Params)
	}
}

// methodHeaders are the Mcp-Method values of the frequent requests.
var methodHeaders = map[string][]string{
	"tools/call": {"tools/call"}, "tools/list": {"tools/list"}, "prompts/get": {"prompts/get"},
	"prompts/list": {"prompts/list"}, "resources/read": {"resources/read"}, "resources/list": {"resources/list"},
	"resources/templates/list": {"resources/templates/list"}, "server/discover": {"server/discover"},
}

// paramBinding maps an argument, by its path of property names, to the
// header that mirrors it.
type paramBinding struct {
	path   []string
	header string
}

// toolBindings returns the x-mcp-header bindings of a tool's input schema.
// They are found again on every call rather than kept: a call already
// decodes its arguments, the walk costs little next to that and allocates
// only for the bindings it finds, and a cache keyed by tool definitions
// would hold every definition a long-lived process ever called, as
// catalogs are replaced on every reconnection and list_changed.
func toolBindings(tool *mcp.Tool) []paramBinding {
	schema := schemaObject(tool.InputSchema)
	if schema == nil {
		return nil
	}
	var prefix [8]string
	return collectBindings(schema, prefix[:0], nil)
}

// schemaObject returns a schema as a generic JSON object.
func schemaObject(schema any) map[string]any {
	if m, ok := schema.(map[string]any); ok {
		return m
	}
	if schema == nil {
		return nil
	}
	data, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return m
}

// maxBindingDepth bounds the walk of nested "properties".
const maxBindingDepth = 32

// collectBindings walks a schema's "properties" chains (only those: the
// spec allows x-mcp-header on nothing reachable otherwise). prefix is the
// path so far; only a binding found gets a copy of it.
func collectBindings(schema map[string]any, prefix []string, out []paramBinding) []paramBinding {
	props, _ := schema["properties"].(map[string]any)
	if len(prefix) >= maxBindingDepth {
		return out
	}
	for name, p := range props {
		prop, ok := p.(map[string]any)
		if !ok {
			continue
		}
		path := append(prefix, name)
		if h, ok := prop["x-mcp-header"].(string); ok && h != "" {
			out = append(out, paramBinding{path: slices.Clone(path), header: h})
		}
		out = collectBindings(prop, path, out)
	}
	return out
}

func setParamHeaders(h http.Header, tool *mcp.Tool, params json.RawMessage) {
	bindings := toolBindings(tool)
	if len(bindings) == 0 {
		return
	}
	var p struct {
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return
	}
	for _, b := range bindings {
		var v any = p.Arguments
		for _, key := range b.path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[key]
		}
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case bool:
			s = strconv.FormatBool(v)
		case float64:
			if v != math.Trunc(v) || math.Abs(v) > 1<<53-1 {
				continue
			}
			s = strconv.FormatInt(int64(v), 10)
		default:
			continue // absent, null, or not a primitive
		}
		h.Set(headerParamPrefix+b.header, encodeHeaderValue(s))
	}
}

// encodeHeaderValue returns s as is when it is plain visible ASCII without
// surrounding whitespace, else as =?base64?...?= (SEP-2243).
func encodeHeaderValue(s string) string {
	plain := s == "" || (s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t')
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
