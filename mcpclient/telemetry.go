package mcpclient

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/internal/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file ties the Manager to its OpenTelemetry instrumentation
// (package mcpclient/internal/telemetry, which docs/OBSERVABILITY.md
// describes): what the instruments observe of the Manager, the attributes
// of a session, and the spans of connections, discoveries, renewals and
// elicitation waits.

// InstrumentationName is the name of the Manager's tracer and meter.
const InstrumentationName = telemetry.InstrumentationName

// AttrServerID is the id the server is registered under in the Manager:
// agentmcp's own attribute, on every span and measurement about one
// server.
const AttrServerID = telemetry.AttrServerID

// gauges counts the servers in each state and the requests for input
// waiting, for the observable gauges.
func (m *Manager) gauges() (map[string]int64, int64) {
	counts := map[string]int64{}
	for _, state := range []State{StateConnecting, StateAuthenticating, StateConnected,
		StateDiscovering, StateReady, StateFailed, StateNotConnected} {
		counts[string(state)] = 0
	}
	for _, c := range m.snapshot() {
		c.mu.Lock()
		counts[string(c.state)]++
		c.mu.Unlock()
	}
	return counts, int64(m.hooks.inputs.Pending())
}

// errorType is the error.type of the Manager's own errors: "gate_closed"
// and "session_lost" (telemetry.Options.ErrorType).
func errorType(err error) string {
	switch {
	case errors.Is(err, ErrGateClosed):
		return "gate_closed"
	case isSessionLost(err):
		return "session_lost"
	}
	return ""
}

// telemetrySession returns the telemetry of a new session s of c.
func (c *server) telemetrySession(s *session) *telemetry.Session {
	srv := telemetry.Server{ID: c.ID, Network: "tcp", URL: c.opts.URL, Transport: string(s.transport), Listed: c.listed}
	switch s.transport {
	case TransportStdio:
		srv.Network, srv.URL = "pipe", ""
	case TransportInProcess:
		srv.Network, srv.URL = "inproc", ""
	}
	return telemetry.NewSession(srv)
}

// connectOnce is connectOnceUntraced in an agentmcp.connect span: the
// handshake (initialize, or server/discover) and its retries over another
// transport or after an authorisation are its children.
func (c *server) connectOnce(ctx context.Context, discoverNext bool) ConnectResult {
	ctx, span := c.m.tel.Start(ctx, telemetry.SpanConnect, c.ID())
	res := c.connectOnceUntraced(ctx, discoverNext)
	if span.IsRecording() {
		span.SetAttributes(telemetry.AttrServerState.String(string(res.State)))
		if res.State == StateConnected {
			c.mu.Lock()
			t, v := c.last.transport, c.last.protocolVersion
			c.mu.Unlock()
			span.SetAttributes(telemetry.AttrTransport.String(string(t)), telemetry.AttrProtocolVersion.String(v))
		}
	}
	if res.State == StateConnected || res.State == StateAuthenticating {
		span.End()
	} else {
		c.m.tel.End(span, res.Err)
	}
	return res
}

// discover fetches the catalog of a connected or ready server, in an
// agentmcp.discover span.
func (c *server) discover(ctx context.Context, timeout time.Duration) DiscoverResult {
	ctx, span := c.m.tel.Start(ctx, telemetry.SpanDiscover, c.ID())
	res := c.discoverOnce(ctx, timeout, true)
	if span.IsRecording() {
		span.SetAttributes(telemetry.AttrServerState.String(string(res.State)))
	}
	if res.Success {
		span.End()
	} else {
		c.m.tel.End(span, res.Err)
	}
	return res
}

// renewSpan starts the agentmcp.session.renew span of a renewal (a root
// span: renewals outlive whoever started them).
func (c *server) renewSpan(ctx context.Context, attempts int) (context.Context, func(error)) {
	ctx, end := c.m.tel.Renewal(ctx, c.ID(), attempts)
	return ctx, func(err error) {
		if errors.Is(err, errClosedMeanwhile) {
			err = nil // closed on purpose: not a failure
		}
		end(err)
	}
}

// noteAttempt counts one connection attempt of a renewal.
func (c *server) noteAttempt(ctx context.Context, k int, res ConnectResult) {
	var err error
	if res.State != StateConnected {
		err = res.Err
		if err == nil {
			err = errors.New(string(res.State))
		}
	}
	c.m.tel.Attempt(ctx, c.ID(), k, string(res.State), err)
}

// elicit is elicitUntraced in an agentmcp.elicitation.wait span: how long
// the server waited for the user.
func (c *server) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ctx, span := c.m.tel.Start(ctx, telemetry.SpanElicitation, c.ID())
	if span.IsRecording() {
		mode := "form"
		if p != nil {
			mode = input.ElicitationMode(p)
		}
		span.SetAttributes(telemetry.AttrElicitMode.String(mode))
	}
	res, err := c.elicitUntraced(ctx, p)
	if res != nil && span.IsRecording() {
		span.SetAttributes(telemetry.AttrElicitAction.String(res.Action))
	}
	c.m.tel.End(span, err)
	return res, err
}

// sessionTel is what a session keeps for mcp.client.session.duration.
type sessionTel struct {
	started atomic.Int64 // unix nanoseconds when installed; 0 once recorded
	dropped atomic.Value // error: why the connection dropped
}

// sessionStarted notes when s became a connection's session.
func (s *session) sessionStarted(now time.Time) { s.started.Store(now.UnixNano()) }

// recordSessionEnd records mcp.client.session.duration once, when s
// closes.
func (s *session) recordSessionEnd() {
	h := s.hooks
	start := s.started.Swap(0)
	if h == nil || start == 0 {
		return
	}
	dropped, _ := s.dropped.Load().(error)
	h.c.m.tel.SessionEnded(h.tel, s.cs, time.Since(time.Unix(0, start)), dropped)
}
