package aitools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EstimateTokens estimates how many tokens n bytes of text take in a
// model's context: one per four bytes, rounded up, the usual rule of thumb
// for English text, code and JSON (tokenizers differ; this is an estimate
// for budgets and for showing costs, not a count).
func EstimateTokens(n int) int { return (n + 3) / 4 }

// A Budget caps what one tool result puts in a model's context. The part
// of a result over the budget is kept in Results, under a handle, and the
// model is told how to read it with the read meta-tool (ReadToolName), so
// nothing is lost. One Budget may serve every call of an agent (its
// Results then hold them all), or each call may have its own. A Budget is
// safe for concurrent use; its fields must not change once in use.
type Budget struct {
	// MaxBytes caps a result's text, in bytes; zero or less means no cap
	// in bytes.
	MaxBytes int
	// MaxTokens caps it in estimated tokens (EstimateTokens); zero or less
	// means no cap in tokens. With both caps, the smaller applies.
	MaxTokens int
	// Results keeps what the budget cuts. Nil means it is dropped (the
	// model is told how much was left out).
	Results *Results
}

// limit returns the budget in bytes, or -1 for none.
func (b *Budget) limit() int {
	if b == nil {
		return -1
	}
	l := -1
	if b.MaxBytes > 0 {
		l = b.MaxBytes
	}
	if b.MaxTokens > 0 && (l < 0 || b.MaxTokens*4 < l) {
		l = b.MaxTokens * 4
	}
	return l
}

// Text renders res as ResultText does (binary content as a note with its
// size, never inlined), cut to the budget: a result over it shows its
// first bytes, cut at a character boundary, then a note that counts
// within the budget and names the handle under which the whole text is
// kept and the offset to read on from. A nil Budget cuts nothing.
func (b *Budget) Text(res *mcp.CallToolResult) string {
	full := ResultText(res)
	limit := b.limit()
	if limit < 0 || len(full) <= limit {
		return full
	}
	handle := ""
	if b.Results != nil {
		handle = b.Results.keep(full, res)
	}
	// The note first, so that the part shown leaves room for it.
	shown := 0
	var note string
	for range 2 { // the note's length depends on the part shown, slightly
		note = cutNote(handle, shown, len(full))
		shown = cutAt(full, max(limit-len(note), 0))
	}
	return full[:shown] + note
}

// cutNote is what the model is told after the part of a result shown.
func cutNote(handle string, shown, total int) string {
	if handle == "" {
		return fmt.Sprintf("\n[result cut to the context budget: %d of %d bytes shown; the rest was not kept]", shown, total)
	}
	return fmt.Sprintf("\n[result cut to the context budget: %d of %d bytes shown (about %d tokens in all). The rest is kept: call %s with handle %q and offset %d to read on.]",
		shown, total, EstimateTokens(total), ReadToolName, handle, shown)
}

// cutAt returns the largest n <= limit at which s can be cut without
// splitting a UTF-8 character.
func cutAt(s string, limit int) int {
	if limit >= len(s) {
		return len(s)
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// ReadToolName is the name of the meta-tool that reads kept results. It
// cannot collide with a ToolSet's keys, which all begin with "tool_".
const ReadToolName = "read_tool_result"

// ErrUnknownResult is wrapped when a handle names no kept result (never
// kept, or evicted to stay within ResultsOptions.MaxBytes).
var ErrUnknownResult = errors.New("unknown or evicted result handle")

// ResultsOptions configures Results. The zero value, or nil, gives the
// defaults each field documents.
type ResultsOptions struct {
	// MaxBytes caps the text kept, over all results; the oldest results
	// are evicted first to make room. Zero means 64 MiB.
	MaxBytes int
}

// Results keeps the whole text of results that a Budget cut, by handle,
// for the read meta-tool. It is safe for concurrent use.
type Results struct {
	max int

	// mu guards the fields below.
	mu    sync.Mutex
	kept  map[string]keptResult
	order []string // handles, oldest first
	size  int
	next  uint64
}

type keptResult struct {
	text string
	res  *mcp.CallToolResult
}

// NewResults returns an empty Results.
func NewResults(opts *ResultsOptions) *Results {
	r := &Results{max: 64 << 20, kept: map[string]keptResult{}}
	if opts != nil && opts.MaxBytes > 0 {
		r.max = opts.MaxBytes
	}
	return r
}

// keep stores text and returns its handle.
func (r *Results) keep(text string, res *mcp.CallToolResult) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	h := "r" + strconv.FormatUint(r.next, 10)
	r.kept[h] = keptResult{text: text, res: res}
	r.order = append(r.order, h)
	r.size += len(text)
	for r.size > r.max && len(r.order) > 1 {
		old := r.order[0]
		r.order = r.order[1:]
		r.size -= len(r.kept[old].text)
		delete(r.kept, old)
	}
	return h
}

// Result returns the whole result kept under handle, as the server sent
// it (its binary content too), for programs.
func (r *Results) Result(handle string) (*mcp.CallToolResult, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.kept[handle]
	return k.res, ok
}

// Read returns the kept text of handle from byte offset on, at most
// length bytes (zero or less: to the end), cut at character boundaries,
// with the offset to read on from (total when the text is read to its
// end) and the text's length. Reading from 0 on with each next offset
// returns every byte.
func (r *Results) Read(handle string, offset, length int) (chunk string, next, total int, err error) {
	r.mu.Lock()
	k, ok := r.kept[handle]
	r.mu.Unlock()
	if !ok {
		return "", 0, 0, fmt.Errorf("%w: %q", ErrUnknownResult, handle)
	}
	total = len(k.text)
	if offset < 0 || offset > total {
		return "", 0, total, fmt.Errorf("offset %d is outside the result's %d bytes", offset, total)
	}
	offset = cutAt(k.text, offset) // a character boundary at or before it
	end := total
	if length > 0 && offset+length < total {
		end = cutAt(k.text, offset+length)
		if end == offset { // one character longer than length
			_, size := utf8.DecodeRuneInString(k.text[offset:])
			end = offset + size
		}
	}
	return k.text[offset:end], end, total, nil
}

// ReadToolDef returns the definition of the read meta-tool, to offer the
// model next to a ToolSet's tools (as an MCP tool: its Name is
// ReadToolName, valid for every provider).
func ReadToolDef() *mcp.Tool {
	return &mcp.Tool{
		Name: ReadToolName,
		Description: "Reads more of a tool result that was cut to fit the context. " +
			"Give the handle and offset the cut result named; read on from the offset each answer gives.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"handle": map[string]any{"type": "string", "description": "The handle the cut result named."},
				"offset": map[string]any{"type": "integer", "minimum": 0, "description": "The byte offset to read from."},
				"length": map[string]any{"type": "integer", "minimum": 1, "description": "How many bytes to read at most; the budget caps it."},
			},
			"required":             []any{"handle", "offset"},
			"additionalProperties": false,
		},
	}
}

