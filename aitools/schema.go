package aitools

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// emptyObjectSchema is the input schema of a tool that declares none.
const emptyObjectSchema = `{"type":"object","properties":{}}`

// schema is one version of a tool's input or output schema: its JSON, the
// decoded form handed to LLM SDKs, and its validator, compiled on first
// use. It is immutable but for the lazily compiled validator, and shared
// by every ToolSet (and every catalog refresh) while the schema's bytes do
// not change.
type schema struct {
	raw  json.RawMessage // the schema as JSON
	hash [sha256.Size]byte
	m    map[string]any // decoded; shared, never modified
	err  error          // why raw could not be produced or decoded, if so

	once      sync.Once
	validator *jsonschema.Schema // nil when there is nothing to enforce
	cerr      error              // why compiling failed, if so
}

// newSchema returns the schema for v, a tool's InputSchema or
// OutputSchema as go-sdk holds it (a map[string]any from a client, or any
// value that marshals to JSON).
func newSchema(v any, raw []byte, hash [sha256.Size]byte, err error) *schema {
	s := &schema{raw: raw, hash: hash, err: err}
	if err == nil {
		if m, ok := v.(map[string]any); ok {
			s.m = m // as the client decoded it; no need to decode again
			return s
		}
		d, err := decodeJSON(raw) // decode.go
		if err != nil {
			// As encoding/json leaves it (what it decoded, and its error).
			d = nil
			if err := json.Unmarshal(raw, &d); err != nil {
				s.err = fmt.Errorf("decoding schema: %w", err)
			}
		}
		switch d := d.(type) {
		case map[string]any:
			s.m = d
		case bool:
			// A boolean schema is valid JSON Schema, and enforced as such;
			// SDKs want an object, so they get the empty object schema.
		default:
			if s.err == nil {
				s.err = fmt.Errorf("schema is a JSON %s, not an object", jsonKind(d))
			}
		}
	}
	if s.m == nil {
		s.m = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

// marshalSchema returns v as JSON and the hash of that JSON. A nil v is
// absent; the result is then nil.
func marshalSchema(v any) ([]byte, [sha256.Size]byte, error) {
	var raw []byte
	switch v := v.(type) {
	case nil:
		return nil, [sha256.Size]byte{}, nil
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, [sha256.Size]byte{}, fmt.Errorf("encoding schema: %w", err)
		}
	}
	return raw, sha256.Sum256(raw), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// compiled returns the validator, compiling it on first use. A nil
// validator with a nil error means there is nothing to enforce (a `true`
// schema); a non-nil error means the schema could not be compiled.
// The first failure is logged, naming the tool.
func (s *schema) compiled(cfg *config, serverID, name string) (*jsonschema.Schema, error) {
	s.once.Do(func() {
		switch {
		case s.err != nil:
			s.cerr = s.err
		case cfg.maxSchemaBytes > 0 && len(s.raw) > cfg.maxSchemaBytes:
			s.cerr = fmt.Errorf("schema is %d bytes, more than the limit of %d", len(s.raw), cfg.maxSchemaBytes)
		default:
			cfg.compiles.Add(1)
			s.validator, s.cerr = compile(s.raw)
		}
		if s.cerr != nil {
			cfg.logger.Warn("tool input schema not enforced: it cannot be compiled",
				"server", serverID, "tool", name, "error", s.cerr)
		}
	})
	return s.validator, s.cerr
}

// schemaURL is where a schema being compiled lives. Relative $refs resolve
// against it (or against the schema's $id); nothing is ever loaded.
const schemaURL = "urn:agentmcp:tool-input-schema"

// compile compiles a JSON Schema: draft 2020-12 unless $schema says
// otherwise (draft-07, and the other drafts the validator knows, are
// recognised by $schema). References outside the schema are never
// loaded, from the network or from files: they fail the compilation.
func compile(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decoding schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	var refused noLoader
	c.UseLoader(&refused) // the default loader reads files
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil && refused.url != "" {
		// The validator's error does not unwrap to the loader's.
		return nil, fmt.Errorf("%w: %s", ErrExternalRef, refused.url)
	}
	return sch, err
}

// noLoader refuses every reference outside the schema, and remembers the
// first.
type noLoader struct{ url string }

func (l *noLoader) Load(url string) (any, error) {
	if l.url == "" {
		l.url = url
	}
	return nil, fmt.Errorf("%w: %s", ErrExternalRef, url)
}

// ErrExternalRef is wrapped when a schema refers to another document
// ($ref to a URL or a file). Such references are never followed.
var ErrExternalRef = errors.New("external $ref not loaded")

// maxProblems caps the problems an ArgumentsError reports; maxCollected
// caps those collected before sorting.
const (
	maxProblems  = 8
	maxCollected = 256
)

// problems turns a validation error into problems a model can act on:
// where in the arguments, and what is wrong there.
func problems(err error, args any) []Problem {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []Problem{{Message: err.Error()}}
	}
	printer := message.NewPrinter(language.English)
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(out) == maxCollected {
			return
		}
		switch e.ErrorKind.(type) {
		case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
			// Containers: what is wrong is in their causes.
		default:
			if len(e.Causes) == 0 || isAlternatives(e.ErrorKind) {
				out = append(out, Problem{
					Path:    fieldPath(e.InstanceLocation, args),
					Keyword: keyword(e.ErrorKind),
					Message: e.ErrorKind.LocalizedString(printer),
				})
				if len(e.Causes) == 0 {
					return
				}
			}
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(verr)
	if len(out) == 0 {
		return []Problem{{Message: verr.Error()}}
	}
	// The validator visits properties in map order; report them in a
	// stable one (the arguments as a whole first).
	slices.SortStableFunc(out, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	if len(out) > maxProblems {
		more := fmt.Sprintf("and %d more problems", len(out)-maxProblems)
		if len(out) == maxCollected {
			more = "and more problems"
		}
		out = append(out[:maxProblems], Problem{Message: more})
	}
	return out
}

// isAlternatives reports whether k is a keyword whose failure is best
// reported itself, before the failures of its alternatives.
func isAlternatives(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.AnyOf, *kind.OneOf:
		return true
	}
	return false
}

func keyword(k jsonschema.ErrorKind) string {
	p := k.KeywordPath()
	if len(p) == 0 {
		return ""
	}
	return p[0]
}

// fieldPath names the value at loc in args the way a model writes it:
// properties joined with ".", array indices in brackets ("items[2].name").
// Properties whose names are not simple identifiers are quoted in
// brackets (`["a.b"]`).
func fieldPath(loc []string, args any) string {
	var b strings.Builder
	v := args
	for _, tok := range loc {
		switch cur := v.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(cur) {
				v = cur[i]
			} else {
				v = nil
			}
		default:
			if simpleName(tok) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(tok)
			} else {
				b.WriteString("[" + strconv.Quote(tok) + "]")
			}
			if m, ok := cur.(map[string]any); ok {
				v = m[tok]
			} else {
				v = nil
			}
		}
	}
	return b.String()
}

func simpleName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(keyByte(c) || c == '$') || (i == 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
