package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/internal/jsonrpcwire"
	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/internal/sse"
	"github.com/agentmcp/agentmcp/mcpclient/transport/internal/h1"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Header names of the streamable HTTP transport.
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerSessionID       = "Mcp-Session-Id"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
	headerLastEventID     = "Last-Event-ID"
)

// The protocol versions that mark the eras.
const (
	// ProtocolModern is the first version of the stateless era: no
	// sessions, Mcp-Method and Mcp-Name headers, no GET stream.
	ProtocolModern = protocol.Stateless
	// ProtocolLegacy is the newest version of the session era.
	ProtocolLegacy = protocol.LatestSession
)

// streamTiming bounds the reconnection of SSE streams (the legacy standalone
// GET stream and resumed response streams).
type streamTiming struct {
	baseDelay  time.Duration // first reconnect delay, before jitter
	maxDelay   time.Duration
	maxRetries int // consecutive attempts without progress before giving up
}

var defaultStreamTiming = streamTiming{baseDelay: 250 * time.Millisecond, maxDelay: 4 * time.Second, maxRetries: MaxStreamRetries}

// MaxStreamRetries is how many times in a row a stream is reopened without
// progress before the connection gives up on it.
const MaxStreamRetries = 3

// Streamable is an [mcp.Transport] for the streamable HTTP transport, in
// both protocol eras: 2026-07-28 (no sessions, Mcp-Method and Mcp-Name
// headers, no GET stream) and 2025-03-26 to 2025-11-25 (sessions, a
// standalone GET stream, resumption with Last-Event-ID).
//
// It differs from go-sdk's [mcp.StreamableClientTransport] in that HTTP
// failures are typed ([*HTTPError]), custom headers go on every request,
// messages and events are size-capped, a response that is too large or
// malformed fails its own call rather than the connection, a saved session
// can be resumed without a handshake, and Close is bounded. Its
// connections implement [SessionKeeper] and [VersionSetter].
//
// The fields must not be changed after the first Connect. Each Connect
// makes a new connection.
type Streamable struct {
	// Endpoint is the server's MCP endpoint URL. It is required.
	Endpoint string

	// HTTPClient sends every request. nil means http.DefaultClient. The
	// transport adds no SSRF guard of its own: give it a guarded client
	// (netguard) when the endpoint is not trusted.
	HTTPClient *http.Client

	// Header holds custom headers sent on every request (API keys, tenant
	// ids). They are never logged. nil means none.
	Header http.Header

	// MaxMessageSize caps one message (a JSON response or one event of a
	// stream), in bytes: a larger response fails its own call with
	// [ErrProtocol], not the connection. 0 means no cap.
	MaxMessageSize int

	// IdleTimeout reopens the legacy standalone GET stream, resuming it,
	// after this long without a byte (a proxy may have dropped it
	// silently). 0 means never.
	IdleTimeout time.Duration

	// Authorize, if set, adds credentials to each request (an
	// Authorization header, say). An error fails that request.
	Authorize func(*http.Request) error

	// Resume, if set and valid, is a saved session to resume: the
	// handshake (initialize or server/discover) is answered locally from
	// it, and the first requests tell whether the server still knows the
	// session (if not, they fail with [ErrSessionExpired]).
	Resume *Resume

	// Dialer, if set, carries the requests and the standing stream (the
	// 2025-11-25 GET stream, the 2026-07-28 subscriptions/listen stream)
	// on HTTP/1.1 connections of the connection's own rather than through
	// HTTPClient's Transport: a request then costs less CPU, and an idle
	// connection less memory and no goroutine (see [Dialer]). nil means
	// every request goes through HTTPClient.
	Dialer *Dialer

	// Counter, if set, is told the size of every message sent and
	// received.
	Counter Counter

	// Logger receives debug logs (never a header value or a URL query).
	// nil means none.
	Logger *slog.Logger

	// Life, if set, is the life of what the connections serve (the
	// Manager's server): once it is done, closing a connection no longer
	// waits for the answer to a legacy initialize whose caller gave up
	// (see the package doc), so that it returns at once even when the
	// server holds that answer; the wait goes on in the background,
	// bounded, and still ends the session the answer names. nil means
	// Close waits for it (up to two seconds).
	Life context.Context

	// EarlyListen, if set, has a 2026-07-28 connection send its
	// subscriptions/listen, asking for these notifications, beside
	// server/discover rather than after its answer; the listen go-sdk's
	// Connect writes after discover, for no more than these and with the
	// same _meta, then returns once the early stream is acknowledged,
	// without sending another (see earlylisten.go). An early listen nobody
	// claims is closed when the handshake ends. nil means the listen goes
	// when go-sdk writes it. Only the three list changes are honoured here
	// (not ResourceSubscriptions).
	EarlyListen *mcp.NotificationSubscriptions

	// timing bounds stream reconnections; the zero value means
	// defaultStreamTiming.
	timing streamTiming
	// abandonedWait, if not zero, replaces abandonedWait.
	abandonedWait time.Duration
}

// Counter counts the bytes of a connection's messages. Its methods may be
// called concurrently and must not block.
type Counter interface {
	Sent(bytes int)
	Received(bytes int)
}

