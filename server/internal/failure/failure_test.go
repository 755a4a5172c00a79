package failure

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server/internal/reply"
)

// TestCallErrorGateClosed: a call this replica did not send because its
// ownership is in doubt (the store does not answer) is a 503 to retry,
// not the MCP server's error.
func TestCallErrorGateClosed(t *testing.T) {
	t.Parallel()
	e := Call(nil, "one", `tools/call "echo"`, fmt.Errorf("calling tool: %w: %w", mcpclient.ErrGateClosed, errors.New("replica not trusted")))
	rec := httptest.NewRecorder()
	reply.Error(rec, e)
	if rec.Code != http.StatusServiceUnavailable || e.Code != api.CodeUnavailable || rec.Header().Get("Retry-After") != "1" || e.ServerID != "one" {
		t.Errorf("gate closed: %d %+v, Retry-After %q; want 503 %s with Retry-After 1", rec.Code, e, rec.Header().Get("Retry-After"), api.CodeUnavailable)
	}
}
