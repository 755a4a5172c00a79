package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// Options configures ToolResults. The zero value, or nil, gives the
// defaults each field documents.
type Options struct {
	// Concurrency caps the calls run at once. Zero means
	// aitools.DefaultConcurrency (8).
	Concurrency int

	// Budget, if set, caps what each result puts in the model's context
	// (BudgetToolResult), keeps the rest, and answers calls of the read
	// meta-tool (offer it with ReadTool). Nil means results go in whole.
	Budget *aitools.Budget
}

// Tools returns the tool definitions of set, for MessageNewParams.Tools.
func Tools(set *aitools.ToolSet) []anthropic.ToolUnionParam {
	out := make([]anthropic.ToolUnionParam, 0, set.Len())
	for t := range set.All() {
		tool := &anthropic.ToolParam{Name: t.Key, InputSchema: inputSchema(t.InputSchema)}
		if d := t.Description; d != "" {
			tool.Description = anthropic.String(d)
		} else if t.Title != "" {
			tool.Description = anthropic.String(t.Title)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: tool})
	}
	return out
}

// inputSchema splits a JSON Schema object into the SDK's fields; keywords
// other than type, properties and required travel as extra fields.
func inputSchema(m map[string]any) anthropic.ToolInputSchemaParam {
	var s anthropic.ToolInputSchemaParam
	for k, v := range m {
		switch k {
		case "type":
			// Always "object".
		case "properties":
			s.Properties = v
		case "required":
			if req, ok := v.([]any); ok {
				for _, r := range req {
					if r, ok := r.(string); ok {
						s.Required = append(s.Required, r)
					}
				}
				continue
			}
			fallthrough
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s
}

// ToolResults runs the tool_use blocks of an assistant message's content
// and returns one tool_result block per call, in order, each with the
// call's tool_use_id: the content of the next user message. Other blocks
// are ignored.
func ToolResults(ctx context.Context, set *aitools.ToolSet, content []anthropic.ContentBlockUnion, opts *Options) []anthropic.ContentBlockParamUnion {
	var batch []aitools.Call
	for _, b := range content {
		if b.Type == "tool_use" {
			batch = append(batch, aitools.Call{ID: b.ID, Key: b.Name, Args: json.RawMessage(b.Input)})
		}
	}
	concurrency := 0
	var budget *aitools.Budget
	if opts != nil {
		concurrency, budget = opts.Concurrency, opts.Budget
	}
	var outs []aitools.Outcome
	if budget != nil {
		outs = budget.ExecuteAll(ctx, set, batch, concurrency)
	} else {
		outs = set.ExecuteAll(ctx, batch, concurrency)
	}
	blocks := make([]anthropic.ContentBlockParamUnion, len(outs))
	for i, o := range outs {
		blocks[i] = anthropic.ContentBlockParamUnion{OfToolResult: BudgetToolResult(o, budget)}
	}
	return blocks
}

// ToolResult returns the tool_result block for an outcome: the result's
// content (text, and images in the formats the API accepts; anything
// else as a short text note), or the error's text with is_error set.
func ToolResult(o aitools.Outcome) *anthropic.ToolResultBlockParam { return BudgetToolResult(o, nil) }

// BudgetToolResult is ToolResult within budget b: a result whose text and
// inlined images (each counted by its base64 size) fit b is rendered as
// ToolResult renders it; a larger one becomes b.Text (images as notes
// with their size, the text cut and the rest kept for the read
// meta-tool). A nil b cuts nothing.
func BudgetToolResult(o aitools.Outcome, b *aitools.Budget) *anthropic.ToolResultBlockParam {
	r := &anthropic.ToolResultBlockParam{ToolUseID: o.Call.ID}
	if o.Err != nil {
		r.IsError = anthropic.Bool(true)
		r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: o.Err.Error()}}}
		return r
	}
	res := o.Result
	if b != nil && !b.Fits(contextSize(res)) {
		r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: b.Text(res)}}}
		return r
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: aitools.ResultText(res)}}}
		return r
	}
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && imageType(img.MIMEType) {
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
				Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
					Data:      base64.StdEncoding.EncodeToString(img.Data),
					MediaType: anthropic.Base64ImageSourceMediaType(img.MIMEType),
				}},
			}})
			continue
		}
		if text := aitools.ContentText(c); text != "" {
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: text}})
		}
	}
	return r
}

// contextSize is what res takes in a request as ToolResult renders it:
// its text, and each inlined image's base64.
func contextSize(res *mcp.CallToolResult) int {
	n := len(aitools.ResultText(res))
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && imageType(img.MIMEType) {
			n += base64.StdEncoding.EncodedLen(len(img.Data))
		}
	}
	return n
}

// ReadTool returns the read meta-tool (aitools.ReadToolName), to offer
// next to Tools when Options.Budget is set.
func ReadTool() anthropic.ToolUnionParam {
	def := aitools.ReadToolDef()
	tool := &anthropic.ToolParam{Name: def.Name, Description: anthropic.String(def.Description),
		InputSchema: inputSchema(def.InputSchema.(map[string]any))}
	return anthropic.ToolUnionParam{OfTool: tool}
}

// imageType reports whether the API accepts images of MIME type t.
func imageType(t string) bool {
	switch anthropic.Base64ImageSourceMediaType(t) {
	case anthropic.Base64ImageSourceMediaTypeImageJPEG, anthropic.Base64ImageSourceMediaTypeImagePNG,
		anthropic.Base64ImageSourceMediaTypeImageGIF, anthropic.Base64ImageSourceMediaTypeImageWebP:
		return true
	}
	return false
}