// Connect returns a new connection. It does no I/O: the first request
// goes out with the first message written.
func (t *Streamable) Connect(context.Context) (mcp.Connection, error) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &streamableConn{
		ctx:      ctx,
		cancel:   cancel,
		incoming: make(chan jsonrpc.Message, 16),
		done:     make(chan struct{}),
		failed:   make(chan struct{}),
	}
	c.endpoint = t.Endpoint
	c.client = t.HTTPClient
	if c.client == nil {
		c.client = http.DefaultClient
	}
	c.header = t.Header
	c.maxMessageSize = t.MaxMessageSize
	c.idleTimeout = t.IdleTimeout
	c.authorize = t.Authorize
	c.counter = counterOf(t.Counter)
	c.logger = loggerOf(t.Logger)
	c.timing = t.timing
	c.life = t.Life
	if c.life == nil {
		c.life = context.Background()
	}
	c.abandonedWait = t.abandonedWait
	if c.abandonedWait == 0 {
		c.abandonedWait = abandonedWait
	}
	c.streams.Dialer = t.Dialer
	if t.EarlyListen != nil && !t.Resume.Valid() {
		f := *t.EarlyListen
		c.earlyFilter = &f
	}
	if c.timing == (streamTiming{}) {
		c.timing = defaultStreamTiming
	}
	if t.Resume.Valid() {
		c.resume = t.Resume
		c.sessionID = t.Resume.SessionID
		c.unconfirmed = true
	}
	return c, nil
}

// connConfig is what a connection copied from its transport's fields.
type connConfig struct {
	endpoint       string
	client         *http.Client
	header         http.Header // custom headers; never logged
	maxMessageSize int
	timing         streamTiming
	idleTimeout    time.Duration
	authorize      func(*http.Request) error
	counter        Counter
	logger         *slog.Logger
	life           context.Context // Streamable.Life, never nil
	abandonedWait  time.Duration
	earlyFilter    *mcp.NotificationSubscriptions // Streamable.EarlyListen's copy
}

type streamableConn struct {
	connConfig
	ctx      context.Context // lifetime of the connection; cancelled by Close
	cancel   context.CancelFunc
	incoming chan jsonrpc.Message
	wg       sync.WaitGroup // stream readers
	streams  h1.Via         // how standing streams are opened

	closeOnce sync.Once
	closeErr  error
	done      chan struct{} // closed by Close

	failOnce sync.Once
	failErr  error
	failed   chan struct{} // closed when the connection is broken

	// mu guards the fields below.
	mu              sync.Mutex
	sessionID       string
	protocolVersion string     // negotiated, once known
	initID          jsonrpc.ID // id of the pending initialize call
	standalone      bool       // whether the GET stream was started
	// standaloneUp is closed when the first GET attempt has an outcome.
	standaloneUp chan struct{}
	// resume is the saved session whose handshake is answered locally.
	resume *Resume
	// keep leaves the server's session alive on Close (no DELETE).
	keep bool
	// listenFailures counts the subscriptions/listen streams in a row
	// that ended without reading anything, or could not be opened again.
	listenFailures int
	// closing is set when Close begins: no stream reader starts after it,
	// so that its wait for them is final.
	closing bool
	// unconfirmed is set while a resumed session has had no successful
	// POST: any 4xx to its first requests means the server does not know
	// the session.
	unconfirmed bool
	// versionHeader and sessionHeader are the latest values of the
	// Mcp-Protocol-Version and Mcp-Session-Id headers (setHeaders).
	versionHeader, sessionHeader []string
	// early is the subscriptions/listen sent beside server/discover, until
	// go-sdk's listen claims it or it is dropped (earlylisten.go).
	early *earlyListen
	// unreachable is why the 2026-07-28 probe (server/discover) could not
	// reach the server: the legacy initialize that go-sdk sends next fails
	// with it at once, so that one attempt is one request.
	unreachable error
}

// KeepSession makes Close leave the server's session alive (no DELETE),
// so that it can be resumed (see [SessionKeeper]).
func (c *streamableConn) KeepSession() {
	c.mu.Lock()
	c.keep = true
	c.mu.Unlock()
}

func (c *streamableConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// SetNegotiatedVersion records the protocol version the handshake settled
// on (see [VersionSetter]). The legacy handshake's version is also read off
// the initialize response; a 2026-07-28 session has no handshake response
// to read it from.
func (c *streamableConn) SetNegotiatedVersion(version string) {
	c.mu.Lock()
	c.protocolVersion = version
	c.mu.Unlock()
	c.dropEarlyListen() // the handshake is over: unclaimed, it is not wanted
}

// modern reports whether the connection speaks 2026-07-28 or later.
func (c *streamableConn) modern() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.protocolVersion >= ProtocolModern
}

func (c *streamableConn) fail(err error) {
	c.failOnce.Do(func() {
		c.failErr = err
		close(c.failed)
	})
}

func (c *streamableConn) failure() error {
	select {
	case <-c.failed:
		return c.failErr
	default:
		return nil
	}
}

