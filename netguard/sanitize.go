package netguard

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmcp/agentmcp/internal/whatwg"
)

// maxTextRunes is how much server-supplied text Sanitize keeps.
const maxTextRunes = 500

// Sanitize prepares text that came from a server or an authorization
// server (an error message, an error_description) for a log line or a UI.
// It removes C0 control characters other than tab, line feed and carriage
// return, DEL, the C1 controls U+0080 to U+009F and the bidirectional
// controls (U+202E and its kin, which can make text read other than it
// is), replaces invalid UTF-8 with U+FFFD, and then, if more than 500
// characters (runes) remain, keeps the first 500 and appends "...". It
// does not escape HTML.
func Sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20 || 0x7f <= r && r <= 0x9f, unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) <= maxTextRunes {
		return s
	}
	end := 0
	for range maxTextRunes {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	return s[:end] + "..."
}

// RedactURL returns raw in a form fit for logs and error messages: the
// canonical (WHATWG) serialisation without userinfo, query or fragment, any
// of which may carry credentials or tokens. An unparseable raw is cut at
// its first '?' or '#', loses everything before its last '@' up to the
// scheme's "//", and is sanitised.
func RedactURL(raw string) string {
	u, err := whatwg.Parse(raw)
	if err != nil {
		return redactUnparsed(raw)
	}
	return redact(u)
}

// redact serialises u without userinfo, query and fragment.
func redact(u *whatwg.URL) string {
	r := *u
	r.Username, r.Password = "", ""
	r.Query, r.ForceQuery = "", false
	r.Fragment, r.ForceFragment = "", false
	return r.Href()
}

func redactUnparsed(raw string) string {
	s := raw
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		start := 0
		if i := strings.Index(s, "//"); i >= 0 && i < at {
			start = i + 2
		}
		s = s[:start] + s[at+1:]
	}
	return Sanitize(s)
}
