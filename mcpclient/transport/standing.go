package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
)

// StreamDialer opens the connection of a standing stream: the 2025-11-25
// GET stream, or the 2026-07-28 subscriptions/listen stream, which stay
// open, mostly idle, for the life of a connection.
//
// Through net/http, such a stream holds a pooled connection of its own
// with a read loop and a write loop goroutine, a buffered reader and a
// buffered writer, and the request and response that started it, for as
// long as it lives. With a StreamDialer, the stream's request is written
// on a connection dialled for it alone, its response read with
// [http.ReadResponse] through a small buffer, and the stream's reader is
// its only goroutine; the connection closes when the stream ends.
//
// The requests carry the same headers as through net/http (custom
// headers, credentials, session id, protocol version, Last-Event-ID),
// with no Accept-Encoding: the stream is not compressed. A stream goes
// through the HTTPClient instead, for the rest of the connection, when:
// its URL is neither http nor https; Proxy names a proxy for it; the
// connection's requests were answered over HTTP/2 (the stream is then one
// more stream on that shared connection, which costs less than a
// connection of its own); or the server answers the stream's request with
// a redirect (the request is then sent again through the HTTPClient, which
// follows it or refuses it as its CheckRedirect says).
type StreamDialer struct {
	// DialContext dials the TCP connection ("tcp", "host:port"). It is
	// required. Give it the dialer of the HTTPClient's transport (an SSRF
	// guard's, netguard.Guard.DialContext), so that the stream is checked
	// as the requests are.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)

	// TLSClientConfig configures https connections, as
	// http.Transport.TLSClientConfig does; nil means the defaults. Its
	// NextProtos is ignored: the stream speaks HTTP/1.1.
	TLSClientConfig *tls.Config

	// Proxy, if set, is asked about each stream's request, as
	// http.Transport.Proxy is: a stream that would go through a proxy
	// goes through the HTTPClient.
	Proxy func(*http.Request) (*url.URL, error)
}

// streamVia says how a connection opens its standing streams.
type streamVia struct {
	dialer *StreamDialer
	// viaClient is set once a stream had to go through the HTTPClient
	// (a redirect, a proxy, HTTP/2): the later ones do too.
	viaClient atomic.Bool
}

// noteProto records the protocol a response of the connection came over:
// with HTTP/2, the standing stream shares that connection.
func (v *streamVia) noteProto(resp *http.Response) {
	if resp.ProtoMajor >= 2 && v.dialer != nil && !v.viaClient.Load() {
		v.viaClient.Store(true)
	}
}

// errRedirected is how openOwn says the server redirected the stream.
var errRedirected = errors.New("redirected")

// openStream sends req and returns the response, on a connection of its
// own when the StreamDialer allows, else through client. A response is
// returned whatever its status; the caller checks it and closes its body.
func (v *streamVia) openStream(client *http.Client, req *http.Request) (*http.Response, error) {
	if !v.own(req) {
		return client.Do(req)
	}
	resp, err := v.openOwn(req)
	if !errors.Is(err, errRedirected) {
		return resp, err
	}
	// Sent again through the client, whose CheckRedirect decides.
	v.viaClient.Store(true)
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return client.Do(again)
}

// own reports whether req goes on a connection of its own.
func (v *streamVia) own(req *http.Request) bool {
	if v.dialer == nil || v.dialer.DialContext == nil || v.viaClient.Load() {
		return false
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return false
	}
	if v.dialer.Proxy != nil {
		if p, err := v.dialer.Proxy(req); err != nil || p != nil {
			v.viaClient.Store(true)
			return false
		}
	}
	return true
}

// standingBuffer is the read buffer of a standing stream's connection:
// it holds the response's header lines (a longer line is read in pieces)
// and the chunk framing; the event reader's reads of its own buffer's size
// go past it.
const standingBuffer = 512

// openOwn writes req on a connection dialled for it and reads the response
// head. The response's body closes the connection; so does the end of
// req's context, until then.
func (v *streamVia) openOwn(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	addr := hostPort(req.URL)
	conn, err := v.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: err}
	}
	if req.URL.Scheme == "https" {
		cfg := &tls.Config{}
		if v.dialer.TLSClientConfig != nil {
			cfg = v.dialer.TLSClientConfig.Clone()
		}
		cfg.NextProtos = []string{"http/1.1"}
		if cfg.ServerName == "" {
			cfg.ServerName = req.URL.Hostname()
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: err}
		}
		conn = tc
	}
	sc := &streamConn{Conn: conn}
	sc.stop = context.AfterFunc(ctx, sc.close)
	fail := func(err error) (*http.Response, error) {
		sc.close()
		sc.stop()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: err}
	}
	// The request goes out in one write: its head and body are small.
	w := bufio.NewWriterSize(conn, 1<<10)
	if err := req.Write(w); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	br := bufio.NewReaderSize(conn, standingBuffer)
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(br, req)
		if err != nil {
			return fail(err)
		}
		// 1xx answers (103 Early Hints, say) come before the real one.
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		sc.close() // first: closing the body would read it to its end
		sc.stop()
		return nil, errRedirected
	}
	resp.Body = &streamBody{ReadCloser: resp.Body, conn: sc}
	resp.Request = nil // nothing reads it; the stream would hold it
	return resp, nil
}

// streamConn is a standing stream's connection.
type streamConn struct {
	net.Conn
	stop func() bool // unregisters the close on the request's context
	once sync.Once
}

func (c *streamConn) close() { c.once.Do(func() { c.Conn.Close() }) }

// streamBody is the body of a standing stream: closing it closes the
// connection.
type streamBody struct {
	io.ReadCloser
	conn *streamConn
}

func (b *streamBody) Close() error {
	b.conn.stop()
	b.conn.close()
	return nil
}
