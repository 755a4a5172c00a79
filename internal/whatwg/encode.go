package whatwg

import (
	"strings"
	"unicode/utf8"
)

// An encodeSet is one of the standard's percent-encode sets. Every set
// includes the C0 controls and all code points above U+007E; the set
// records which printable ASCII characters it adds.
type encodeSet uint8

const (
	c0ControlSet    encodeSet = iota // C0 control percent-encode set
	fragmentSet                      // + space " < > `
	querySet                         // + space " # < >
	specialQuerySet                  // query set + '
	pathSet                          // query set + ? ^ ` { }
	userinfoSet                      // path set + / : ; = @ [ \ ] |
)

// contains reports whether r is in the set.
func (s encodeSet) contains(r rune) bool {
	if r < 0x20 || r > 0x7e {
		return true
	}
	switch s {
	case fragmentSet:
		return strings.ContainsRune(" \"<>`", r)
	case querySet:
		return strings.ContainsRune(" \"#<>", r)
	case specialQuerySet:
		return strings.ContainsRune(" \"#<>'", r)
	case pathSet:
		return strings.ContainsRune(" \"#<>?^`{}", r)
	case userinfoSet:
		return strings.ContainsRune(" \"#<>?^`{}/:;=@[\\]|", r)
	}
	return false
}

const upperhex = "0123456789ABCDEF"

// appendEncoded appends r to b, UTF-8 percent-encoded if it is in set. A
// '%' is never in a set, so existing escapes are kept verbatim.
func appendEncoded(b []byte, r rune, set encodeSet) []byte {
	if !set.contains(r) {
		return append(b, byte(r))
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	for _, c := range buf[:n] {
		b = append(b, '%', upperhex[c>>4], upperhex[c&15])
	}
	return b
}

// encodeString UTF-8 percent-encodes every code point of s that is in set.
func encodeString(s string, set encodeSet) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = appendEncoded(b, r, set)
	}
	return string(b)
}

// percentDecode decodes every %XX escape in s into its byte and leaves
// malformed escapes as they are.
func percentDecode(s string) []byte {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return b
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
