package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
)

// auditStore returns s's AuditStore, skipping t when it keeps none.
func auditStore(t *testing.T, s store.Store) store.AuditStore {
	t.Helper()
	as, ok := s.(store.AuditStore)
	if !ok {
		t.Skip("the backend keeps no audit log")
	}
	return as
}

func queryAudit(t *testing.T, as store.AuditStore, ns string, q store.AuditQuery) []store.AuditRecord {
	t.Helper()
	got, err := as.QueryAudit(ctx(t), ns, q)
	if err != nil {
		t.Fatalf("QueryAudit(%q, %+v): %v", ns, q, err)
	}
	return got
}

func appendAudit(t *testing.T, as store.AuditStore, records ...store.AuditRecord) {
	t.Helper()
	if err := as.AppendAudit(ctx(t), records); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
}

// auditAt is the time of the i-th sample record.
var auditAt = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

// auditSample returns a sample record of namespace ns.
func auditSample(ns string, i int, server, tool, decision string) store.AuditRecord {
	r := store.AuditRecord{Namespace: ns, Time: auditAt.Add(time.Duration(i) * time.Second),
		ServerID: server, ServerName: "name of " + server, Tool: tool, Caller: "api", Decision: decision,
		ArgumentsHash: fmt.Sprintf("%064x", i), Duration: time.Duration(i) * time.Millisecond}
	if decision == store.AuditAllowed {
		r.Outcome = store.AuditOK
		if i%3 == 0 {
			r.Outcome, r.ErrorClass = store.AuditError, "timeout"
		}
	}
	if decision == store.AuditAsked {
		r.Approval = fmt.Sprintf("ap_%d", i)
	}
	if decision == store.AuditApproved {
		r.Approval, r.DecidedBy = fmt.Sprintf("ap_%d", i), fmt.Sprintf("person %d", i)
	}
	return r
}

