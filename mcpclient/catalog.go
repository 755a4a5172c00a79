package mcpclient

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Filter selects servers. Each criterion lists the values it accepts;
// an empty criterion accepts everything, and criteria are ANDed. The zero
// Filter selects every server.
type Filter struct {
	ServerID   []string
	ServerName []string
	State      []State
}

func (f Filter) match(c *server, state State) bool {
	return (len(f.ServerID) == 0 || slices.Contains(f.ServerID, c.ID())) &&
		(len(f.ServerName) == 0 || slices.Contains(f.ServerName, c.opts.Name)) &&
		(len(f.State) == 0 || slices.Contains(f.State, state))
}

// Tool is a tool of one server. The embedded definition is a copy; its
// schemas are shared and must not be modified.
type Tool struct {
	mcp.Tool
	ServerID string `json:"serverId"`
}

// Prompt is a prompt of one server.
type Prompt struct {
	mcp.Prompt
	ServerID string `json:"serverId"`
}

// Resource is a resource of one server.
type Resource struct {
	mcp.Resource
	ServerID string `json:"serverId"`
}

// ResourceTemplate is a resource template of one server.
type ResourceTemplate struct {
	mcp.ResourceTemplate
	ServerID string `json:"serverId"`
}

// catalogs returns the catalog of every server f selects, with its id.
func (m *Manager) catalogs(f Filter) (ids []string, cats []*catalog) {
	for _, c := range m.snapshot() {
		c.mu.Lock()
		state, cat := c.state, c.cat
		c.mu.Unlock()
		if f.match(c, state) {
			ids = append(ids, c.ID())
			cats = append(cats, cat)
		}
	}
	return ids, cats
}

// ListTools returns the tools of the servers f selects, each tagged with
// its server id, in registration order.
func (m *Manager) ListTools(f Filter) []Tool {
	return tagged(m, f, func(c *catalog) []*mcp.Tool { return c.tools },
		func(t *mcp.Tool, id string) Tool { return Tool{Tool: *t, ServerID: id} })
}

// ListPrompts returns the prompts of the servers f selects.
func (m *Manager) ListPrompts(f Filter) []Prompt {
	return tagged(m, f, func(c *catalog) []*mcp.Prompt { return c.prompts },
		func(p *mcp.Prompt, id string) Prompt { return Prompt{Prompt: *p, ServerID: id} })
}

// ListResources returns the resources of the servers f selects.
func (m *Manager) ListResources(f Filter) []Resource {
	return tagged(m, f, func(c *catalog) []*mcp.Resource { return c.resources },
		func(r *mcp.Resource, id string) Resource { return Resource{Resource: *r, ServerID: id} })
}

// ListResourceTemplates returns the resource templates of the servers f
// selects.
func (m *Manager) ListResourceTemplates(f Filter) []ResourceTemplate {
	return tagged(m, f, func(c *catalog) []*mcp.ResourceTemplate { return c.templates },
		func(t *mcp.ResourceTemplate, id string) ResourceTemplate {
			return ResourceTemplate{ResourceTemplate: *t, ServerID: id}
		})
}

// tagged lists one kind of item of the servers f selects, each copied and
// tagged with its server id.
func tagged[E, T any](m *Manager, f Filter, items func(*catalog) []*E, tag func(*E, string) T) []T {
	ids, cats := m.catalogs(f)
	var out []T
	for i, cat := range cats {
		for _, it := range items(cat) {
			out = append(out, tag(it, ids[i]))
		}
	}
	return out
}

// tool returns the definition of a tool in the server's catalog, or nil.
func (c *server) tool(name string) *mcp.Tool {
	c.mu.Lock()
	cat := c.cat
	c.mu.Unlock()
	for _, t := range cat.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// validTools keeps the tools whose x-mcp-header annotations are valid, as
// go-sdk's ClientSession.ListTools does on every list (SEP-2243): a nil
// tool, or one whose annotations are invalid, is logged and left out. The
// rule is go-sdk's (validateParamHeaderAnnotations), read off the input
// schema as decoded rather than encoded and decoded again: only a tool
// with an "x-mcp-header" member on a property costs more than a walk of
// its schema's properties.
func (c *server) validTools(tools []*mcp.Tool) []*mcp.Tool {
	var out []*mcp.Tool // nil while every tool so far is valid
	for i, t := range tools {
		err := errNilTool
		if t != nil {
			err = headerAnnotationsErr(t.InputSchema)
		}
		if err == nil {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if t == nil {
			c.m.logger.Error("excluding nil tool from tools/list", "server", c.ID())
		} else {
			c.m.logger.Error("excluding tool from tools/list", "server", c.ID(), "tool", t.Name, "error", err)
		}
		if out == nil {
			out = append(make([]*mcp.Tool, 0, len(tools)-1), tools[:i]...)
		}
	}
	if out == nil {
		return tools
	}
	return out
}

var errNilTool = errors.New("nil tool")

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

// headerAnnotationsErr is go-sdk's validateParamHeaderAnnotations on a
// schema decoded by encoding/json (a map[string]any, or any other JSON
// value): the annotations of the properties, at any depth, must be
// non-empty HTTP token strings, unique (case-insensitively), on string,
// integer or boolean properties. A schema that go-sdk cannot read into
// its headerSchemaProperty (a "type" that is not a string, "properties"
// that are not an object of objects, a nesting deeper than 1000) has no
// annotations for it: valid.
func headerAnnotationsErr(schema any) error {
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
