package agent

import (
	"context"
	"net/http"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
)

// endSessionTimeout bounds the DELETE that ends a removed server's stored
// session, as the transport bounds the one it sends on close.
const endSessionTimeout = 2 * time.Second

// storedSession is a removed server's stored session that closing its
// connection does not end, with what ending it takes.
type storedSession struct {
	url, id, version string
	headers          map[string]string
	token            string // the OAuth bearer token, "" when none
}

// sessionToEnd returns the stored session of row when the remove must end
// it itself: a streamable HTTP session of a legacy protocol version (a
// 2026-07-28 session is stateless: nothing to end) that the server's live
// connection does not hold, as when the agent woke just before (the
// connection resuming it is still on its way), was opened dormant, or the
// server failed. A session the connection holds is ended by closing it.
// The bearer token of an OAuth server is read now, before the remove
// deletes it with the row.
func (a *Agent) sessionToEnd(ctx context.Context, row store.Server) *storedSession {
	o := row.Options
	switch {
	case o.SessionID == "" || o.ProtocolVersion == "" || o.ProtocolVersion >= store.StatelessProtocolVersion:
		return nil
	case row.URL == "" || o.Command != nil:
		return nil
	case o.TransportType != "" && o.TransportType != string(mcpclient.TransportAuto) && o.TransportType != string(mcpclient.TransportStreamableHTTP):
		return nil
	}
	if info, live := a.m.Server(row.ID); live && info.SessionID == o.SessionID {
		switch info.State {
		case mcpclient.StateConnected, mcpclient.StateDiscovering, mcpclient.StateReady:
			return nil
		}
	}
	s := &storedSession{url: row.URL, id: o.SessionID, version: o.ProtocolVersion, headers: o.Headers}
	if sa, ok := a.auths.Load(row.ID); ok && row.CallbackURL != "" {
		tctx, cancel := context.WithTimeout(ctx, endSessionTimeout)
		s.token, _ = sa.(*serverAuth).Token(tctx)
		cancel()
	}
	return s
}

// endSession ends s with the DELETE of the streamable HTTP transport,
// through the Manager's HTTP client (its SSRF guard applies), without
// connecting: no handshake, no stream. A failure is logged at debug level
// only: the server expires sessions nobody uses, and a 404 means it
// already has.
func (a *Agent) endSession(ctx context.Context, serverID string, s *storedSession) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endSessionTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		a.logger.Debug("ending the stored mcp session", "server", serverID, "error", err)
		return
	}
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", s.version)
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := a.m.HTTPClient().Do(req)
	if err != nil {
		a.logger.Debug("ending the stored mcp session", "server", serverID, "error", err)
		return
	}
	resp.Body.Close()
	a.logger.Debug("ended the stored mcp session", "server", serverID, "status", resp.StatusCode)
}
