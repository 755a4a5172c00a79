// Package toolfilter leaves out of a tools/list answer the tools that
// go-sdk's ClientSession.ListTools leaves out (SEP-2243): a nil tool, and
// one whose input schema's x-mcp-header annotations are invalid. Package
// mcpclient's Manager applies it to the lists it sends without go-sdk's
// method.
//
// # Usage
//
// [Valid] filters a list; [Check] is the rule for one input schema. The
// rule is go-sdk's (validateParamHeaderAnnotations), read off the schema
// as encoding/json decoded it rather than encoded and decoded again: only
// a tool with an "x-mcp-header" member on a property costs more than a
// walk of its schema's properties.
//
// # Concurrency
//
// The functions keep no state; they only read the tools and schemas they
// are given.
//
// # Errors
//
// Check reports the first invalid annotation it finds, with the path of
// its property; a nil tool is left out with [ErrNilTool].
package toolfilter

import (
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Valid keeps the tools whose x-mcp-header annotations are valid, in
// order, as go-sdk's ClientSession.ListTools does on every list: a nil
// tool, or one whose annotations are invalid, is left out, and excluded
// is called with it and why. It returns tools itself when every tool is
// valid.
func Valid(tools []*mcp.Tool, excluded func(t *mcp.Tool, err error)) []*mcp.Tool {
	var out []*mcp.Tool // nil while every tool so far is valid
	for i, t := range tools {
		err := ErrNilTool
		if t != nil {
			err = Check(t.InputSchema)
		}
		if err == nil {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		excluded(t, err)
		if out == nil {
			out = append(make([]*mcp.Tool, 0, len(tools)-1), tools[:i]...)
		}
	}
	if out == nil {
		return tools
	}
	return out
}

// ErrNilTool is why Valid leaves out a nil tool.
var ErrNilTool = errors.New("nil tool")

// headerProperty is what go-sdk reads of a property of an input schema
// for its x-mcp-header rule (its headerSchemaProperty).
type headerProperty struct {
	typ        string
	header     any
	hasHeader  bool
	properties map[string]headerProperty
}

// maxSchemaDepth is the nesting beyond which go-sdk does not read a schema
// for x-mcp-header annotations (it fails to decode it: internal/json's
// limit), so that its tool is valid.
const maxSchemaDepth = 1000

// Check is go-sdk's validateParamHeaderAnnotations on a schema decoded by
// encoding/json (a map[string]any, or any other JSON value): the
// annotations of the properties, at any depth, must be non-empty HTTP
// token strings, unique (case-insensitively), on string, integer or
// boolean properties. A schema that go-sdk cannot read into
// its headerSchemaProperty (a "type" that is not a string, "properties"
// that are not an object of objects, a nesting deeper than 1000) has no
// annotations for it: valid.
func Check(schema any) error {
	if !hasHeaderAnnotation(schema, 0) {
		return nil // the common case: nothing to check
	}
	if jsonDepth(schema) > maxSchemaDepth {
		return nil
	}
	root, ok := readHeaderProperty(schema)
	if !ok || len(root.properties) == 0 {
		return nil
	}
	return checkHeaderProperties(root.properties, "", map[string]bool{})
}

// hasHeaderAnnotation reports whether an "x-mcp-header" member appears on
// an object reached from v through "properties" chains.
func hasHeaderAnnotation(v any, depth int) bool {
	obj, ok := v.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return false
	}
	props, _ := obj["properties"].(map[string]any)
	for _, p := range props {
		if po, ok := p.(map[string]any); ok {
			if _, ok := po["x-mcp-header"]; ok {
				return true
			}
			if hasHeaderAnnotation(po, depth+1) {
				return true
			}
		}
	}
	return false
}

// jsonDepth is the nesting of objects and arrays in v: 0 for a scalar.
func jsonDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, jsonDepth(e))
		}
	case []any:
		for _, e := range v {
			d = max(d, jsonDepth(e))
		}
	default:
		return 0
	}
	return d + 1
}

// readHeaderProperty reads v as go-sdk decodes JSON into its
// headerSchemaProperty (members matched by exact name; null leaves a field
// empty, but an "x-mcp-header" of null is present); ok is false where that
// decoding fails.
func readHeaderProperty(v any) (p headerProperty, ok bool) {
	if v == nil {
		return p, true
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return p, false
	}
	switch t := obj["type"].(type) {
	case nil:
	case string:
		p.typ = t
	default:
		return p, false
	}
	p.header, p.hasHeader = obj["x-mcp-header"]
	switch props := obj["properties"].(type) {
	case nil:
	case map[string]any:
		p.properties = make(map[string]headerProperty, len(props))
		for name, e := range props {
			sub, ok := readHeaderProperty(e)
			if !ok {
				return p, false
			}
			p.properties[name] = sub
		}
	default:
		return p, false
	}
	return p, true
}

// checkHeaderProperties is go-sdk's validateParamHeadersIn.
func checkHeaderProperties(props map[string]headerProperty, prefix string, seen map[string]bool) error {
	for name, prop := range props {
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		if prop.hasHeader {
			if prop.typ != "string" && prop.typ != "integer" && prop.typ != "boolean" {
				return fmt.Errorf("property %q: x-mcp-header can only be applied to primitive types (integer, string, boolean), got %q", path, prop.typ)
			}
			header, _ := prop.header.(string)
			if header == "" {
				return fmt.Errorf("property %q: x-mcp-header must be a non-empty string", path)
			}
			for _, r := range header {
				if !isTokenChar(r) {
					return fmt.Errorf("property %q: x-mcp-header value %q contains invalid character %q", path, header, r)
				}
			}
			lower := strings.ToLower(header)
			if seen[lower] {
				return fmt.Errorf("property %q: duplicate x-mcp-header value %q (case-insensitive)", path, header)
			}
			seen[lower] = true
		}
		if len(prop.properties) > 0 {
			if err := checkHeaderProperties(prop.properties, path, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// isTokenChar reports whether r may appear in an HTTP field name (tchar).
func isTokenChar(r rune) bool {
	switch {
	case r >= '0' && r <= '9', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
