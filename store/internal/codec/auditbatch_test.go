package codec

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAuditBatch: a batch's entries decode as written, in order, their
// times below the first's, gaps in their seqs, arguments or none; the
// one-record JSON form (migration 0010's) decodes; a truncated or
// unknown batch is ErrAuditBatch, never a panic (but
// for a cut between entries: the table's rows are written whole).
func TestAuditBatch(t *testing.T) {
	entries := []AuditEntry{
		{Seq: 7, At: 1_800_000_000_000_005, ServerID: []byte("srv"), Tool: []byte("echo"), Decision: []byte("allowed"), Record: []byte(`{"o":"ok"}`)},
		{Seq: 8, At: 1_800_000_000_000_001, ServerID: []byte("srv"), Tool: []byte("t\u00e9"), Decision: []byte("denied"), Record: []byte(`{}`),
			Arguments: []byte{0, 1, 2, 255}},
		{Seq: 300, At: 1_800_000_000_000_009, ServerID: []byte(""), Tool: []byte(""), Decision: []byte("asked"), Record: []byte(`{"r":"x"}`)},
	}
	b := AppendAuditBatch([]byte("prefix"), entries)[len("prefix"):]
	got, err := DecodeAuditBatch(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(entries, got); diff != "" {
		t.Fatalf("decoded (-want +got):\n%s", diff)
	}
	a, err := OpenAuditBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	for off := a.Start(); off < a.End(); {
		offs = append(offs, off)
		if _, off, err = a.Entry(off); err != nil {
			t.Fatal(err)
		}
	}
	if e, _, err := a.Entry(offs[1]); err != nil || e.Seq != 8 || string(e.Tool) != "t\u00e9" {
		t.Fatalf("the second entry by its offset: %+v, %v", e, err)
	}

	one, err := DecodeAuditBatch(nil, []byte(`[42,1800000000000005,"srv","echo","allowed","{\"o\":\"ok\"}","0001ff"]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []AuditEntry{{Seq: 42, At: 1_800_000_000_000_005, ServerID: []byte("srv"), Tool: []byte("echo"), Decision: []byte("allowed"),
		Record: []byte(`{"o":"ok"}`), Arguments: []byte{0, 1, 255}}}
	if diff := cmp.Diff(want, one); diff != "" {
		t.Fatalf("the JSON form (-want +got):\n%s", diff)
	}
	if one, err := DecodeAuditBatch(nil, []byte(`[1,2,"s","t","d","{}",""]`)); err != nil || one[0].Arguments != nil {
		t.Fatalf("the JSON form without arguments: %+v, %v", one, err)
	}

	for i := range len(b) - 1 {
		// A cut between entries is a batch of the entries before it.
		if _, err := DecodeAuditBatch(nil, b[:i]); !errors.Is(err, ErrAuditBatch) && !(slices.Contains(offs, i) && err == nil) {
			t.Errorf("a batch cut at %d of %d: %v", i, len(b), err)
		}
	}
	for _, bad := range []string{``, "\x02", `[1,2]`, `[1,2,"s","t","d","{}","zz"]`, `["x",2,"s","t","d","{}",""]`} {
		if _, err := DecodeAuditBatch(nil, []byte(bad)); !errors.Is(err, ErrAuditBatch) {
			t.Errorf("DecodeAuditBatch(%q): %v", bad, err)
		}
	}
}
