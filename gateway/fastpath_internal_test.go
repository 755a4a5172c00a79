package gateway

import (
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultFields: statelessResult copies every exported field of
// go-sdk's CallToolResult; a field go-sdk adds must be added there.
func TestResultFields(t *testing.T) {
	var got []string
	typ := reflect.TypeFor[mcp.CallToolResult]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			got = append(got, f.Name)
		}
	}
	want := []string{"Meta", "Content", "StructuredContent", "IsError", "InputRequests", "RequestState"}
	if !slices.Equal(got, want) {
		t.Errorf("CallToolResult's exported fields = %v; statelessResult copies %v", got, want)
	}
}
