package mcpclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callInfo is what the Manager knows about an outgoing request, passed to
// the transport through the context so that it need not decode the params
// again to set the 2026-07-28 headers.
type callInfo struct {
	name string    // tool or prompt name, or resource URI
	tool *mcp.Tool // the tool's definition, for Mcp-Param-* headers
	// handoff, for a tools/call, carries large text content decoded by the
	// transport back to CallTool (handoff.go).
	handoff *handoff
}

type callInfoKey struct{}

func withCallInfo(ctx context.Context, info *callInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, info)
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
	if h.Get(headerProtocolVersion) < protocolModern {
		return
	}
	h.Set(headerMethod, call.Method)
	switch call.Method {
	case "tools/call", "prompts/get", "resources/read":
	default:
		return
	}
	info, _ := ctx.Value(callInfoKey{}).(*callInfo)
	var name string
	if info != nil {
		name = info.name
	} else {
		var p struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		}
		_ = json.Unmarshal(call.Params, &p)
		name = p.Name + p.URI
	}
	h.Set(headerName, encodeHeaderValue(name))
	if call.Method == "tools/call" && info != nil && info.tool != nil {
		setParamHeaders(h, info.tool, call.Params)
	}
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
