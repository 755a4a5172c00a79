package aitools

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A Validator checks JSON values against one JSON Schema, compiled as
// input schemas are (draft 2020-12 unless $schema names another; no
// reference to another document is ever loaded). mcpclient validates
// tools' structured results against their output schemas with it. It is
// safe for concurrent use.
type Validator struct {
	s *jsonschema.Schema // nil: nothing to enforce (a `true` schema)
}

// NewValidator compiles schema, given as JSON or as any value that
// marshals to JSON (a decoded map). An error says why it cannot be
// enforced: it is not JSON, refers to another document
// (ErrExternalRef), or is not a valid schema.
func NewValidator(schema any) (*Validator, error) {
	raw, _, err := marshalSchema(schema)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return &Validator{}, nil
	}
	s, err := compile(raw)
	if err != nil {
		return nil, err
	}
	return &Validator{s: s}, nil
}

// Validate checks value, any value that marshals to JSON (what
// encoding/json decodes, a json.RawMessage, a struct), and returns the
// ways it breaks the schema, nil when it conforms. Paths name the
// offending values as Problems of arguments do.
func (v *Validator) Validate(value any) []Problem {
	if v == nil || v.s == nil {
		return nil
	}
	var raw []byte
	switch x := value.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		var err error
		if raw, err = json.Marshal(value); err != nil {
			return []Problem{{Message: "cannot be encoded as JSON: " + err.Error()}}
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []Problem{{Message: fmt.Sprintf("not valid JSON: %v", err)}}
	}
	if err := v.s.Validate(doc); err != nil {
		return problems(err, doc)
	}
	return nil
}
