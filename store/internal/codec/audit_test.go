package codec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// TestAppendAuditRecord: the record column AppendAuditRecord writes without
// reflection is the JSON encoding/json makes of the record's auditDoc,
// whatever its strings hold, appended after what dst held; it decodes to
// the same fields.
func TestAppendAuditRecord(t *testing.T) {
	hash := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	for _, tt := range []struct {
		name string
		r    store.AuditRecord
	}{
		{"empty", store.AuditRecord{}},
		{"call", store.AuditRecord{ServerName: "up", Caller: "api", Outcome: store.AuditOK, Duration: 1234 * time.Microsecond, ArgumentsHash: hash}},
		{"every field", store.AuditRecord{ServerName: "s", Caller: "mcp:gw", Outcome: store.AuditError, ErrorClass: "timeout",
			Reason: "the policy's rule 3", Approval: "ap_1", Duration: time.Hour, ArgumentsHash: hash, DecidedBy: "alice"}},
		{"sub-microsecond", store.AuditRecord{Duration: 999 * time.Nanosecond, Reason: "x"}},
		{"negative", store.AuditRecord{Duration: -5 * time.Millisecond}},
		{"escapes", store.AuditRecord{Reason: "a \"quoted\" \\ <b>&amp; \n\t\r\b\f\x00\x1f end", ServerName: "x<y>&z"}},
		{"unicode", store.AuditRecord{Reason: "h\u00e9llo \u2028 \u2029 \U0001F600 \u65e5\u672c", Caller: "\u00e9"}},
		{"invalid UTF-8", store.AuditRecord{Reason: "bad \xff\xfe byte", ServerName: "\xc3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.Namespace, r.ServerID, r.Tool, r.Decision = "t/a", "up", "echo", store.AuditAllowed
			want, err := json.Marshal(auditDoc{ServerName: r.ServerName, Caller: r.Caller, Outcome: r.Outcome,
				ErrorClass: r.ErrorClass, Reason: r.Reason, Approval: r.Approval, DurationMicro: r.Duration.Microseconds(),
				ArgumentsHash: r.ArgumentsHash, DecidedBy: r.DecidedBy})
			if err != nil {
				t.Fatal(err)
			}
			prefix := []byte(`{"earlier":1}`)
			got, sealed, err := AppendAuditRecord(bytes.Clone(prefix), nil, &r)
			if err != nil {
				t.Fatal(err)
			}
			if sealed != nil {
				t.Errorf("arguments column %q, want none", sealed)
			}
			if !bytes.HasPrefix(got, prefix) {
				t.Fatalf("AppendAuditRecord lost what dst held: %s", got)
			}
			if got := string(got[len(prefix):]); got != string(want) {
				t.Errorf("AppendAuditRecord = %s\nencoding/json %s", got, want)
			}
			enc, _, err := EncodeAudit(nil, r)
			if err != nil || string(enc) != string(want) {
				t.Errorf("EncodeAudit = %s, %v; want %s", enc, err, want)
			}
			back := store.AuditRecord{Namespace: r.Namespace}
			if err := DecodeAudit(nil, enc, nil, &back); err != nil {
				t.Fatal(err)
			}
			var d auditDoc
			json.Unmarshal(want, &d)
			if back.Reason != d.Reason || back.ServerName != d.ServerName || back.Caller != d.Caller ||
				back.Duration != time.Duration(d.DurationMicro)*time.Microsecond || back.ArgumentsHash != r.ArgumentsHash || back.DecidedBy != r.DecidedBy {
				t.Errorf("decoded %+v, from %+v", back, d)
			}
		})
	}
}

// TestAppendAuditRecordEveryField: a record with every field of auditDoc
// set is written with every one of them: a field added to auditDoc but
// not written by AppendAuditRecord fails here.
func TestAppendAuditRecordEveryField(t *testing.T) {
	r := store.AuditRecord{Namespace: "t/a", ServerID: "up", Tool: "echo", Decision: store.AuditApproved,
		ServerName: "n", Caller: "c", Outcome: "o", ErrorClass: "e", Reason: "r", Approval: "a",
		Duration: time.Second, ArgumentsHash: "h", DecidedBy: "b"}
	b, _, err := AppendAuditRecord(nil, nil, &r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if want := reflect.TypeOf(auditDoc{}).NumField(); len(m) != want {
		t.Errorf("AppendAuditRecord wrote %d members (%s), auditDoc has %d fields", len(m), b, want)
	}
}

// TestAppendAuditRecordChecks: a record whose indexed fields cannot be stored
// is refused, and dst is left as it was.
func TestAppendAuditRecordChecks(t *testing.T) {
	for _, r := range []store.AuditRecord{
		{ServerID: "up", Decision: store.AuditAllowed},
		{Namespace: "t/a", ServerID: "up"},
		{Namespace: "t/a", ServerID: "u\x00p", Decision: store.AuditAllowed},
		{Namespace: "t/a", Tool: "\xff", Decision: store.AuditAllowed},
	} {
		got, _, err := AppendAuditRecord([]byte("x"), nil, &r)
		if err == nil || string(got) != "x" {
			t.Errorf("AppendAuditRecord(%+v) = %q, %v; want an error and dst unchanged", r, got, err)
		}
	}
}

// BenchmarkAppendAuditRecord encodes a call's record column.
func BenchmarkAppendAuditRecord(b *testing.B) {
	r := store.AuditRecord{Namespace: "bench/a", ServerID: "up", ServerName: "up", Tool: "echo", Caller: "api",
		Decision: store.AuditAllowed, Outcome: store.AuditOK, Duration: time.Millisecond,
		ArgumentsHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _, _ = AppendAuditRecord(buf[:0], nil, &r)
	}
}
