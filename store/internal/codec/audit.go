package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmcp/agentmcp/store"
)

var errNoDecision = errors.New("empty decision")

// auditAD binds a record's sealed arguments to its agent and to the hash
// of the arguments it names, so that they do not open in another agent's
// record nor in a record of other arguments.
func auditAD(ns, hash string) []byte {
	return []byte("agentmcp/audit-arguments\x00" + ns + "\x00" + hash)
}

// checkAudit checks an audit record's indexed fields.
func checkAudit(r store.AuditRecord) error {
	if err := CheckNamespace(r.Namespace); err != nil {
		return err
	}
	switch {
	case r.Decision == "":
		return errNoDecision
	case !text(r.ServerID) || !text(r.Tool) || !text(r.Decision):
		return errBadText
	}
	return nil
}

// auditDoc is the stored JSON record of an AuditRecord: everything but
// its key, its indexed columns and its arguments, under one-letter keys
// (every byte of a record is written, and checksummed, once per call).
type auditDoc struct {
	ServerName    string `json:"n,omitempty"`
	Caller        string `json:"c,omitempty"`
	Outcome       string `json:"o,omitempty"`
	ErrorClass    string `json:"e,omitempty"`
	Reason        string `json:"r,omitempty"`
	Approval      string `json:"a,omitempty"`
	DurationMicro int64  `json:"d,omitempty"` // microseconds
	ArgumentsHash string `json:"h,omitempty"`
	DecidedBy     string `json:"b,omitempty"`
}

// EncodeAudit checks r's indexed fields and returns its record column and
// its sealed arguments column (nil when r keeps no arguments, or c has no
// key: arguments are never stored in plaintext).
func EncodeAudit(c *store.Cipher, r store.AuditRecord) (record, arguments []byte, err error) {
	return AppendAuditRecord(nil, c, &r)
}

// AppendAuditRecord is EncodeAudit appending the record column to dst
// (a batch's records encoded into one buffer): record is dst with it
// appended, dst itself when r is refused. The record is the JSON
// encoding/json makes of auditDoc, written without reflection
// (TestAppendAuditRecord compares the two).
func AppendAuditRecord(dst []byte, c *store.Cipher, r *store.AuditRecord) (record, arguments []byte, err error) {
	if err := checkAudit(*r); err != nil {
		return dst, nil, err
	}
	n := len(dst)
	dst = append(dst, '{')
	dst = appendMember(dst, n, "n", r.ServerName)
	dst = appendMember(dst, n, "c", r.Caller)
	dst = appendMember(dst, n, "o", r.Outcome)
	dst = appendMember(dst, n, "e", r.ErrorClass)
	dst = appendMember(dst, n, "r", r.Reason)
	dst = appendMember(dst, n, "a", r.Approval)
	if d := r.Duration.Microseconds(); d != 0 {
		dst = appendKey(dst, n, "d")
		dst = strconv.AppendInt(dst, d, 10)
	}
	dst = appendMember(dst, n, "h", r.ArgumentsHash)
	dst = appendMember(dst, n, "b", r.DecidedBy)
	dst = append(dst, '}')
	if len(r.Arguments) > 0 && c != nil {
		arguments = c.Seal(r.Arguments, auditAD(r.Namespace, r.ArgumentsHash))
	}
	return dst, arguments, nil
}

// appendKey appends the key of an object's member, after a comma unless
// it is the first of the object that starts at dst[start].
func appendKey(dst []byte, start int, key string) []byte {
	if len(dst) > start+1 {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendMember appends an omitempty string member.
func appendMember(dst []byte, start int, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(appendKey(dst, start, key), s)
}

// appendString appends s as encoding/json quotes it: printable ASCII but
// the quote, the backslash and <, > and & as is; anything else as
// json.Marshal writes it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= utf8.RuneSelf || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// DecodeAudit fills r's other fields from its record and arguments
// columns; r's key and indexed columns are set already.
func DecodeAudit(c *store.Cipher, record, arguments []byte, r *store.AuditRecord) error {
	var d auditDoc
	if err := json.Unmarshal(record, &d); err != nil {
		return fmt.Errorf("audit record %d: %w", r.Seq, err)
	}
	r.ServerName, r.Caller, r.Outcome, r.ErrorClass = d.ServerName, d.Caller, d.Outcome, d.ErrorClass
	r.Reason, r.Approval, r.Duration, r.ArgumentsHash = d.Reason, d.Approval, time.Duration(d.DurationMicro)*time.Microsecond, d.ArgumentsHash
	r.DecidedBy = d.DecidedBy
	if len(arguments) > 0 {
		args, err := c.Open(arguments, auditAD(r.Namespace, r.ArgumentsHash))
		if err != nil {
			return fmt.Errorf("audit record %d: arguments: %w", r.Seq, err)
		}
		r.Arguments = args
	}
	return nil
}

// AuditLimit returns the number of records q asks for.
func AuditLimit(q store.AuditQuery) int {
	switch {
	case q.Limit <= 0:
		return store.DefaultAuditLimit
	case q.Limit > store.MaxAuditLimit:
		return store.MaxAuditLimit
	}
	return q.Limit
}

// AuditWhere returns the conditions and arguments of q's selection of
// the records of ns, with placeholders made by ph (given the argument's
// 1-based index), and the ORDER BY clause.
func AuditWhere(ns string, q store.AuditQuery, at func(time.Time) any, ph func(int) string) (where, order string, args []any) {
	conds := []string{}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.Replace(cond, "?", ph(len(args)), 1))
	}
	add("namespace = ?", ns)
	if !q.Since.IsZero() {
		add("at >= ?", at(q.Since))
	}
	if !q.Until.IsZero() {
		add("at < ?", at(q.Until))
	}
	if q.ServerID != "" {
		add("server_id = ?", q.ServerID)
	}
	if q.Tool != "" {
		add("tool = ?", q.Tool)
	}
	if q.Decision != "" {
		add("decision = ?", q.Decision)
	}
	order = "seq"
	if q.NewestFirst {
		order = "seq DESC"
		if q.Cursor > 0 {
			add("seq < ?", q.Cursor)
		}
	} else if q.Cursor > 0 {
		add("seq > ?", q.Cursor)
	}
	return strings.Join(conds, " AND "), order, args
}