// Read returns the next message. Messages that arrived before the
// connection broke or closed are read first: a response read off a stream
// that then ended is still the response.
func (c *streamableConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		return msg, nil
	default:
	}
	select {
	case msg := <-c.incoming:
		return msg, nil
	case <-c.failed:
		if msg, ok := c.pending(); ok {
			return msg, nil
		}
		return nil, c.failErr
	case <-c.done:
		if msg, ok := c.pending(); ok {
			return msg, nil
		}
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pending returns a message already waiting, if any.
func (c *streamableConn) pending() (jsonrpc.Message, bool) {
	select {
	case msg := <-c.incoming:
		return msg, true
	default:
		return nil, false
	}
}

// noteInit notes the negotiated version when resp answers initialize, and
// opens the GET stream.
func (c *streamableConn) noteInit(resp *jsonrpc.Response) {
	c.mu.Lock()
	isInit := c.initID.IsValid() && resp.ID == c.initID
	c.mu.Unlock()
	if !isInit || resp.Error != nil {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(resp.Result, &res)
	c.mu.Lock()
	c.protocolVersion = res.ProtocolVersion
	c.initID = jsonrpc.ID{}
	c.mu.Unlock()
	// Open the GET stream before the client sends initialized: servers
	// send their first notifications (a tools/list_changed for tools
	// registered on initialized, say) on it.
	c.startStandalone()
}

// deliver hands msg to the reader, noting the negotiated version when msg
// answers initialize.
func (c *streamableConn) deliver(msg jsonrpc.Message) {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.noteInit(resp)
	}
	select {
	case c.incoming <- msg:
	case <-c.done:
	}
}

func (c *streamableConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "subscriptions/listen" && req.IsCall() {
		// go-sdk's listen: the early one may stand for it (earlylisten.go).
		if claimed, err := c.claimEarlyListen(ctx, req); claimed || err != nil {
			return err
		}
	}
	return c.write(ctx, msg, nil)
}

// CallDirect sends req and decodes its response into result, on the
// caller's goroutine (see [DirectCaller]).
func (c *streamableConn) CallDirect(ctx context.Context, req *jsonrpc.Request, result any) error {
	if !req.IsCall() {
		return errors.New("transport: CallDirect of a notification")
	}
	select {
	case <-c.done:
		return mcp.ErrConnectionClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		// Not sent, nor answered locally (a resumed handshake): a caller
		// that gave up gets no result, as go-sdk's Call returns none.
		return err
	}
	if info := callFrom(ctx); info != nil {
		info.needsInput.Store(nil) // what an earlier round left is stale now
	}
	d := &direct{ctx: ctx, result: result}
	d.call.answer = d.answer
	if req.Method == "initialize" {
		// Its answer tells the negotiated version and opens the GET
		// stream, as deliver does for go-sdk's initialize.
		d.call.answer = func(resp *jsonrpc.Response) {
			c.noteInit(resp)
			d.answer(resp)
		}
	}
	err := c.write(ctx, req, &d.call)
	switch {
	case d.answered:
		return d.err
	case ctx.Err() != nil:
		c.cancelRequest(ctx, req.ID)
		return ctx.Err()
	case err != nil && errors.Is(err, context.Canceled):
		// Not the caller's context: the connection's, which its failure
		// or Close cancelled under the request. go-sdk's session fails its
		// calls in flight with ErrConnectionClosed then; so does this.
		return c.closedError()
	case err != nil:
		return err
	}
	// The stream ended with the connection.
	return c.closedError()
}

// closedError is the error of a request the connection's end cut short:
// mcp.ErrConnectionClosed, with the failure that ended it, if any.
func (c *streamableConn) closedError() error {
	if err := c.failure(); err != nil {
		return fmt.Errorf("%w: %w", mcp.ErrConnectionClosed, err)
	}
	return mcp.ErrConnectionClosed
}

// direct is the state of one CallDirect, in one allocation.
type direct struct {
	call     Call
	ctx      context.Context
	result   any
	answered bool
	err      error
}

// answer decodes the response into the caller's result; a result that
// needs input is also kept in the Call of the request's context (see
// DirectCaller).
func (d *direct) answer(resp *jsonrpc.Response) {
	d.answered = true
	d.err = decodeResult(resp, d.result)
	if res, ok := d.result.(*mcp.CallToolResult); ok && d.err == nil && res.NeedsInput() {
		if info := callFrom(d.ctx); info != nil {
			data := bytes.Clone(resp.Result)
			info.needsInput.Store(&data)
		}
	}
}

// cancelRequest tells a legacy server that the caller gave up on request
// id, as go-sdk's session does: notifications/cancelled, sent on a
// goroutine that Close waits for, so that the caller is not held up. A
// 2026-07-28 request is cancelled by closing its response stream, which
// the caller's context already did.
func (c *streamableConn) cancelRequest(ctx context.Context, id jsonrpc.ID) {
	if c.modern() {
		return
	}
	params, err := json.Marshal(&mcp.CancelledParams{Reason: ctx.Err().Error(), RequestID: id.Raw()})
	if err != nil {
		return
	}
	c.goStream(func() {
		nctx, cancel := context.WithTimeout(c.ctx, cancelNotifyTimeout)
		defer cancel()
		if err := c.Write(nctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params}); err != nil {
			c.logger.Debug("sending notifications/cancelled", "error", err)
		}
	})
}

// cancelNotifyTimeout bounds the sending of notifications/cancelled.
const cancelNotifyTimeout = 5 * time.Second

// write sends msg. direct, if not nil, is the Call of a request sent with
// CallDirect: its response goes to direct.answer, and a response stream is
// read on this goroutine. Its steps: prepare (what the message is, and
// what is answered without the server), post (the HTTP request and its
// answer's head), then readReply (the response, JSON or an event stream).
func (c *streamableConn) write(ctx context.Context, msg jsonrpc.Message, direct *Call) error {
	if err := c.failure(); err != nil {
		return err
	}
	if handled, err := c.resumeHandshake(msg, direct); handled {
		return err
	}
	out, done, err := c.prepare(ctx, msg, direct)
	if done {
		return err
	}
	if out.call != nil {
		switch out.call.Method {
		case "server/discover":
			if c.earlyFilter != nil {
				// Once discover is on its way, not before: the server
				// takes it first (earlylisten.go).
				discover := out.call
				out.wrote = sync.OnceFunc(func() { c.startEarlyListen(discover) })
			}
		case "initialize":
			c.dropEarlyListen() // the server is not of 2026-07-28
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", out.summary, err)
	}
	c.counter.Sent(len(data))

	// The request lives until the caller gives up or the connection closes.
	reqCtx, cancelReq := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancelReq)
	release := func() { stop(); cancelReq() }

	resp, err := c.post(ctx, reqCtx, msg, out, data)
	if err != nil {
		release()
		return err
	}
	if out.wrote != nil {
		out.wrote() // if not called yet: sent through the HTTPClient
	}
	if out.call == nil {
		resp.Body.Close()
		release()
		return nil
	}
	return c.readReply(ctx, reqCtx, resp, out, direct != nil, release)
}

