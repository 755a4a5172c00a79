package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// Check reports what makes r an add request the server refuses before
// anything else (400 CodeInvalidRequest, or CodeInvalidURL for a URL that
// is not an absolute http or https one): a missing or too long name, one
// with a control character, a blank id, a URL and a command both or
// neither, a command's fields on a URL server (or a URL server's on a
// command), a transport type the server does not know, a header name or
// value that is not valid, NUL in a command, its arguments or its
// directory, an environment variable name that is not one. It is nil when
// r passes; the server then checks what only it can (the URL's host, the
// id and name in use, whether it runs commands).
func (r *AddRequest) Check() *APIError {
	switch {
	case strings.TrimSpace(r.Name) == "":
		return invalid("name is required")
	case utf8.RuneCountInString(r.Name) > MaxNameLength:
		return invalid("name is longer than %d characters", MaxNameLength)
	case strings.ContainsFunc(r.Name, isControl):
		return invalid("name contains a control character (line breaks, escapes and bidirectional controls are refused)")
	case r.ID != "" && strings.TrimSpace(r.ID) == "":
		return invalid("id is blank")
	case r.Command != "":
		return r.checkCommand()
	case strings.TrimSpace(r.URL) == "":
		return invalid("url is required (or a command, for a stdio server)")
	case len(r.Args) > 0 || len(r.Env) > 0 || r.Cwd != "":
		return invalid("args, env and cwd are for a command")
	}
	if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &APIError{Status: http.StatusBadRequest, Code: CodeInvalidURL, Message: "url must be an absolute http or https URL"}
	}
	t := r.Transport
	if t == nil {
		return nil
	}
	switch t.Type {
	case "", "auto", "streamable-http", "sse": // mcpclient's TransportType values
	default:
		return invalid("transport.type %q: want auto, streamable-http or sse", t.Type)
	}
	for k, v := range t.Headers {
		if !httpguts.ValidHeaderFieldName(k) {
			return invalid("transport.headers: %q is not a valid header name", k)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			// The value is a secret: never quoted.
			return invalid("transport.headers: the value of %q contains a line break or control character", k)
		}
	}
	return nil
}

// checkCommand is Check for a stdio server.
func (r *AddRequest) checkCommand() *APIError {
	switch {
	case r.URL != "":
		return invalid("both url and command; a server has one of them")
	case r.Transport != nil && r.Transport.Type != "" && r.Transport.Type != "stdio":
		return invalid("transport.type %q is not for a command", r.Transport.Type)
	case r.Transport != nil && len(r.Transport.Headers) > 0:
		return invalid("transport.headers are for a URL; give a command env instead")
	case strings.ContainsRune(r.Command, 0) || strings.ContainsRune(r.Cwd, 0):
		return invalid("command and cwd must not contain NUL")
	}
	for _, a := range r.Args {
		if strings.ContainsRune(a, 0) {
			return invalid("args must not contain NUL")
		}
	}
	for k, v := range r.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			// The value is a secret: never quoted.
			return invalid("env: %q is not a valid variable name, or its value contains NUL", k)
		}
	}
	return nil
}

// invalid is a 400 CodeInvalidRequest error.
func invalid(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// isControl reports whether r is a control character (C0, DEL, C1) or a
// bidirectional control (U+202E and the like), which a display name must
// not contain: they rewrite terminals and reorder what the dashboard shows.
func isControl(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
