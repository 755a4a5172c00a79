package jsonrpcwire

import (
	"encoding"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkLayoutKnown reports whether go-sdk's types that AppendParams and
// AppendJSON write field by field have exactly the fields, types and json
// tags they write, and no JSON or text marshaling of their own. A go-sdk
// that changes one of them sends everything through encoding/json until
// this package learns the change (TestSDKLayout fails meanwhile).
var sdkLayoutKnown = checkSDKLayout()

// field is one expected struct field: its name, type and json tag.
type field struct {
	name string
	typ  reflect.Type
	tag  string
}

func checkSDKLayout() bool {
	str := reflect.TypeFor[string]()
	meta := field{"Meta", reflect.TypeFor[mcp.Meta](), "_meta,omitempty"}
	cursor := field{"Cursor", str, "cursor,omitempty"}
	return plainType(reflect.TypeFor[mcp.Meta]()) &&
		hasFields(reflect.TypeFor[mcp.Implementation](),
			field{"Name", str, "name"},
			field{"Title", str, "title,omitempty"},
			field{"Description", str, "description,omitempty"},
			field{"Version", str, "version"},
			field{"WebsiteURL", str, "websiteUrl,omitempty"},
			field{"Icons", reflect.TypeFor[[]mcp.Icon](), "icons,omitempty"}) &&
		hasFields(reflect.TypeFor[mcp.CallToolParams](),
			meta,
			field{"Name", str, "name"},
			field{"Arguments", reflect.TypeFor[any](), "arguments,omitempty"},
			field{"InputResponses", reflect.TypeFor[mcp.InputResponseMap](), "inputResponses,omitempty"},
			field{"RequestState", str, "requestState,omitempty"}) &&
		hasFields(reflect.TypeFor[mcp.ListToolsParams](), meta, cursor) &&
		hasFields(reflect.TypeFor[mcp.ListPromptsParams](), meta, cursor) &&
		hasFields(reflect.TypeFor[mcp.ListResourcesParams](), meta, cursor) &&
		hasFields(reflect.TypeFor[mcp.ListResourceTemplatesParams](), meta, cursor)
}

// hasFields reports whether struct type t has exactly the fields want, in
// that order, and no marshaling of its own.
func hasFields(t reflect.Type, want ...field) bool {
	if !plainType(t) || t.NumField() != len(want) {
		return false
	}
	for i, w := range want {
		f := t.Field(i)
		if f.Name != w.name || f.Type != w.typ || f.Tag.Get("json") != w.tag {
			return false
		}
	}
	return true
}

// plainType reports whether neither t nor *t marshals itself.
func plainType(t reflect.Type) bool {
	for _, t := range []reflect.Type{t, reflect.PointerTo(t)} {
		if t.Implements(reflect.TypeFor[json.Marshaler]()) || t.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
			return false
		}
	}
	return true
}
