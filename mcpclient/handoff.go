package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The content handoff: decoding a large tool result once.
//
// go-sdk decodes a tools/call result with a streaming JSON decoder, twice
// over (the result, then again inside CallToolResult.UnmarshalJSON), each
// time copying the whole result into a buffer that starts at 32 KiB and
// doubles, and then unescapes every text item twice more: for 64 KiB of
// text that is most of a call's CPU and 600 KiB of garbage
// (docs/PERFORMANCE.md). Nothing in go-sdk's API lets a client skip it.
//
// So for a result whose "content" is a list of plain text items holding at
// least minHandoffText bytes, the streamable HTTP transport decodes those
// items itself, in one pass, and hands go-sdk the same result with
// "content": [] in their place; Manager.CallTool then puts the decoded items
// back. Everything else in the result (structuredContent, isError, _meta,
// resultType, fields a newer server adds) is still decoded by go-sdk, which
// still runs its middleware (multi round-trip retries) on it. A result with
// any other kind of item, any other field in an item, a \u escape or
// invalid UTF-8 in a text, is left to go-sdk whole: what this decodes, it
// decodes exactly as go-sdk would (TestSplitTextContent and its fuzz test
// compare the two).

// minHandoffText is the least text a result must hold to be handed off:
// below it, go-sdk's decoding costs little.
const minHandoffText = 4 << 10

// handoff carries a tools/call's decoded content from the transport to
// Manager.CallTool, through the call's context (callInfo).
type handoff struct {
	content atomic.Pointer[[]mcp.Content]
}

// reset forgets what an earlier round of the call left: every request of a
// call (multi round-trip retries, a repeat after a session renewal) gets a
// response of its own.
func (h *handoff) reset() {
	if h != nil {
		h.content.Store(nil)
	}
}

// fill puts the content the transport decoded, if it did, into res (the
// result go-sdk decoded from the same response, with its content taken
// out).
func (h *handoff) fill(res *mcp.CallToolResult) {
	if p := h.content.Swap(nil); p != nil && res != nil {
		res.Content = *p
	}
}

// handoffOf returns the handoff of the tools/call that ctx belongs to, or
// nil.
func handoffOf(ctx context.Context, method string) *handoff {
	if method != "tools/call" {
		return nil
	}
	if info, _ := ctx.Value(callInfoKey{}).(*callInfo); info != nil {
		return info.handoff
	}
	return nil
}

// take decodes resp, the response to the call h belongs to (h may be nil),
// when it can: a simple result whole (see decodedResult), else the large
// text content of one, which it takes out of resp. Otherwise it returns
// resp as it is. resp is as
// decodeShared returned it; what take returns owns its bytes.
func (h *handoff) take(resp *jsonrpc.Response) *jsonrpc.Response {
	if h == nil || resp.Error != nil {
		own(resp)
		return resp
	}
	if res, ok := simpleToolResult(resp.Result); ok {
		return &jsonrpc.Response{ID: resp.ID, Error: &decodedResult{res}, Extra: resp.Extra}
	}
	if len(resp.Result) >= minHandoffText {
		if content, rest, ok := splitTextContent(resp.Result, minHandoffText); ok {
			h.content.Store(&content)
			return &jsonrpc.Response{ID: resp.ID, Result: rest, Extra: resp.Extra}
		}
	}
	own(resp)
	return resp
}

// The whole-result handoff: most tool results are nothing but text items
// (and perhaps isError, _meta, structuredContent), and decoding those through go-sdk costs two
// streaming decoders of 32 KiB each however small the result is (most of a
// small call's allocations: docs/PERFORMANCE.md). go-sdk's JSON-RPC layer
// hands a response's error to the caller as it is, without decoding
// anything; so the transport decodes such a result itself and hands it up
// as the "error" of its response, and decodedResults, a sending middleware
// just outside go-sdk's own, turns it back into the call's result before any
// other code sees it. A result with anything else in it (an input_required
// resultType for go-sdk's multi round-trip middleware, any other kind of
// content, fields a newer server adds) takes the ordinary path.

// decodedResult carries a tools/call result that the transport decoded,
// past go-sdk's JSON-RPC layer, to decodedResults.
type decodedResult struct{ res *mcp.CallToolResult }

func (*decodedResult) Error() string {
	return "mcpclient: a decoded tools/call result escaped its middleware"
}

// decodedResults is the sending middleware that turns a decodedResult
// back into the call's result.
func decodedResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var d *decodedResult
		if err != nil && errors.As(err, &d) {
			return d.res, nil
		}
		return res, err
	}
}

