package server

import (
	"net/http"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/server/internal/reply"
)

// The API's answers are written by package reply; what the engine's
// errors are on the API is package failure.

// apiErrorf returns an API error (reply.Errorf).
func apiErrorf(status int, code, format string, args ...any) *api.APIError {
	return reply.Errorf(status, code, format, args...)
}

// writeError writes e as the response (reply.Error).
func writeError(w http.ResponseWriter, e *api.APIError) { reply.Error(w, e) }

// writeJSON writes v as the response body with status (reply.JSON).
func writeJSON(w http.ResponseWriter, status int, v any) { reply.JSON(w, status, v) }