// testAudit checks AuditStore: an empty log, records appended in batches
// listed in their order with increasing Seq, per namespace, selected by
// time, server, tool and decision, paged by cursor oldest or newest first
// with the same records, bounded by Limit, kept across a reopen, and
// records without a namespace or decision refused.
func testAudit(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	as := auditStore(t, s)
	if got := queryAudit(t, as, ns, store.AuditQuery{}); got == nil || len(got) != 0 {
		t.Fatalf("the audit log of an agent without any: %#v", got)
	}
	decisions := []string{store.AuditAllowed, store.AuditDenied, store.AuditAsked, store.AuditApproved, store.AuditAllowed}
	var want []store.AuditRecord
	for batch := range 3 {
		var records []store.AuditRecord
		for j := range 4 {
			i := batch*4 + j
			server := []string{"a", "b"}[i%2]
			tool := []string{"echo", "add", "zap"}[i%3]
			records = append(records, auditSample(ns, i, server, tool, decisions[i%len(decisions)]))
		}
		other := auditSample("other/ns", batch, "a", "echo", store.AuditAllowed)
		appendAudit(t, as, append(records, other)...)
		want = append(want, records...)
	}
	all := queryAudit(t, as, ns, store.AuditQuery{})
	if len(all) != len(want) {
		t.Fatalf("%d records, want %d", len(all), len(want))
	}
	for i := range all {
		if i > 0 && all[i].Seq <= all[i-1].Seq {
			t.Fatalf("record %d has seq %d after %d", i, all[i].Seq, all[i-1].Seq)
		}
		want[i].Seq = all[i].Seq
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Fatalf("records (-want +got):\n%s", diff)
	}
	if got := queryAudit(t, as, "other/ns", store.AuditQuery{}); len(got) != 3 {
		t.Fatalf("the other agent's log has %d records, want 3", len(got))
	}

	sel := func(keep func(store.AuditRecord) bool) []store.AuditRecord {
		out := []store.AuditRecord{}
		for _, r := range want {
			if keep(r) {
				out = append(out, r)
			}
		}
		return out
	}
	for _, tt := range []struct {
		name string
		q    store.AuditQuery
		want []store.AuditRecord
	}{
		{"server", store.AuditQuery{ServerID: "b"}, sel(func(r store.AuditRecord) bool { return r.ServerID == "b" })},
		{"tool", store.AuditQuery{Tool: "zap"}, sel(func(r store.AuditRecord) bool { return r.Tool == "zap" })},
		{"decision", store.AuditQuery{Decision: store.AuditAllowed}, sel(func(r store.AuditRecord) bool { return r.Decision == store.AuditAllowed })},
		{"server and tool", store.AuditQuery{ServerID: "a", Tool: "echo"}, sel(func(r store.AuditRecord) bool { return r.ServerID == "a" && r.Tool == "echo" })},
		{"since and until", store.AuditQuery{Since: want[3].Time, Until: want[7].Time}, want[3:7]},
		{"limit", store.AuditQuery{Limit: 5}, want[:5]},
		{"cursor", store.AuditQuery{Cursor: want[9].Seq}, want[10:]},
		{"newest first", store.AuditQuery{NewestFirst: true, Limit: 3}, []store.AuditRecord{want[11], want[10], want[9]}},
		{"newest first before a cursor", store.AuditQuery{NewestFirst: true, Cursor: want[2].Seq}, []store.AuditRecord{want[1], want[0]}},
		{"none", store.AuditQuery{Tool: "none"}, []store.AuditRecord{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, queryAudit(t, as, ns, tt.q)); diff != "" {
				t.Errorf("QueryAudit(%+v) (-want +got):\n%s", tt.q, diff)
			}
		})
	}
	// Paging by cursor gives every record once, in either order.
	for _, newest := range []bool{false, true} {
		var paged []store.AuditRecord
		q := store.AuditQuery{Limit: 5, NewestFirst: newest}
		for range len(want) {
			page := queryAudit(t, as, ns, q)
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			q.Cursor = page[len(page)-1].Seq
		}
		wantPaged := want
		if newest {
			wantPaged = make([]store.AuditRecord, 0, len(want))
			for i := len(want) - 1; i >= 0; i-- {
				wantPaged = append(wantPaged, want[i])
			}
		}
		if diff := cmp.Diff(wantPaged, paged); diff != "" {
			t.Errorf("paged by 5, newest first %v (-want +got):\n%s", newest, diff)
		}
	}
	// Limits: none gives the default, too many the most.
	many := make([]store.AuditRecord, store.MaxAuditLimit+1)
	for i := range many {
		many[i] = auditSample("many/ns", i, "a", "echo", store.AuditAllowed)
	}
	appendAudit(t, as, many...)
	if got := queryAudit(t, as, "many/ns", store.AuditQuery{}); len(got) != store.DefaultAuditLimit {
		t.Errorf("no limit: %d records, want %d", len(got), store.DefaultAuditLimit)
	}
	if got := queryAudit(t, as, "many/ns", store.AuditQuery{Limit: 1 << 20}); len(got) != store.MaxAuditLimit {
		t.Errorf("limit 1<<20: %d records, want %d", len(got), store.MaxAuditLimit)
	}

	for _, bad := range []store.AuditRecord{
		{Namespace: "", Decision: store.AuditAllowed, Time: auditAt},
		{Namespace: ns, Decision: "", Time: auditAt},
		{Namespace: ns, Decision: store.AuditAllowed, Tool: "a\x00b", Time: auditAt},
	} {
		if err := as.AppendAudit(ctx(t), []store.AuditRecord{auditSample(ns, 99, "a", "echo", store.AuditAllowed), bad}); err == nil {
			t.Errorf("AppendAudit of %+v succeeded", bad)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{})
	as = s.(store.AuditStore)
	if diff := cmp.Diff(want, queryAudit(t, as, ns, store.AuditQuery{})); diff != "" {
		t.Fatalf("records after a reopen and refused batches (-want +got):\n%s", diff)
	}
}