// outgoing is what write learnt of a message before posting it.
type outgoing struct {
	summary string           // the method, or "response": for errors
	call    *jsonrpc.Request // set when the message expects a response
	cl      *Call            // where the response goes, if not to Read as is
	wrote   func()           // called once the request is written, if set
}

// prepare looks at msg before it is posted: what it is, and where its
// response goes. done reports that write ends here, with err: the first
// round of a call whose CallDirect result needs input (answered with that
// result), an initialize after the server was found unreachable, or a
// 2026-07-28 notification (none goes over HTTP: cancellation is closing
// the response stream). Before notifications/initialized, it waits for
// the legacy standalone stream.
func (c *streamableConn) prepare(ctx context.Context, msg jsonrpc.Message, direct *Call) (out outgoing, done bool, err error) {
	out.cl = direct
	switch m := msg.(type) {
	case *jsonrpc.Request:
		out.summary = m.Method
		if m.IsCall() {
			out.call = m
			if direct == nil {
				if info := callFrom(ctx); info != nil {
					if data := info.needsInput.Swap(nil); data != nil && m.Method == "tools/call" {
						// The first round of a call whose CallDirect
						// result needs input, written again by the client
						// to take it from there: it has its answer.
						c.reply(callOf(ctx, m.Method), &jsonrpc.Response{ID: m.ID, Result: *data})
						return out, true, nil
					}
				}
				out.cl = callOf(ctx, m.Method)
				out.cl.reset()
			}
			if m.Method == "initialize" {
				c.mu.Lock()
				c.initID = m.ID
				unreachable := c.unreachable
				c.mu.Unlock()
				if unreachable != nil {
					return out, true, unreachable
				}
			}
		} else if c.modern() {
			// 2026-07-28 defines no client-to-server notifications over
			// HTTP; cancellation is closing the response stream.
			return out, true, nil
		} else if m.Method == "notifications/initialized" {
			c.awaitStandalone(ctx)
		}
	case *jsonrpc.Response:
		out.summary = "response"
	}
	return out, false, nil
}

// post sends data, msg encoded, as a POST in reqCtx (on the Dialer's
// connections or through the HTTPClient) and checks the answer's head; it
// notes the session id a legacy server gave. On an error, nothing is left
// open; ctx's error is returned when the caller gave up.
func (c *streamableConn) post(ctx, reqCtx context.Context, msg jsonrpc.Message, out outgoing, data []byte) (*http.Response, error) {
	rctx := reqCtx
	if out.call != nil && (out.call.Method == "initialize" || out.call.Method == "server/discover") && c.streams.Dialer != nil {
		// The standing stream (the legacy GET stream, subscriptions/listen)
		// and the first requests follow the handshake's answer at once: a
		// connection for them is dialled beside the handshake's, rather
		// than after it. An early listen (earlylisten.go), sent once
		// discover is written, takes it, and the first requests
		// discover's.
		rctx = h1.WithSpare(reqCtx, c.ctx, c.goStream)
	}
	if out.wrote != nil {
		rctx = h1.WithWrote(rctx, out.wrote)
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.endpoint, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header["Content-Type"] = headerJSON
	req.Header["Accept"] = headerAcceptBoth
	c.setHeaders(req, metaProtocolVersion(msg))
	if out.call != nil {
		setModernHeaders(ctx, req.Header, out.call)
	}
	if c.authorize != nil {
		if err := c.authorize(req); err != nil {
			return nil, rejected(fmt.Errorf("%s: %w", out.summary, err))
		}
	}
	var resp *http.Response
	switch {
	case out.call != nil && out.call.Method == "subscriptions/listen":
		// A standing stream, which may have a connection of its own.
		resp, err = c.streams.OpenStream(c.client, req)
	case out.call != nil && out.call.Method == "initialize":
		resp, err = c.postInitialize(rctx, req)
	default:
		resp, err = c.streams.Do(c.client, req)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		err = rejected(fmt.Errorf("%s: %w", out.summary, safetext.Err(err)))
		if out.summary == "server/discover" && IsUnreachable(err) {
			c.mu.Lock()
			c.unreachable = err
			c.mu.Unlock()
		}
		return nil, err
	}
	if err := c.checkResponse(req, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if sid := resp.Header.Get(headerSessionID); sid != "" {
		c.mu.Lock()
		if c.sessionID == "" {
			c.sessionID = sid
		}
		c.mu.Unlock()
	}
	return resp, nil
}

// abandonedWait bounds how long the answer to an initialize whose caller
// gave up is awaited, to end the session it made.
const abandonedWait = 2 * time.Second

// postInitialize sends req, a legacy initialize, which may make a session
// on the server as soon as it is read. A caller that gave up (reqCtx done)
// before the answer came would leave that session open on the server, its
// id known to no one: the request is not cut short then, but awaited in
// the background for at most abandonedWait, and the session its answer
// names is ended (a DELETE); see abandon for who waits for that. It
// returns the answer, whose body lives as long as reqCtx, or reqCtx's
// error.
func (c *streamableConn) postInitialize(reqCtx context.Context, req *http.Request) (*http.Response, error) {
	hctx, cancel := context.WithCancel(context.WithoutCancel(reqCtx))
	type answer struct {
		resp *http.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := c.streams.Do(c.client, req.WithContext(hctx))
		answered <- answer{resp, err}
	}()
	select {
	case a := <-answered:
		if a.err != nil {
			cancel()
			return nil, a.err
		}
		stop := context.AfterFunc(reqCtx, cancel)
		a.resp.Body = &afterBody{ReadCloser: a.resp.Body, release: func() { stop(); cancel() }}
		return a.resp, nil
	case <-reqCtx.Done():
	}
	c.abandon(func() {
		defer cancel()
		t := time.NewTimer(c.abandonedWait)
		defer t.Stop()
		var a answer
		select {
		case a = <-answered:
		case <-t.C:
			cancel()
			a = <-answered
		}
		if a.err != nil {
			return
		}
		sid := a.resp.Header.Get(headerSessionID)
		a.resp.Body.Close()
		if sid != "" && a.resp.StatusCode/100 == 2 {
			c.logger.Debug("ending the mcp session of an abandoned handshake")
			c.deleteSession(sid)
		}
	})
	return nil, reqCtx.Err()
}

// abandon runs wait, the wait for an abandoned initialize's answer and the
// DELETE of its session (bounded), on a goroutine of its own, and has it
// waited for while the connection's life (Streamable.Life) lasts: by
// Close, or by the handshake's goroutine once Close has begun. Once that
// life ends (what the connection served is closing: a server removed, a
// Manager or an agent closed), nobody waits for it any more: wait goes on
// by itself and ends within its bound, and Close returns at once.
func (c *streamableConn) abandon(wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait()
	}()
	await := func() {
		select {
		case <-done:
		case <-c.life.Done():
		}
	}
	c.mu.Lock()
	tracked := !c.closing
	if tracked {
		c.wg.Add(1)
	}
	c.mu.Unlock()
	if !tracked {
		await() // Close has begun: this goroutine is the handshake's
		return
	}
	go func() {
		defer c.wg.Done()
		await()
	}()
}

// afterBody is a response body that calls release once closed.
type afterBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *afterBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// deleteSession ends the legacy session sid on the server (a DELETE,
// bounded to two seconds); failures are logged at debug level.
func (c *streamableConn) deleteSession(sid string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.endpoint, nil)
	if err == nil {
		c.setHeaders(req, "")
		req.Header[headerSessionID] = []string{sid}
		if c.authorize != nil {
			err = c.authorize(req)
		}
	}
	if err == nil {
		var resp *http.Response
		if resp, err = c.streams.Do(c.client, req); err == nil {
			resp.Body.Close()
		}
	}
	if err != nil {
		c.logger.Debug("ending mcp session", "error", err)
	}
}

