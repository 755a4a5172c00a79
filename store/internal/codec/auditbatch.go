package codec

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// An audit batch is several records of one agent stored as one value
// (store/sqlite keeps one row a batch): each record's seq, time, indexed
// columns, record column (AppendAuditRecord's JSON) and sealed arguments
// (sealed as for a row of their own, so they open alike).
//
// Its first byte says its format:
//
//   - auditBatchV1, written by AppendAuditBatch: the batch's first seq
//     and lowest time (uvarints), then each record in seq order: its seq
//     after the first and its time after the lowest (uvarints), then its
//     server ID, tool, decision, sealed arguments (empty when none) and
//     record column, each as a uvarint length and its bytes;
//   - '[': one record, as the JSON array [seq, at, server_id, tool,
//     decision, record, hex of the sealed arguments ("" when none)],
//     which SQL can write (store/sqlite's migration 0010 made one of
//     each row of its former table).
const auditBatchV1 = 1

// ErrAuditBatch reports a stored audit batch that does not decode.
var ErrAuditBatch = errors.New("malformed audit batch")

// AuditEntry is one record of an audit batch as stored: its key, time
// and indexed columns, its record column and its sealed arguments (nil
// when not kept). Decoded, its slices are parts of the batch.
type AuditEntry struct {
	Seq, At                  int64 // At: unix microseconds
	ServerID, Tool, Decision []byte
	Record, Arguments        []byte
}

// AuditBatchHeader starts a batch whose first record has seq first and
// whose records' lowest time is minAt; AppendAuditEntry appends its
// records in seq order.
func AuditBatchHeader(dst []byte, first, minAt int64) []byte {
	dst = append(dst, auditBatchV1)
	dst = binary.AppendUvarint(dst, uint64(first))
	return binary.AppendUvarint(dst, uint64(minAt))
}

// AppendAuditEntry appends one record to a batch begun by
// AuditBatchHeader(first, minAt): seq >= first, at >= minAt.
func AppendAuditEntry(dst []byte, first, minAt, seq, at int64, server, tool, decision string, arguments, record []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(seq-first))
	dst = binary.AppendUvarint(dst, uint64(at-minAt))
	dst = appendBytes(dst, server)
	dst = appendBytes(dst, tool)
	dst = appendBytes(dst, decision)
	dst = binary.AppendUvarint(dst, uint64(len(arguments)))
	dst = append(dst, arguments...)
	dst = binary.AppendUvarint(dst, uint64(len(record)))
	return append(dst, record...)
}

