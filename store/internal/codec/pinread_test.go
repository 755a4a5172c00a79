package codec

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

func pinRecords(tb testing.TB) [][]byte {
	def := json.RawMessage(`{"description":"Lists the items of kind 7.","inputSchema":{"properties":{"limit":{"default":30,"maximum":1e2,"type":"integer"},"q":{"description":"\u003cq\u003e \"quoted\" é","type":"string"}},"type":"object"},"name":"list_items_7"}`)
	at := time.Date(2026, 12, 7, 18, 0, 0, 123456789, time.FixedZone("x", 3600))
	var out [][]byte
	for _, p := range []store.Pin{
		{Namespace: "wake/w", ServerID: "s1", Tool: "list_items_7", State: store.PinPinned, Fingerprint: "c850d906", Definition: def, PinnedAt: at, ChangedAt: at},
		{Namespace: "wake/w", ServerID: "s1", Tool: "echo", State: store.PinChanged, Fingerprint: "a", Definition: def,
			SeenFingerprint: "b", Seen: json.RawMessage(`{"name":"echo","description":"é"}`), PinnedAt: at, ChangedAt: at.UTC()},
		{Tool: "t\u00e9"},
		{},
	} {
		b, err := EncodePin(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return append(out,
		[]byte(` {"state":"pinned","definition": { "a" : [1, 2.5e-3, true, null, "x\u00e9\\"] } } `),
		[]byte(`{"state":"pinned","state":"changed"}`), []byte(`{"State":"pinned"}`), []byte(`{"extra":1,"state":"new"}`),
		[]byte(`{"definition":null}`), []byte(`{"definition":"x"}`), []byte(`{"pinnedAt":null}`), []byte(`{"pinnedAt":"yesterday"}`),
		[]byte(`{"definition":{"a":"\x"}}`), []byte(`{"definition":{"a":01}}`), []byte(`{"definition":{"a":1,}}`),
		[]byte(`{"state":"pinned"} x`), []byte(`{"state":"pinned",}`), []byte(`{`), []byte(``), []byte(`[]`), []byte(`{}`))
}

// TestDecodePinAsJSON: DecodePin reads every record as json.Unmarshal
// does, and fails where it fails.
func TestDecodePinAsJSON(t *testing.T) {
	for _, rec := range pinRecords(t) {
		checkDecodePin(t, rec)
	}
}

func checkDecodePin(t *testing.T, rec []byte) {
	t.Helper()
	var got, want store.Pin
	err := DecodePin(rec, "n/s", "srv", "tool", &got)
	werr := json.Unmarshal(rec, &want)
	want.Namespace, want.ServerID, want.Tool = "n/s", "srv", "tool"
	if (err != nil) != (werr != nil) {
		t.Fatalf("%s: error %v, json.Unmarshal's %v", rec, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", rec, got, want)
	}
}

func FuzzDecodePin(f *testing.F) {
	for _, rec := range pinRecords(f) {
		f.Add(rec)
	}
	f.Fuzz(checkDecodePin)
}

func BenchmarkDecodePin(b *testing.B) {
	rec := pinRecords(b)[0]
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			var p store.Pin
			DecodePin(rec, "n/s", "srv", "tool", &p)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var p store.Pin
			json.Unmarshal(rec, &p)
		}
	})
}
