package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"sync"

	"github.com/agentmcp/agentmcp/internal/jsonrpcwire"
	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/internal/sse"
	"github.com/agentmcp/agentmcp/mcpclient/transport/internal/h1"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SSE is an [mcp.Transport] for the deprecated HTTP+SSE transport of
// protocol version 2024-11-05: a GET event stream whose first event names
// the endpoint that messages are POSTed to.
//
// Unlike go-sdk's [mcp.SSEClientTransport], the stream outlives the
// context given to Connect (that context only bounds the wait for the
// endpoint event), custom headers go on the GET as well as on every POST,
// HTTP failures are typed ([*HTTPError]), events are size-capped, and the
// endpoint must be on the same origin as the stream.
//
// The fields must not be changed after the first Connect. Each Connect
// opens a new stream.
type SSE struct {
	// Endpoint is the URL of the server's event stream. It is required.
	Endpoint string

	// HTTPClient sends every request. nil means http.DefaultClient. The
	// transport adds no SSRF guard of its own.
	HTTPClient *http.Client

	// Header holds custom headers sent on every request. They are never
	// logged. nil means none.
	Header http.Header

	// MaxMessageSize caps one event of the stream, in bytes: a larger one
	// ends the connection with [ErrProtocol]. 0 means no cap.
	MaxMessageSize int

	// Authorize, if set, adds credentials to each request.
	Authorize func(*http.Request) error

	// Dialer, if set, opens the event stream, which stays open for
	// the life of the connection, on a connection of its own rather than
	// through HTTPClient, and sends the POSTs on HTTP/1.1 connections of
	// its pool (see [Dialer]). Unlike [Streamable]'s, the stream is the
	// connection's first request, so an HTTP/2 server's stream gets a
	// connection of its own too. nil means every request goes through
	// HTTPClient.
	Dialer *Dialer

	// Counter, if set, is told the size of every message sent and
	// received.
	Counter Counter

	// Logger receives debug logs. nil means none.
	Logger *slog.Logger
}

// Connect opens the event stream and waits, bounded by ctx, for its
// endpoint event.
func (t *SSE) Connect(ctx context.Context) (mcp.Connection, error) {
	client := t.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	base, err := url.Parse(t.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("invalid SSE endpoint: %w", err)
	}
	life, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(life, http.MethodGet, t.Endpoint, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	for k, vs := range t.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "text/event-stream")
	if t.Authorize != nil {
		if err := t.Authorize(req); err != nil {
			cancel()
			return nil, err
		}
	}
	// ctx bounds the handshake only: the stream's request uses life.
	stop := context.AfterFunc(ctx, cancel)
	streams := &h1.Via{Dialer: t.Dialer}
	resp, err := streams.OpenStream(client, req)
	if err != nil {
		stop()
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, safetext.Err(err)
	}
	fail := func(err error) (mcp.Connection, error) {
		stop()
		resp.Body.Close()
		cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for the SSE endpoint event: %w", ctx.Err())
		}
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return fail(newHTTPError(req, resp))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		// A streamable-only server answering GET with JSON, say: this
		// endpoint does not implement the SSE transport.
		return fail(&HTTPError{Method: req.Method, URL: safetext.URL(req.URL), StatusCode: http.StatusNotFound,
			Status: "not an event stream: " + resp.Header.Get("Content-Type")})
	}
	var sr *sse.Reader
	if wait := h1.IdleWaitOf(resp.Body); wait != nil {
		sr = sse.NewIdleReader(resp.Body, t.MaxMessageSize, wait) // holds no buffer while idle
	} else {
		sr = sse.NewLongReader(resp.Body, t.MaxMessageSize)
	}
	ev, err := sr.Next()
	if err != nil {
		return fail(protocolError("SSE stream ended before the endpoint event: %v", err))
	}
	if ev.Name != "endpoint" {
		return fail(protocolError("first SSE event is %q, want \"endpoint\"", ev.Name))
	}
	post, err := base.Parse(string(bytes.TrimSpace(ev.Data)))
	if err != nil {
		return fail(protocolError("invalid SSE endpoint %q: %v", ev.Data, err))
	}
	if !sameOrigin(post, base) {
		return fail(protocolError("the SSE endpoint event names another origin (%s)", safetext.URL(post)))
	}
	if !stop() {
		// ctx ended while we were reading: the stream is already cancelled.
		return fail(ctx.Err())
	}
	c := &sseConn{
		connConfig: connConfig{
			endpoint:       t.Endpoint,
			client:         client,
			header:         t.Header,
			maxMessageSize: t.MaxMessageSize,
			authorize:      t.Authorize,
			counter:        counterOf(t.Counter),
			logger:         loggerOf(t.Logger),
		},
		post:     post.String(),
		streams:  streams,
		ctx:      life,
		cancel:   cancel,
		incoming: make(chan jsonrpc.Message, 16),
		done:     make(chan struct{}),
	}
	c.wg.Add(1)
	go c.read(sr, resp.Body)
	return c, nil
}