func appendBytes(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendAuditBatch appends the batch of entries (in seq order, at least
// one).
func AppendAuditBatch(dst []byte, entries []AuditEntry) []byte {
	minAt := entries[0].At
	for i := range entries {
		minAt = min(minAt, entries[i].At)
	}
	first := entries[0].Seq
	dst = AuditBatchHeader(dst, first, minAt)
	for i := range entries {
		e := &entries[i]
		dst = AppendAuditEntry(dst, first, minAt, e.Seq, e.At, string(e.ServerID), string(e.Tool), string(e.Decision), e.Arguments, e.Record)
	}
	return dst
}

// DecodeAuditBatch appends the entries of batch b to dst, in seq order;
// their slices are parts of b (or, for the one-record JSON form, of
// copies).
func DecodeAuditBatch(dst []AuditEntry, b []byte) ([]AuditEntry, error) {
	a, err := OpenAuditBatch(b)
	if err != nil {
		return dst, err
	}
	for off := a.Start(); off < a.End(); {
		var e AuditEntry
		if e, off, err = a.Entry(off); err != nil {
			return dst, err
		}
		dst = append(dst, e)
	}
	return dst, nil
}

// AuditBatch reads a stored batch's entries one at a time, from their
// offsets: from Start, each Entry gives the next's, until End. (A query
// reads a batch without a slice of its entries: no pointers written to
// the heap for records it skips.)
type AuditBatch struct {
	b            []byte
	first, minAt int64
	start        int
	one          *AuditEntry // the one-record JSON form, decoded
}

// OpenAuditBatch reads b's header.
func OpenAuditBatch(b []byte) (AuditBatch, error) {
	if len(b) > 0 && b[0] == '[' {
		e, err := decodeAuditJSON(b)
		if err != nil {
			return AuditBatch{}, err
		}
		return AuditBatch{b: b, start: 0, one: &e}, nil
	}
	if len(b) == 0 || b[0] != auditBatchV1 {
		return AuditBatch{}, fmt.Errorf("%w: unknown format", ErrAuditBatch)
	}
	first, off, ok := uvarintAt(b, 1)
	minAt, off, ok2 := uvarintAt(b, off)
	if !ok || !ok2 {
		return AuditBatch{}, errAuditTruncated
	}
	return AuditBatch{b: b, first: int64(first), minAt: int64(minAt), start: off}, nil
}

// Start is the offset of the batch's first entry.
func (a *AuditBatch) Start() int { return a.start }

// End is the offset after its last entry.
func (a *AuditBatch) End() int {
	if a.one != nil {
		return 1
	}
	return len(a.b)
}

// Entry decodes the entry at off (its slices parts of the batch) and
// returns the next entry's offset. (It works on offsets and returns its
// entry: no pointer is stored through a pointer, which costs a write
// barrier while the GC runs.)
func (a *AuditBatch) Entry(off int) (e AuditEntry, next int, err error) {
	if a.one != nil {
		return *a.one, 1, nil
	}
	b := a.b
	var v uint64
	var ok bool
	if v, off, ok = uvarintAt(b, off); !ok {
		return e, 0, errAuditTruncated
	}
	e.Seq = a.first + int64(v)
	if v, off, ok = uvarintAt(b, off); !ok {
		return e, 0, errAuditTruncated
	}
	e.At = a.minAt + int64(v)
	var lo int
	if lo, off, ok = bytesAt(b, off); !ok {
		return e, 0, errAuditTruncated
	}
	e.ServerID = b[lo:off:off]
	if lo, off, ok = bytesAt(b, off); !ok {
		return e, 0, errAuditTruncated
	}
	e.Tool = b[lo:off:off]
	if lo, off, ok = bytesAt(b, off); !ok {
		return e, 0, errAuditTruncated
	}
	e.Decision = b[lo:off:off]
	if lo, off, ok = bytesAt(b, off); !ok {
		return e, 0, errAuditTruncated
	}
	if off > lo {
		e.Arguments = b[lo:off:off]
	}
	if lo, off, ok = bytesAt(b, off); !ok {
		return e, 0, errAuditTruncated
	}
	e.Record = b[lo:off:off]
	return e, off, nil
}

var errAuditTruncated = fmt.Errorf("%w: truncated", ErrAuditBatch)

// uvarintAt reads the uvarint at b[off:] and returns it and the offset
// after it.
func uvarintAt(b []byte, off int) (uint64, int, bool) {
	v, n := binary.Uvarint(b[off:])
	if n <= 0 {
		return 0, off, false
	}
	return v, off + n, true
}

// bytesAt reads the length-prefixed bytes at b[off:] and returns their
// offsets.
func bytesAt(b []byte, off int) (lo, hi int, ok bool) {
	n, lo, ok := uvarintAt(b, off)
	if !ok || n > uint64(len(b)-lo) {
		return 0, off, false
	}
	return lo, lo + int(n), true
}

// decodeAuditJSON decodes the one-record JSON form.
func decodeAuditJSON(b []byte) (AuditEntry, error) {
	var (
		e     AuditEntry
		parts []json.RawMessage
		texts [5]string
	)
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) != 7 {
		return e, fmt.Errorf("%w: %v", ErrAuditBatch, err)
	}
	var err error
	if e.Seq, err = strconv.ParseInt(string(parts[0]), 10, 64); err != nil {
		return e, fmt.Errorf("%w: seq: %v", ErrAuditBatch, err)
	}
	if e.At, err = strconv.ParseInt(string(parts[1]), 10, 64); err != nil {
		return e, fmt.Errorf("%w: time: %v", ErrAuditBatch, err)
	}
	for i := range texts {
		if err := json.Unmarshal(parts[2+i], &texts[i]); err != nil {
			return e, fmt.Errorf("%w: %v", ErrAuditBatch, err)
		}
	}
	e.ServerID, e.Tool, e.Decision, e.Record = []byte(texts[0]), []byte(texts[1]), []byte(texts[2]), []byte(texts[3])
	if texts[4] != "" {
		if e.Arguments, err = hex.DecodeString(texts[4]); err != nil {
			return e, fmt.Errorf("%w: arguments: %v", ErrAuditBatch, err)
		}
	}
	return e, nil
}