// completeResult is an empty result as go-sdk decodes one marked
// "resultType": "complete" (the mark is unexported: copying this value is
// the only way to set it).
var completeResult = func() mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := r.UnmarshalJSON([]byte(`{"content":[],"resultType":"complete"}`)); err != nil {
		panic(err)
	}
	r.Content = nil
	return r
}()

// simpleToolResult decodes result, as go-sdk would, when it holds one or
// more plain text items ({"type":"text","text":...}) as its "content", and
// nothing else but "isError" (true or false), "resultType": "complete",
// "_meta" and "structuredContent".
// It reports false for anything else. result must be valid JSON
// (decodeMessage checked it).
func simpleToolResult(result []byte) (*mcp.CallToolResult, bool) {
	var (
		content                                       []mcp.Content
		meta                                          map[string]any
		structured                                    any
		isError                                       bool
		sawContent, sawError, sawStructured, complete bool
	)
	p := trusted{data: result}
	p.space()
	ok := p.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "content":
			if sawContent {
				return false
			}
			content, ok = p.textItems()
			sawContent = true
			return ok
		case "isError":
			switch {
			case sawError:
				return false
			case p.literal("true"):
				isError = true
			case !p.literal("false"):
				return false
			}
			sawError = true
			return true
		case "resultType":
			v, ok := p.plainString()
			if complete || !ok || string(v) != "complete" {
				return false
			}
			complete = true
			return true
		case "_meta":
			if meta != nil || p.pos >= len(p.data) || p.data[p.pos] != '{' {
				return false
			}
			v, ok := p.anyValue()
			if ok {
				meta = v.(map[string]any)
			}
			return ok
		case "structuredContent":
			if sawStructured {
				return false
			}
			structured, ok = p.anyValue()
			sawStructured = true
			return ok
		}
		return false
	})
	p.space()
	if !ok || !sawContent || p.pos != len(p.data) {
		return nil, false
	}
	res := new(mcp.CallToolResult)
	if complete {
		*res = completeResult
	}
	res.Content, res.IsError, res.StructuredContent = content, isError, structured
	if meta != nil {
		res.Meta = meta
	}
	return res, true
}

// anyValue decodes the value that comes next as go-sdk decodes it into an
// any (objects as map[string]any, numbers as float64), when it holds no
// \u escape and is valid UTF-8 (where decoders may differ).
func (p *trusted) anyValue() (any, bool) {
	start := p.pos
	if !p.skipValue() {
		return nil, false
	}
	raw := p.data[start:p.pos]
	if bytes.Contains(raw, []byte(`\u`)) || !utf8.Valid(raw) {
		return nil, false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	return v, true
}

// splitTextContent returns the items of result's "content" when they are
// all plain text items ({"type":"text","text":...}, in either order, and
// nothing else) holding at least minText bytes of text, with result minus
// them ("content": []). It reports false for anything else. result must be
// valid JSON (decodeMessage checked it): this only finds its way through.
func splitTextContent(result []byte, minText int) (content []mcp.Content, rest []byte, ok bool) {
	p := trusted{data: result}
	p.space()
	start, end := -1, -1
	ok = p.object(func(key []byte) (ok bool) {
		if string(key) != "content" {
			return p.skipValue()
		}
		if start >= 0 {
			return false // twice
		}
		start = p.pos
		content, ok = p.textItems()
		end = p.pos
		return ok
	})
	if !ok {
		return nil, nil, false
	}
	total := 0
	for _, c := range content {
		total += len(c.(*mcp.TextContent).Text)
	}
	if start < 0 || total < minText {
		return nil, nil, false
	}
	rest = make([]byte, 0, len(result)-(end-start)+2)
	rest = append(rest, result[:start]...)
	rest = append(rest, "[]"...)
	rest = append(rest, result[end:]...)
	return content, rest, true
}

// trusted walks JSON known to be valid.
type trusted struct {
	data []byte
	pos  int
}

func (p *trusted) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// spaceThen skips white space and reports whether anything follows.
func (p *trusted) spaceThen() bool {
	p.space()
	return p.pos < len(p.data)
}

// object walks the object that comes next, calling member with each key
// (keys with escapes are refused: go-sdk's job) and the walker at its
// value, which member must consume. It reports whether the object was
// walked to its end with every member accepted.
func (p *trusted) object(member func(key []byte) bool) bool {
	if !p.consume('{') {
		return false
	}
	for first := true; ; first = false {
		p.space()
		if p.consume('}') {
			return true
		}
		if !first && (!p.consume(',') || !p.spaceThen()) {
			return false
		}
		key, ok := p.plainString()
		if !ok {
			return false
		}
		p.space()
		if !p.consume(':') {
			return false
		}
		p.space()
		if !member(key) {
			return false
		}
	}
}

// literal consumes lit (true, false or null) if it comes next.
func (p *trusted) literal(lit string) bool {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
		return false
	}
	p.pos += len(lit)
	return true
}

