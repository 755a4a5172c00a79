// Package safetext prepares text for errors and logs: text a peer sent,
// sanitised and cut, and URLs and errors without the parts that may carry
// secrets (userinfo, query, fragment).
package safetext

import (
	"errors"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// Sanitize prepares text that came from a server for errors and logs: one
// line, control characters dropped (tabs and line breaks become spaces),
// cut to max runes with "..." appended when cut.
func Sanitize(s string, max int) string {
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

// Quote quotes the start of a message a peer sent, for an error:
// sanitised, cut to 100 characters.
func Quote(data []byte) string {
	if len(data) > 1024 {
		data = data[:1024]
	}
	return strconv.Quote(Sanitize(string(data), 100))
}

// URL renders u without userinfo, query or fragment, for errors and
// logs.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return r.String()
}

// Err removes the query and userinfo from the URL that net/http puts
// in its errors: a query may carry a key.
func Err(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		c := *uerr
		c.URL = RawURL(uerr.URL)
		return &c
	}
	return err
}

// RawURL is URL for a URL string.
func RawURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	return URL(u)
}

// Body returns the start of an HTTP error body as text fit to show to a
// person: "" for an HTML page (a proxy's or a web server's error page is
// markup, not a message) and for an empty body.
func Body(contentType string, body []byte) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "text/html" || mt == "application/xhtml+xml" {
		return ""
	}
	head := strings.ToLower(strings.TrimSpace(string(body[:min(len(body), 512)])))
	if strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") ||
		(strings.HasPrefix(head, "<") && strings.Contains(head, "<body")) {
		return ""
	}
	return Sanitize(string(body), 200)
}