// readReply reads the response to out.call from resp, by its content
// type: a JSON body at once, an event stream on this goroutine for a
// direct call, else on a goroutine of the connection's. release ends the
// request once its body is read.
func (c *streamableConn) readReply(ctx, reqCtx context.Context, resp *http.Response, out outgoing, direct bool, release func()) error {
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mediaType {
	case "application/json":
		defer release()
		defer resp.Body.Close()
		return c.readJSONReply(ctx, resp.Body, out)
	case "text/event-stream":
		if direct {
			defer release()
			c.readCallStream(reqCtx, ctx, resp, out.call, out.cl)
			return nil
		}
		if !c.goStream(func() {
			defer release()
			c.readCallStream(reqCtx, ctx, resp, out.call, out.cl)
		}) {
			resp.Body.Close()
			release()
			return mcp.ErrConnectionClosed
		}
		return nil
	default:
		resp.Body.Close()
		release()
		return rejected(protocolError("%s: unexpected content type %q", out.summary, resp.Header.Get("Content-Type")))
	}
}

// readJSONReply reads a JSON answer to out.call from body and hands it to
// out.cl. An answer that is not the response is passed on to Read, and
// the call fails, as it would otherwise wait for an answer that cannot
// come.
func (c *streamableConn) readJSONReply(ctx context.Context, body io.Reader, out outgoing) error {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer putBodyBuffer(buf)
	if err := readLimited(buf, body, c.maxMessageSize); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return rejected(fmt.Errorf("%s: reading response: %w", out.summary, err))
	}
	c.counter.Received(buf.Len())
	reply, err := jsonrpcwire.DecodeShared(buf.Bytes())
	if err != nil {
		return rejected(protocolError("%s: malformed response: %v: %s", out.summary, err, safetext.Quote(buf.Bytes())))
	}
	if r, ok := reply.(*jsonrpc.Response); ok && r.ID == out.call.ID {
		c.reply(out.cl, r)
		return nil
	}
	jsonrpcwire.Own(reply)
	c.deliver(reply)
	c.reply(out.cl, &jsonrpc.Response{ID: out.call.ID, Error: protocolError("%s: the server's JSON answer is not the response to the request", out.summary)})
	return nil
}

// reply hands resp, the response to a request whose Call is cl (nil if
// none), to whoever waits for it: the caller of CallDirect, or the client
// through Read. resp is as jsonrpcwire.DecodeShared returned it.
func (c *streamableConn) reply(cl *Call, resp *jsonrpc.Response) {
	if cl != nil && cl.answer != nil {
		cl.answer(resp)
		return
	}
	c.deliver(cl.take(resp)) // which owns what it returns
}

