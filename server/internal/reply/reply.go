// Package reply writes the HTTP API's answers: a JSON body, or an API
// error (api.APIError) as its JSON error response; and reads a request's
// JSON body (Decode), refusing it with the API's errors. The server and its
// internal packages answer through it, so that every answer has the same
// headers and every error the same shape and the same public-safe message
// (netguard.Sanitize: no tokens, header values or URL queries).
package reply

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/netguard"
)

// Errorf returns an API error with status, code and a formatted message.
func Errorf(status int, code, format string, args ...any) *api.APIError {
	return &api.APIError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error writes e as the response: its status, Retry-After when it has
// one, and its messages sanitized.
func Error(w http.ResponseWriter, e *api.APIError) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	e.Message = netguard.Sanitize(e.Message)
	e.ServerName, e.Summary, e.Detail = netguard.Sanitize(e.ServerName), netguard.Sanitize(e.Summary), netguard.Sanitize(e.Detail)
	JSON(w, e.Status, api.ErrorResponse{Error: *e})
}

// JSON writes v as the response body with status, not to be cached.
func JSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"cannot encode the response"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// Decode reads a JSON request body into v: application/json, at most max
// bytes, one value, no unknown fields. It answers nothing: the caller
// writes the error.
func Decode(w http.ResponseWriter, r *http.Request, v any, max int64) *api.APIError {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return Errorf(http.StatusUnsupportedMediaType, api.CodeUnsupportedMediaType, "the body must be JSON, with Content-Type: application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, max))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return Errorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "the body is larger than %d bytes", max)
		}
		if errors.Is(err, io.EOF) {
			return Errorf(http.StatusBadRequest, api.CodeInvalidJSON, "the body is empty; want a JSON object")
		}
		return Errorf(http.StatusBadRequest, api.CodeInvalidJSON, "invalid JSON body: %v", err)
	}
	if dec.More() {
		return Errorf(http.StatusBadRequest, api.CodeInvalidJSON, "invalid JSON body: more than one value")
	}
	return nil
}
