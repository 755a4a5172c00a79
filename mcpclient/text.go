package mcpclient

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// sanitize prepares text that came from a server for errors and logs: one
// line, control characters dropped (tabs and line breaks become spaces),
// cut to max runes with "..." appended when cut.
func sanitize(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if n := 0; len(s) > max {
		for i := range s {
			if n == max {
				return s[:i] + "..."
			}
			n++
		}
	}
	return s
}

// quoteStart quotes the start of a message a peer sent, for an error:
// sanitised, cut to 100 characters.
func quoteStart(data []byte) string {
	if len(data) > 1024 {
		data = data[:1024]
	}
	return strconv.Quote(sanitize(string(data), 100))
}

// redactURL renders u without userinfo, query or fragment, for errors and
// logs.
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return r.String()
}

// redactErr removes the query and userinfo from the URL that net/http puts
// in its errors: a query may carry a key.
func redactErr(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		c := *uerr
		c.URL = redactRawURL(uerr.URL)
		return &c
	}
	return err
}

// redactRawURL is redactURL for a URL string.
func redactRawURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	return redactURL(u)
}