// resumeHandshake answers the handshake of a resumed session locally:
// initialize (legacy) or server/discover (2026-07-28) gets the saved result,
// and the legacy initialized notification is not sent, since the server
// already had it. Nothing else is handled.
func (c *streamableConn) resumeHandshake(msg jsonrpc.Message, direct *Call) (handled bool, err error) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false, nil
	}
	c.mu.Lock()
	r := c.resume
	c.mu.Unlock()
	if r == nil {
		return false, nil
	}
	var result any
	switch req.Method {
	case "initialize":
		c.mu.Lock()
		c.initID = req.ID
		c.mu.Unlock()
		result = r.Result
	case "server/discover":
		result = &mcp.DiscoverResult{
			Meta:              mcp.Meta{"io.modelcontextprotocol/serverInfo": r.Result.ServerInfo},
			SupportedVersions: []string{r.ProtocolVersion},
			Capabilities:      r.Result.Capabilities,
			Instructions:      r.Result.Instructions,
		}
	case "notifications/initialized":
		c.mu.Lock()
		c.resume = nil
		c.mu.Unlock()
		return true, nil
	default:
		return false, nil
	}
	data, err := json.Marshal(result)
	if err != nil {
		return true, err
	}
	if req.Method == "server/discover" {
		c.mu.Lock()
		c.resume = nil
		c.mu.Unlock()
	}
	c.reply(direct, &jsonrpc.Response{ID: req.ID, Result: data})
	return true, nil
}

// setHeaders sets the custom headers, the protocol version and the session
// id on req.
func (c *streamableConn) setHeaders(req *http.Request, protocolVersion string) {
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	c.mu.Lock()
	if protocolVersion == "" {
		protocolVersion = c.protocolVersion
	}
	// The values are kept as header slices, shared by the requests (which
	// never change them): one allocation less per header and request.
	if len(c.versionHeader) == 0 || c.versionHeader[0] != protocolVersion {
		c.versionHeader = []string{protocolVersion}
	}
	if len(c.sessionHeader) == 0 || c.sessionHeader[0] != c.sessionID {
		c.sessionHeader = []string{c.sessionID}
	}
	version, sid := c.versionHeader, c.sessionHeader
	c.mu.Unlock()
	if protocolVersion != "" {
		req.Header[headerProtocolVersion] = version
	}
	if sid[0] != "" && protocolVersion < ProtocolModern {
		req.Header[headerSessionID] = sid
	}
}

// Header values shared by every request (see setHeaders).
var (
	headerJSON       = []string{"application/json"}
	headerAcceptBoth = []string{"application/json, text/event-stream"}
)

// checkResponse turns an unusable response into an error. The body is left
// for the caller to close.
func (c *streamableConn) checkResponse(req *http.Request, resp *http.Response) error {
	c.streams.NoteProto(resp)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if req.Method == http.MethodPost {
			c.mu.Lock()
			c.unconfirmed = false
			c.mu.Unlock()
		}
		return nil
	}
	herr := newHTTPError(req, resp)
	if req.Header.Get(headerSessionID) != "" && c.sessionRejected(req, herr) {
		// The server does not know the session. The connection is over;
		// the Manager starts a new one.
		err := fmt.Errorf("%w (%w): %w", ErrSessionExpired, mcp.ErrSessionMissing, herr)
		c.fail(err)
		return err
	}
	if herr.JSONRPC != nil {
		return rejected(fmt.Errorf("%w: %w", herr.JSONRPC, herr))
	}
	return rejected(herr)
}

// sessionGone reports whether the server said it no longer knows the
// session with a 404, as the spec says: ending it (DELETE) is pointless.
// A session rejected otherwise (a 400 or 410 naming it, any 4xx to a
// resumed session's first POST, such as a refused duplicate request id)
// may live on on the server, and is ended when the connection closes.
func (c *streamableConn) sessionGone() bool {
	var herr *HTTPError
	err := c.failure()
	return errors.Is(err, ErrSessionExpired) && errors.As(err, &herr) && herr.StatusCode == http.StatusNotFound
}

// sessionRejected reports whether herr, the answer to req (which carried a
// session id), means the server does not know the session: 404, as the
// spec says; 400 or 410 whose message names the session, as many servers
// answer (the TypeScript SDK's "Bad Request: No valid session ID
// provided"); any 4xx but authorisation and rate limiting to a POST of a
// resumed session that no POST has yet confirmed.
func (c *streamableConn) sessionRejected(req *http.Request, herr *HTTPError) bool {
	switch code := herr.StatusCode; {
	case code == http.StatusNotFound:
		return true
	case code == http.StatusBadRequest || code == http.StatusGone:
		msg := herr.Body
		if herr.JSONRPC != nil {
			msg = herr.JSONRPC.Message
		}
		if strings.Contains(strings.ToLower(msg), "session") {
			return true
		}
	}
	if req.Method != http.MethodPost || herr.StatusCode < 400 || herr.StatusCode >= 500 ||
		herr.StatusCode == http.StatusTooManyRequests || errors.Is(herr, ErrUnauthorized) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unconfirmed
}

// newHTTPError reads the start of resp's body into an HTTPError.
func newHTTPError(req *http.Request, resp *http.Response) *HTTPError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	herr := &HTTPError{
		Method:          req.Method,
		URL:             safetext.URL(req.URL),
		StatusCode:      resp.StatusCode,
		Status:          resp.Status,
		WWWAuthenticate: resp.Header.Values("WWW-Authenticate"),
	}
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
			var werr *jsonrpc.Error
			if errors.As(r.Error, &werr) {
				herr.JSONRPC = werr
			}
		}
	}
	if herr.JSONRPC == nil {
		herr.Body = safetext.Body(resp.Header.Get("Content-Type"), body)
	}
	return herr
}