// testAuditPrune checks PruneAudit: by age, by count, both, per
// namespace.
func testAuditPrune(t *testing.T, b Backend) {
	s := b.Open(t, Options{})
	as := auditStore(t, s)
	c := ctx(t)
	var records []store.AuditRecord
	for i := range 10 {
		records = append(records, auditSample(ns, i, "a", "echo", store.AuditAllowed), auditSample("other/ns", i, "a", "echo", store.AuditAllowed))
	}
	appendAudit(t, as, records...)
	all := queryAudit(t, as, ns, store.AuditQuery{})
	prune := func(keep int, before time.Time, wantN int64, want []store.AuditRecord) {
		t.Helper()
		n, err := as.PruneAudit(c, ns, keep, before)
		if err != nil {
			t.Fatalf("PruneAudit(%d, %v): %v", keep, before, err)
		}
		if n != wantN {
			t.Errorf("PruneAudit(%d, %v) deleted %d, want %d", keep, before, n, wantN)
		}
		if diff := cmp.Diff(want, queryAudit(t, as, ns, store.AuditQuery{})); diff != "" {
			t.Fatalf("after PruneAudit(%d, %v) (-want +got):\n%s", keep, before, diff)
		}
	}
	prune(0, time.Time{}, 0, all)
	prune(20, time.Time{}, 0, all)
	prune(0, all[2].Time, 2, all[2:]) // older than record 2
	prune(6, time.Time{}, 2, all[4:]) // the newest 6
	prune(3, all[7].Time, 3, all[7:]) // both: the age leaves 3
	prune(1, all[5].Time, 2, all[9:]) // both: the count leaves 1
	prune(0, auditAt.Add(time.Hour), 1, []store.AuditRecord{})
	// A record appended once all were pruned comes after them: a
	// follower's cursor is never given again.
	appendAudit(t, as, auditSample(ns, 20, "a", "echo", store.AuditAllowed))
	if got := queryAudit(t, as, ns, store.AuditQuery{}); len(got) != 1 || got[0].Seq <= all[len(all)-1].Seq {
		t.Fatalf("after pruning all: %+v, want one record after seq %d", got, all[len(all)-1].Seq)
	}
	if got := queryAudit(t, as, ns, store.AuditQuery{Cursor: all[len(all)-1].Seq}); len(got) != 1 {
		t.Fatalf("after the last cursor before pruning: %+v, want the new record", got)
	}
	if got := queryAudit(t, as, "other/ns", store.AuditQuery{}); len(got) != 10 {
		t.Errorf("the other agent's log has %d records after pruning, want 10", len(got))
	}
	if _, err := as.PruneAudit(c, "", 1, time.Time{}); err == nil {
		t.Error("PruneAudit without a namespace succeeded")
	}
}