func (p *trusted) consume(c byte) bool {
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// stringEnd returns the index just past the string starting at p.pos (a
// quote), and whether it holds escapes.
func (p *trusted) stringEnd() (end int, escaped, ok bool) {
	d := p.data
	i := p.pos + 1
	for {
		k := bytes.IndexByte(d[i:], '"')
		if k < 0 {
			return 0, false, false
		}
		i += k
		n := 0 // backslashes before the quote
		for j := i - 1; j > p.pos && d[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			escaped = escaped || bytes.IndexByte(d[p.pos+1:i], '\\') >= 0
			return i + 1, escaped, true
		}
		escaped = true
		i++
	}
}

// plainString reads a string without escapes and returns its bytes.
func (p *trusted) plainString() ([]byte, bool) {
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, false
	}
	end, escaped, ok := p.stringEnd()
	if !ok || escaped {
		return nil, false
	}
	s := p.data[p.pos+1 : end-1]
	p.pos = end
	return s, true
}

// skipValue skips one value.
func (p *trusted) skipValue() bool {
	depth := 0
	for p.pos < len(p.data) {
		switch c := p.data[p.pos]; c {
		case '"':
			end, _, ok := p.stringEnd()
			if !ok {
				return false
			}
			p.pos = end
		case '{', '[':
			depth++
			p.pos++
		case '}', ']':
			if depth == 0 {
				return true // the end of the enclosing object
			}
			depth--
			p.pos++
		case ',':
			if depth == 0 {
				return true
			}
			p.pos++
		default:
			p.pos++ // white space, or a number or literal
		}
		if depth == 0 && p.pos < len(p.data) {
			switch p.data[p.pos] {
			case ',', '}', ']':
				return true
			}
		}
	}
	return depth == 0
}

// textItems reads an array of one or more text items.
func (p *trusted) textItems() ([]mcp.Content, bool) {
	if !p.consume('[') {
		return nil, false
	}
	var content []mcp.Content
	for {
		p.space()
		if len(content) > 0 {
			if p.consume(']') {
				return content, true
			}
			if !p.consume(',') {
				return nil, false
			}
			p.space()
		}
		text, ok := p.textItem()
		if !ok {
			return nil, false
		}
		content = append(content, &mcp.TextContent{Text: text})
	}
}

// textItem reads one {"type":"text","text":"..."} object.
func (p *trusted) textItem() (string, bool) {
	var text string
	var sawType, sawText bool
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			v, ok := p.plainString()
			if sawType || !ok || string(v) != "text" {
				return false
			}
			sawType = true
			return true
		case "text":
			if sawText || p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return false
			}
			end, _, ok := p.stringEnd()
			if !ok {
				return false
			}
			if text, ok = unquoteSimple(p.data[p.pos:end]); !ok {
				return false
			}
			p.pos, sawText = end, true
			return true
		}
		return false // annotations, _meta, ...: go-sdk's job
	})
	return text, ok && sawType && sawText
}

// unquoteSimple decodes a JSON string (valid, with its quotes) that has no
// \u escape and is valid UTF-8; it reports false for any other.
func unquoteSimple(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	in := v[1 : len(v)-1]
	if !utf8.Valid(in) {
		return "", false // go-sdk replaces invalid bytes: its job
	}
	i := bytes.IndexByte(in, '\\')
	if i < 0 {
		return string(in), true
	}
	var out strings.Builder
	out.Grow(len(in))
	for {
		out.Write(in[:i])
		if i+1 >= len(in) {
			return "", false
		}
		var c byte
		switch in[i+1] {
		case '"', '\\', '/':
			c = in[i+1]
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default:
			return "", false // \u: go-sdk's job
		}
		out.WriteByte(c)
		in = in[i+2:]
		if i = bytes.IndexByte(in, '\\'); i < 0 {
			out.Write(in)
			return out.String(), true
		}
	}
}