// readCallStream reads the SSE response stream of call, resuming it with a
// GET and Last-Event-ID (legacy era only) when the server ends it before the
// response, as the 2025-11-25 spec allows; a 2026-07-28
// subscriptions/listen ended so is issued again (listen.go). writeCtx is
// the context call was written with; ctx is the request's own, which ends
// with this stream.
func (c *streamableConn) readCallStream(ctx, writeCtx context.Context, resp *http.Response, call *jsonrpc.Request, cl *Call) {
	lastID := ""
	retries := 0
	for {
		// A subscriptions/listen stream stays open, mostly idle, for the
		// life of the connection: it holds only what it needs.
		resp.Header = nil
		r := c.processStream(ctx, resp.Body, call.ID, cl, call.Method == "subscriptions/listen")
		resp.Body.Close()
		switch {
		case r.answered || ctx.Err() != nil:
			return
		case r.err != nil && !isStreamBreak(r.err):
			c.reply(cl, &jsonrpc.Response{ID: call.ID, Error: r.err})
			return
		case call.Method == "subscriptions/listen" && !r.cancelled: // 2026-07-28 only
			c.relisten(writeCtx, call, r.events > 0) // listen.go
			return
		}
		if r.lastID != "" && r.lastID != lastID {
			lastID, retries = r.lastID, 0
		} else {
			retries++
		}
		if lastID == "" || c.modern() || retries > c.timing.maxRetries {
			err := fmt.Errorf("%s: the server ended the response stream without a response", call.Method)
			if r.err != nil {
				err = fmt.Errorf("%w: %w", err, r.err) // the break itself, for errors.Is/As
			}
			c.reply(cl, &jsonrpc.Response{ID: call.ID, Error: err})
			return
		}
		if !c.wait(ctx, c.timing.delay(retries, r.retry)) {
			return
		}
		next, err := c.get(ctx, lastID, false)
		if err != nil {
			if ctx.Err() == nil {
				c.reply(cl, &jsonrpc.Response{ID: call.ID, Error: fmt.Errorf("%s: resuming the response stream: %w", call.Method, err)})
			}
			return
		}
		resp = next
	}
}

// startStandalone starts the legacy GET stream for server-initiated
// messages, once.
func (c *streamableConn) startStandalone() {
	c.mu.Lock()
	start := !c.standalone && c.protocolVersion < ProtocolModern
	if start {
		c.standalone = true
		c.standaloneUp = make(chan struct{})
	}
	up := c.standaloneUp
	c.mu.Unlock()
	if !start {
		return
	}
	var once sync.Once
	opened := func() { once.Do(func() { close(up) }) }
	if !c.goStream(func() { c.standaloneLoop(opened) }) {
		opened()
	}
}

// goStream runs a stream reader on a goroutine that Close waits for,
// unless Close has begun (it reports false then).
func (c *streamableConn) goStream(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

// awaitStandalone waits, briefly, for the GET stream to open (or fail), so
// that what the server sends on it right after initialized is not lost.
func (c *streamableConn) awaitStandalone(ctx context.Context) {
	c.mu.Lock()
	up := c.standaloneUp
	c.mu.Unlock()
	if up == nil {
		return
	}
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-up:
	case <-t.C:
	case <-ctx.Done():
	}
}

// standaloneLoop keeps the legacy GET stream open, reconnecting with
// backoff. A server that does not offer the stream (405, or any other 4xx
// to the first GET) is left alone; one that forgot the session, or that
// cannot be reached or keeps refusing after several attempts, breaks the
// connection so the Manager reconnects.
func (c *streamableConn) standaloneLoop(opened func()) {
	defer opened()
	lastID := ""
	retries := 0
	offered := false // whether the server ever opened the stream
	for {
		ctx, cancel := context.WithCancel(c.ctx)
		resp, err := c.get(ctx, lastID, true)
		opened()
		if c.ctx.Err() != nil {
			cancel()
			return
		}
		if err != nil {
			cancel()
			var herr *HTTPError
			switch {
			case errors.Is(err, ErrSessionExpired):
				return // the connection already failed
			case !offered && errors.As(err, &herr) && herr.StatusCode < 500 && herr.StatusCode != http.StatusTooManyRequests:
				c.logger.Debug("mcp server offers no standalone SSE stream", "status", herr.StatusCode)
				return
			}
			// A server that offered the stream and now refuses it (409
			// while it still holds the old one, 401 with an expiring
			// token) is asked again, with backoff, like one that cannot
			// be reached; giving up would silently lose its notifications.
			retries++
			if retries > c.timing.maxRetries {
				c.fail(fmt.Errorf("standalone SSE stream: %w", err))
				return
			}
			if !c.wait(c.ctx, c.timing.delay(retries, 0)) {
				return
			}
			continue
		}
		offered = true
		resp.Header = nil // read; not held for the life of the stream
		body := io.Reader(resp.Body)
		if c.idleTimeout > 0 {
			body = newIdleReader(resp.Body, c.idleTimeout, cancel)
		}
		r := c.processStream(c.ctx, body, jsonrpc.ID{}, nil, true)
		resp.Body.Close()
		idle := ctx.Err() != nil && c.ctx.Err() == nil
		cancel()
		if idle {
			// Silent for too long: reopen it at once, resuming.
			c.logger.Debug("standalone SSE stream idle; reopening")
			if r.lastID != "" {
				lastID = r.lastID
			}
			continue
		}
		if c.ctx.Err() != nil {
			return
		}
		if r.err != nil && !isStreamBreak(r.err) {
			c.fail(fmt.Errorf("standalone SSE stream: %w", r.err))
			return
		}
		if r.events > 0 {
			retries = 0
		}
		if r.lastID != "" {
			lastID = r.lastID
		}
		retries++
		if retries > c.timing.maxRetries {
			c.fail(errors.New("standalone SSE stream: the server keeps closing it"))
			return
		}
		if !c.wait(c.ctx, c.timing.delay(retries, r.retry)) {
			return
		}
	}
}

