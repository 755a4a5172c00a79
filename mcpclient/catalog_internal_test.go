package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHeaderAnnotationsDepth: a schema nested deeper than go-sdk reads
// for its x-mcp-header rule (1000) has no annotations for it, as in
// go-sdk, even an invalid one; one nested 1000 deep is checked. (Such a
// schema cannot reach go-sdk's own ListTools, whose reading of the whole
// message stops at that depth, but reaches the Manager's transport.)
func TestHeaderAnnotationsDepth(t *testing.T) {
	schema := func(depth int) any {
		// The object itself is one level; the array the others.
		raw := `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}},"deep":` +
			strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := headerAnnotationsErr(schema(1000)); err == nil {
		t.Error("nested 1000 deep: an invalid annotation passed")
	}
	if err := headerAnnotationsErr(schema(1001)); err != nil {
		t.Errorf("nested 1001 deep: %v, want no annotations read", err)
	}
}