// testAuditEncryption checks a record's arguments: with a cipher they
// come back and are not stored in plaintext (and not readable with
// another key); without one they are not stored at all.
func testAuditEncryption(t *testing.T, b Backend) {
	const secret = "audit-argument-SECRET-6d1e"
	args := json.RawMessage(`{"password":"` + secret + `"}`)
	s := b.Open(t, Options{Cipher: newCipher(t)})
	as := auditStore(t, s)
	r := auditSample(ns, 1, "a", "login", store.AuditAllowed)
	r.Arguments = args
	appendAudit(t, as, r)
	got := queryAudit(t, as, ns, store.AuditQuery{})
	if len(got) != 1 || !bytes.Equal(got[0].Arguments, args) {
		t.Fatalf("arguments round trip with a cipher: %+v", got)
	}
	if b.Raw != nil {
		raw := b.Raw(t)
		if !bytes.Contains(raw, []byte(r.ArgumentsHash)) {
			t.Fatal("Raw does not contain the record's hash: it does not show the audit log")
		}
		if bytes.Contains(raw, []byte(secret)) {
			t.Error("an audit record's arguments are stored in plaintext")
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = b.Open(t, Options{Cipher: newCipher(t)})
	if _, err := s.(store.AuditStore).QueryAudit(ctx(t), ns, store.AuditQuery{}); err == nil {
		t.Error("arguments sealed with one key were read with another")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = b.Open(t, Options{})
	as = s.(store.AuditStore)
	r2 := auditSample("plain/ns", 2, "a", "login", store.AuditAllowed)
	r2.Arguments = args
	appendAudit(t, as, r2)
	got = queryAudit(t, as, "plain/ns", store.AuditQuery{})
	if len(got) != 1 || got[0].Arguments != nil || got[0].ArgumentsHash != r2.ArgumentsHash {
		t.Fatalf("a store without a key kept arguments: %+v", got)
	}
	if b.Raw != nil && bytes.Count(b.Raw(t), []byte(secret)) > 0 {
		t.Error("a store without a key stored arguments in plaintext")
	}
}

// testAuditLargeBatch checks one append of more records than a backend's
// statement may hold, of two agents interleaved, some keeping sealed
// arguments and some not, their texts escaped and in unicode: each
// agent's records read back whole, in their order, with increasing Seq,
// and a second append goes on after the last Seq.
func testAuditLargeBatch(t *testing.T, b Backend) {
	s := b.Open(t, Options{Cipher: newCipher(t)})
	as := auditStore(t, s)
	const n = 700
	nss := []string{"batch/a", "batch/\u00e9"}
	var records []store.AuditRecord
	want := map[string][]store.AuditRecord{}
	for i := range n {
		ns := nss[0]
		if i%3 == 2 {
			ns = nss[1]
		}
		r := auditSample(ns, i, []string{"a", "b"}[i%2], []string{"echo", "add"}[i/5%2], store.AuditAllowed)
		if i%7 == 0 {
			r.Arguments = json.RawMessage(fmt.Sprintf(`{"i":%d,"s":"<\u2028>"}`, i))
		}
		if i%11 == 0 {
			r.Decision, r.Outcome, r.ErrorClass = store.AuditDenied, "", ""
			r.Reason = fmt.Sprintf("rule %d: \"quoted\" \\ <&> \n h\u00e9llo \U0001F600", i)
		}
		records = append(records, r)
		want[ns] = append(want[ns], r)
	}
	appendAudit(t, as, records...)
	extra := auditSample(nss[0], n, "a", "echo", store.AuditAllowed)
	appendAudit(t, as, extra)
	want[nss[0]] = append(want[nss[0]], extra)
	for _, ns := range nss {
		got := queryAudit(t, as, ns, store.AuditQuery{Limit: store.MaxAuditLimit})
		if len(got) != len(want[ns]) {
			t.Fatalf("%s: %d records, want %d", ns, len(got), len(want[ns]))
		}
		for i := range got {
			if i > 0 && got[i].Seq <= got[i-1].Seq {
				t.Fatalf("%s: record %d has seq %d after %d", ns, i, got[i].Seq, got[i-1].Seq)
			}
			want[ns][i].Seq = got[i].Seq
		}
		if diff := cmp.Diff(want[ns], got); diff != "" {
			t.Fatalf("%s: records (-want +got):\n%s", ns, diff)
		}
	}
}

// testAuditBatchBoundaries checks the corners of a backend that stores
// an append's records together (store/sqlite keeps a row a batch): one
// append of 1000 records of an agent with another agent's interleaved,
// then smaller ones, their times not in seq order; listings whose cursor
// falls inside a batch, either way, with and without a filter; times
// that cut a batch; pruning by count and by age inside a batch.
func testAuditBatchBoundaries(t *testing.T, b Backend) {
	s := b.Open(t, Options{Cipher: newCipher(t)})
	as := auditStore(t, s)
	c := ctx(t)
	var want, others []store.AuditRecord
	sample := func(ns string, i int) store.AuditRecord {
		r := auditSample(ns, i, "a", []string{"echo", "add", "zap"}[i%3], store.AuditAllowed)
		r.Time = auditAt.Add(time.Duration(i+5*(i%2)) * time.Second) // odd ones later: not in seq order
		if i%4 == 0 {
			r.Arguments = json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
		}
		return r
	}
	i := 0
	for _, size := range []int{1000, 7, 1, 5} {
		var records []store.AuditRecord
		for range size {
			r := sample(ns, i)
			records = append(records, r)
			want = append(want, r)
			if i%5 == 0 {
				o := sample("other/ns", i)
				records = append(records, o)
				others = append(others, o)
			}
			i++
		}
		appendAudit(t, as, records...)
	}
	var all []store.AuditRecord
	for q := (store.AuditQuery{Limit: store.MaxAuditLimit}); ; {
		page := queryAudit(t, as, ns, q)
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
		q.Cursor = page[len(page)-1].Seq
	}
	if len(all) != len(want) {
		t.Fatalf("%d records, want %d", len(all), len(want))
	}
	for i := range all {
		if i > 0 && all[i].Seq <= all[i-1].Seq {
			t.Fatalf("record %d has seq %d after %d", i, all[i].Seq, all[i-1].Seq)
		}
		want[i].Seq = all[i].Seq
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Fatalf("records (-want +got):\n%s", diff)
	}
	// What q selects of list, as the backend should.
	selected := func(list []store.AuditRecord, q store.AuditQuery) []store.AuditRecord {
		out := []store.AuditRecord{}
		for k := range list {
			r := list[k]
			if q.NewestFirst {
				r = list[len(list)-1-k]
			}
			switch {
			case q.Cursor > 0 && q.NewestFirst && r.Seq >= q.Cursor, q.Cursor > 0 && !q.NewestFirst && r.Seq <= q.Cursor,
				!q.Since.IsZero() && r.Time.Before(q.Since), !q.Until.IsZero() && !r.Time.Before(q.Until),
				q.Tool != "" && r.Tool != q.Tool:
				continue
			}
			if out = append(out, r); len(out) == q.Limit {
				break
			}
		}
		return out
	}
	check := func(list []store.AuditRecord) {
		t.Helper()
		for _, q := range []store.AuditQuery{
			{Cursor: want[500].Seq, Limit: 10},
			{Cursor: want[500].Seq, Limit: 10, NewestFirst: true},
			{Cursor: want[999].Seq, Limit: 10},
			{Cursor: want[1000].Seq, Limit: 10, NewestFirst: true},
			{Cursor: want[1003].Seq, Limit: 3},
			{Cursor: want[1003].Seq, Limit: 3, NewestFirst: true},
			{Cursor: want[700].Seq, Limit: 20, Tool: "zap"},
			{Cursor: want[700].Seq, Limit: 20, Tool: "zap", NewestFirst: true},
			{Since: want[800].Time, Until: want[802].Time, Limit: 100},
			{Since: want[998].Time, Limit: 20, NewestFirst: true},
			{Until: want[1004].Time, Limit: 20, NewestFirst: true, Tool: "add"},
			{Limit: 1000},
			{Limit: 1000, NewestFirst: true},
		} {
			if diff := cmp.Diff(selected(list, q), queryAudit(t, as, ns, q)); diff != "" {
				t.Fatalf("QueryAudit(%+v) (-want +got):\n%s", q, diff)
			}
		}
	}
	check(want)
	// The count cuts the batch of 1000.
	n, err := as.PruneAudit(c, ns, len(want)-600, time.Time{})
	if err != nil || n != 600 {
		t.Fatalf("PruneAudit(keep %d): %d, %v; want 600", len(want)-600, n, err)
	}
	left := want[600:]
	if diff := cmp.Diff(left, queryAudit(t, as, ns, store.AuditQuery{Limit: store.MaxAuditLimit})); diff != "" {
		t.Fatalf("after pruning to %d (-want +got):\n%s", len(left), diff)
	}
	check(left)
	// The age cuts the rest of it, every other record (odd ones are
	// later).
	before := want[900].Time
	var kept []store.AuditRecord
	for _, r := range left {
		if !r.Time.Before(before) {
			kept = append(kept, r)
		}
	}
	if n, err = as.PruneAudit(c, ns, 0, before); err != nil || n != int64(len(left)-len(kept)) {
		t.Fatalf("PruneAudit(before %v): %d, %v; want %d", before, n, err, len(left)-len(kept))
	}
	if diff := cmp.Diff(kept, queryAudit(t, as, ns, store.AuditQuery{Limit: store.MaxAuditLimit})); diff != "" {
		t.Fatalf("after pruning before %v (-want +got):\n%s", before, diff)
	}
	check(kept)
	// Both, inside the later batches.
	var last []store.AuditRecord
	for _, r := range kept[len(kept)-10:] {
		if !r.Time.Before(want[1005].Time) {
			last = append(last, r)
		}
	}
	if n, err = as.PruneAudit(c, ns, 10, want[1005].Time); err != nil || n != int64(len(kept)-len(last)) {
		t.Fatalf("PruneAudit(10, before %v): %d, %v; want %d", want[1005].Time, n, err, len(kept)-len(last))
	}
	if diff := cmp.Diff(last, queryAudit(t, as, ns, store.AuditQuery{Limit: store.MaxAuditLimit})); diff != "" {
		t.Fatalf("after pruning both (-want +got):\n%s", diff)
	}
	check(last)
	if got := queryAudit(t, as, "other/ns", store.AuditQuery{Limit: store.MaxAuditLimit}); len(got) != len(others) {
		t.Errorf("the other agent's log has %d records after pruning, want %d", len(got), len(others))
	}
}
