// Package reply writes the HTTP API's answers: a JSON body, or an API
// error (api.APIError) as its JSON error response. The server and its
// internal packages answer through it, so that every answer has the same
// headers and every error the same shape and the same public-safe message
// (netguard.Sanitize: no tokens, header values or URL queries).
package reply

import (
	"encoding/json"
	"fmt"
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