// ExecuteRead runs a call of the read meta-tool with the model's
// arguments: the part of the kept result asked for (at most length
// bytes), as text with a note of where to read on that fits the budget
// note included (so a Budget never cuts it again), and as
// structuredContent {"text", "offset", "next", "total"}. Bad arguments or
// an unknown handle give a result with isError, for the model.
func (b *Budget) ExecuteRead(_ context.Context, args json.RawMessage) *mcp.CallToolResult {
	var in struct {
		Handle string `json:"handle"`
		Offset int    `json:"offset"`
		Length int    `json:"length"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.Handle == "" {
		return errorResult("arguments must be an object with a handle (string) and an offset (integer)")
	}
	if b == nil || b.Results == nil {
		return errorResult("no result is kept here")
	}
	_, _, total, err := b.Results.Read(in.Handle, 0, 1)
	if err != nil {
		return errorResult(err.Error())
	}
	// The answer, note included, fits the budget (the note's numbers take
	// at most as many digits as total's).
	length := in.Length
	if l := b.limit(); l > 0 {
		l = max(l-len(readNote(total, total, total, in.Handle)), 1)
		if length <= 0 || length > l {
			length = l
		}
	}
	chunk, next, total, err := b.Results.Read(in.Handle, in.Offset, length)
	if err != nil {
		return errorResult(err.Error())
	}
	text := chunk
	if next < total {
		text += readNote(next-len(chunk), next, total, in.Handle)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"text": chunk, "offset": next - len(chunk), "next": next, "total": total},
	}
}

// readNote follows a part of a kept result that does not reach its end.
func readNote(from, next, total int, handle string) string {
	return fmt.Sprintf("\n[bytes %d-%d of %d; call %s with handle %q and offset %d to read on]", from, next, total, ReadToolName, handle, next)
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// Fits reports whether a result whose context cost is n bytes fits the
// budget. Adapters that inline images count each by the size it takes in
// the request (its base64).
func (b *Budget) Fits(n int) bool {
	l := b.limit()
	return l < 0 || n <= l
}

// ExecuteAll is ToolSet.ExecuteAll for a model that was offered the read
// meta-tool too: calls of ReadToolName are answered by ExecuteRead, the
// others by set, and the outcomes come back in the order of calls.
func (b *Budget) ExecuteAll(ctx context.Context, set *ToolSet, calls []Call, concurrency int) []Outcome {
	var rest []Call
	var at []int
	out := make([]Outcome, len(calls))
	for i, c := range calls {
		if c.Key == ReadToolName && b != nil {
			out[i] = Outcome{Call: c, Result: b.ExecuteRead(ctx, c.Args)}
			continue
		}
		rest = append(rest, c)
		at = append(at, i)
	}
	for j, o := range set.ExecuteAll(ctx, rest, concurrency) {
		out[at[j]] = o
	}
	return out
}