// get opens a GET event stream, resuming after lastID if set. standing
// says it is the standalone stream, which may have a connection of its own
// (Dialer).
func (c *streamableConn) get(ctx context.Context, lastID string, standing bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	c.setHeaders(req, "")
	if lastID != "" {
		req.Header.Set(headerLastEventID, lastID)
	}
	if c.authorize != nil {
		if err := c.authorize(req); err != nil {
			return nil, err
		}
	}
	var resp *http.Response
	if standing {
		resp, err = c.streams.OpenStream(c.client, req)
	} else {
		resp, err = c.streams.Do(c.client, req)
	}
	if err != nil {
		return nil, safetext.Err(err)
	}
	if err := c.checkResponse(req, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return nil, &HTTPError{Method: req.Method, URL: safetext.URL(req.URL), StatusCode: http.StatusNotAcceptable,
			Status: "unexpected content type " + resp.Header.Get("Content-Type")}
	}
	return resp, nil
}

// streamResult is what processStream saw.
type streamResult struct {
	answered  bool          // the response to the call arrived
	cancelled bool          // the server cancelled the call (notifications/cancelled)
	events    int           // events read
	lastID    string        // last event id seen
	retry     time.Duration // server-requested reconnection delay
	err       error         // why the stream ended (nil: clean EOF)
}

// processStream delivers the messages of one event stream until it ends or
// the response to call (if valid) arrives, handing its large text content
// to cl (if not nil). long says the stream is one that stays open.
func (c *streamableConn) processStream(ctx context.Context, body io.Reader, call jsonrpc.ID, cl *Call, long bool) streamResult {
	var r streamResult
	var sr *sse.Reader
	if wait := h1.IdleWaitOf(body); long && wait != nil {
		sr = sse.NewIdleReader(body, c.maxMessageSize, wait) // holds no buffer while idle
	} else if long {
		sr = sse.NewLongReader(body, c.maxMessageSize)
	} else {
		sr = sse.NewReader(body, c.maxMessageSize)
		defer sr.Release()
	}
	for {
		ev, err := sr.Next()
		if err != nil {
			if err != io.EOF {
				if errors.Is(err, sse.ErrEventTooLarge) {
					err = protocolError("%v (limit %d bytes)", err, c.maxMessageSize)
				}
				r.err = err
			}
			return r
		}
		r.events++
		if ev.ID != "" {
			r.lastID = ev.ID
		}
		if ev.Retry != "" {
			if ms, err := strconv.Atoi(ev.Retry); err == nil && ms >= 0 {
				r.retry = time.Duration(ms) * time.Millisecond
			}
		}
		if len(ev.Data) == 0 || (ev.Name != "" && ev.Name != "message") {
			continue // priming event, or one we do not know
		}
		c.counter.Received(len(ev.Data))
		msg, err := jsonrpcwire.DecodeShared(ev.Data)
		if err != nil {
			r.err = protocolError("malformed message in event stream: %v: %s", err, safetext.Quote(ev.Data))
			return r
		}
		resp, ok := msg.(*jsonrpc.Response)
		answer := ok && call.IsValid() && resp.ID == call
		if answer {
			c.reply(cl, resp)
			r.answered = true
			return r
		}
		jsonrpcwire.Own(msg) // ev.Data is reused for the next event
		if cancels(msg, call) {
			r.cancelled = true
		}
		if cl != nil && cl.heard != nil {
			cl.heard(msg)
		}
		c.deliver(msg)
		if ctx.Err() != nil {
			return r
		}
	}
}

// isStreamBreak reports whether err is a broken stream (worth resuming)
// rather than a protocol violation.
func isStreamBreak(err error) bool { return !errors.Is(err, ErrProtocol) }

// wait waits for d, or until ctx is done or the connection closes.
func (c *streamableConn) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-c.done:
		return false
	}
}

// delay is the wait before reconnect attempt n (1-based; 0, the first
// attempt after progress, waits as 1): the server's retry field when
// given, else exponential backoff with full jitter.
func (s streamTiming) delay(n int, serverRetry time.Duration) time.Duration {
	if serverRetry > 0 {
		return serverRetry
	}
	d := s.baseDelay << min(max(n-1, 0), 16)
	if d > s.maxDelay || d <= 0 {
		d = s.maxDelay
	}
	return d/2 + rand.N(d/2+1)
}

// Close ends the session (DELETE, bounded to two seconds), stops every
// stream, and waits for their readers.
func (c *streamableConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		sid, keep := c.sessionID, c.keep
		c.mu.Unlock()
		if sid != "" && !keep && !c.sessionGone() && !c.modern() {
			c.deleteSession(sid)
		}
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.cancel()
		close(c.done)
		c.wg.Wait()
	})
	return c.closeErr
}

// bodyBuffers holds buffers for JSON response bodies, which are decoded
// (and copied out of) at once.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putBodyBuffer(b *bytes.Buffer) {
	if b.Cap() <= sse.MaxPooled {
		b.Reset()
		bodyBuffers.Put(b)
	}
}

// readLimited reads all of r into buf, failing with ErrProtocol past limit
// bytes.
func readLimited(buf *bytes.Buffer, r io.Reader, limit int) error {
	if limit <= 0 {
		_, err := buf.ReadFrom(r)
		return err
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, int64(limit)+1)); err != nil {
		return err
	}
	if buf.Len() > limit {
		return protocolError("message larger than the limit of %d bytes", limit)
	}
	return nil
}

// idleReader cancels a stream that stays silent for longer than timeout.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func newIdleReader(r io.Reader, d time.Duration, cancel context.CancelFunc) *idleReader {
	return &idleReader{r: r, d: d, timer: time.AfterFunc(d, cancel)}
}

func (r *idleReader) IdleWait() func() error { return h1.IdleWaitOf(r.r) }

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.timer.Reset(r.d)
	}
	if err != nil {
		r.timer.Stop()
	}
	return n, err
}