type sseConn struct {
	connConfig
	post     string  // where messages go; carries the session in its query
	streams  *h1.Via // how the stream was opened, and the POSTs go
	ctx      context.Context
	cancel   context.CancelFunc
	incoming chan jsonrpc.Message
	wg       sync.WaitGroup

	closeOnce sync.Once
	done      chan struct{}

	errMu sync.Mutex
	err   error // why the stream ended
}

func (c *sseConn) SessionID() string { return "" }

// read delivers the messages of the event stream until it ends; the end of
// the stream is the end of the session.
func (c *sseConn) read(sr *sse.Reader, body io.ReadCloser) {
	defer c.wg.Done()
	defer body.Close()
	var err error
	for {
		var ev sse.Event
		if ev, err = sr.Next(); err != nil {
			break
		}
		if len(ev.Data) == 0 || (ev.Name != "" && ev.Name != "message") {
			continue
		}
		c.counter.Received(len(ev.Data))
		var msg jsonrpc.Message
		if msg, err = jsonrpcwire.Decode(ev.Data); err != nil {
			err = protocolError("malformed message in SSE stream: %v: %s", err, safetext.Quote(ev.Data))
			break
		}
		select {
		case c.incoming <- msg:
		case <-c.done:
			return
		}
	}
	if errors.Is(err, sse.ErrEventTooLarge) {
		err = protocolError("%v (limit %d bytes)", err, c.maxMessageSize)
	}
	if err == io.EOF || err == nil {
		err = errors.New("the server closed the SSE stream")
	}
	c.errMu.Lock()
	if c.err == nil {
		// The first cause stands: a session expiry seen by Write ends the
		// stream too, and must not read as a mere closed stream.
		c.err = fmt.Errorf("%w: %w", mcp.ErrConnectionClosed, err)
	}
	c.errMu.Unlock()
	c.shutdown()
}

// Read returns the next message; messages that arrived before the stream
// ended are read first.
func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		return msg, nil
	default:
	}
	select {
	case msg := <-c.incoming:
		return msg, nil
	case <-c.done:
		select {
		case msg := <-c.incoming:
			return msg, nil
		default:
		}
		c.errMu.Lock()
		defer c.errMu.Unlock()
		if c.err != nil {
			return nil, c.err
		}
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.done:
		return mcp.ErrConnectionClosed
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.counter.Sent(len(data))
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.post, bytes.NewReader(data))
	if err != nil {
		return err
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	if c.authorize != nil {
		if err := c.authorize(req); err != nil {
			return rejected(err)
		}
	}
	resp, err := c.streams.Do(c.client, req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return rejected(safetext.Err(err))
	}
	defer resp.Body.Close()
	c.streams.NoteProto(resp)
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		herr := newHTTPError(req, resp)
		if resp.StatusCode == http.StatusNotFound {
			// The session in the endpoint URL is gone.
			c.errMu.Lock()
			c.err = fmt.Errorf("%w (%w): %w", ErrSessionExpired, mcp.ErrSessionMissing, herr)
			err := c.err
			c.errMu.Unlock()
			c.shutdown()
			return err
		}
		return rejected(herr)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	return nil
}

// Close stops the event stream and waits for its reader.
func (c *sseConn) Close() error {
	c.shutdown()
	c.wg.Wait()
	return nil
}

// shutdown stops the event stream without waiting; the reader calls it when
// the stream ends.
func (c *sseConn) shutdown() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.cancel()
	})
}
