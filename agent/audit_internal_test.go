package agent

import (
	"encoding/json"
	"testing"
)

// TestAuditArgsCanonical: the arguments a map marshals to, which the
// recorder hashes without canonicalising them again, are their canonical
// JSON.
func TestAuditArgsCanonical(t *testing.T) {
	for _, args := range []map[string]any{
		{},
		{"z": 1, "a": "x<y&z", "m": map[string]any{"k2": []any{1.5, 1e21, nil, true}, "k1": json.Number("12.50")}},
		{"text": "h\u00e9llo \u2028", "n": 3.0, "neg": -0.25},
	} {
		v, canon := argsOf(args)
		if !canon {
			t.Fatalf("argsOf(%v) is not marked canonical", args)
		}
		want, err := canonicalArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(v.(json.RawMessage)); got != string(want) {
			t.Errorf("argsOf(%v) = %s, canonical %s", args, got, want)
		}
	}
}
