package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Dialer opens the connections a streamable connection sends its
// requests on and keeps its standing stream on, rather than net/http's
// Transport behind the HTTPClient; a transport.SSE connection uses it for its
// event stream alone.
//
// Requests: on HTTP/1.1 connections of the connection's own, kept idle
// between requests (16 at most, each closed after 90 s idle), written and
// read on the caller's goroutine. net/http hands each request to a write
// loop goroutine and its response back from a read loop goroutine, hand-offs
// that cost a sequential caller more CPU than the rest of the request, and
// an idle pooled connection holds those two goroutines and two buffers,
// where one of the Dialer's holds its socket (buffers come from pools for
// the length of a request). What net/http does that matters here is kept:
// validated headers, Host, User-Agent, Content-Length, Accept-Encoding:
// gzip with a gzip answer decompressed, the response head's limits, a
// connection reused only after an answer read to its end, and one retry on
// a new connection of a request that met a reused connection the server
// had closed before any byte of its answer.
//
// Standing streams (the 2025-11-25 GET stream, the 2026-07-28
// subscriptions/listen stream, the 2024-11-05 event stream), which stay
// open, mostly idle, for the life of a connection: the stream's request is
// written on a connection of its own (an idle connection of the requests'
// pool taken over, one Prewarm dialled say, else one dialled for it; a
// pooled one the server closed unanswered is given up for a new one,
// once), the response's head is
// read with [http.ReadResponse] through a small buffer that goes once it
// is read, a chunked body is read straight from the connection (its
// framing undone in place), and the stream's reader is its only
// goroutine; the connection closes when the stream ends. On unix, an idle
// stream over plain TCP holds no buffer at all: its reader waits for the
// socket to be readable before it takes one from a pool (over TLS, whose
// connection may hold a decrypted record, it keeps a 512-byte one). A
// stream's request has no Accept-Encoding: the stream is not compressed.
//
// Both carry the same headers as through net/http (custom headers,
// credentials, session id, protocol version, Last-Event-ID). They go
// through the HTTPClient instead, for the rest of the connection, when:
// the URL is neither http nor https, or has userinfo; Proxy names a proxy
// for it; the connection's requests were answered over HTTP/2 (one shared
// connection costs less); or the server answers with a redirect (the
// request is then sent again through the HTTPClient, which follows it or
// refuses it as its CheckRedirect says). Over https, a connection's first
// request goes through the HTTPClient, to learn whether the server speaks
// HTTP/2; the later ones go on the Dialer's connections once it answered
// over HTTP/1.1.
type Dialer struct {
	// DialContext dials the TCP connection ("tcp", "host:port"). It is
	// required. Give it the dialer of the HTTPClient's transport (an SSRF
	// guard's, netguard.Guard.DialContext), so that the connections are
	// checked as the HTTPClient's are.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)

	// TLSClientConfig configures https connections, as
	// http.Transport.TLSClientConfig does; nil means the defaults. Its
	// NextProtos is ignored: the Dialer's connections speak HTTP/1.1.
	TLSClientConfig *tls.Config

	// Proxy, if set, is asked about a connection's first request or
	// stream, as http.Transport.Proxy is (give it the HTTPClient
	// transport's Proxy): if it names a proxy, the connection's requests
	// and streams go through the HTTPClient.
	Proxy func(*http.Request) (*url.URL, error)

	// Gate, if set, is asked before each request or stream goes on a
	// connection of the dialer's, as a RoundTripper of the HTTPClient
	// would be (a replica's lease check, say): an error fails that request
	// with it, unsent. DialContext's connections may ask again before each
	// write.
	Gate func() error

	// pools holds the idle connections of the requests, by scheme and
	// host (*reqPool by poolKey), shared by the connections that use the
	// Dialer, as net/http's Transport shares its idle connections: a new
	// connection to a server (an agent woken, a session renewed) takes up
	// a warm one.
	pools sync.Map
}

// Via is how one MCP connection sends its requests and opens its
// standing streams: on the Dialer's connections while it can, through the
// connection's HTTPClient once it must (see [Dialer]). Its zero value
// sends everything through the HTTPClient. A Via is safe for concurrent
// use; it must not be copied after first use.
type Via struct {
	// Dialer is the Dialer of the connection's requests and streams; nil
	// sends them all through the HTTPClient. Set it before the first
	// request.
	Dialer *Dialer
	// viaClient is set once a stream had to go through the HTTPClient
	// (a redirect, a proxy, HTTP/2): the later ones do too.
	viaClient atomic.Bool
	// http1 is set once a response came over HTTP/1.x: an https
	// connection's requests then go on connections of the pool.
	http1 atomic.Bool
	// noProxy is set once Proxy named no proxy for the endpoint.
	noProxy atomic.Bool
	pool    atomic.Pointer[reqPool] // the dialer's pool of the endpoint's host, once known
}

// NoteProto records the protocol a response of the connection came over:
// with HTTP/2, the standing stream shares that connection.
func (v *Via) NoteProto(resp *http.Response) {
	if v.Dialer == nil || v.viaClient.Load() {
		return
	}
	if resp.ProtoMajor >= 2 {
		v.viaClient.Store(true)
	} else if !v.http1.Load() {
		v.http1.Store(true)
	}
}

// errRedirected is how openOwn says the server redirected the stream.
var errRedirected = errors.New("redirected")

// OpenStream sends req and returns the response, on a connection of its
// own when the Dialer allows, else through client. A response is
// returned whatever its status; the caller checks it and closes its body.
func (v *Via) OpenStream(client *http.Client, req *http.Request) (*http.Response, error) {
	return v.via(client, req, v.own(req), v.openOwn)
}

// own reports whether req goes on a connection of its own.
func (v *Via) own(req *http.Request) bool {
	if v.Dialer == nil || v.Dialer.DialContext == nil || v.viaClient.Load() {
		return false
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return false
	}
	if req.URL.User != nil {
		return false // net/http turns userinfo into Basic credentials
	}
	if v.Dialer.Proxy != nil && !v.noProxy.Load() {
		if p, err := v.Dialer.Proxy(req); err != nil || p != nil {
			v.viaClient.Store(true)
			return false
		}
		v.noProxy.Store(true) // the connection's requests all go to its endpoint
	}
	return true
}

// tlsHandshakeTimeout bounds a stream's TLS handshake, as
// http.DefaultTransport's TLSHandshakeTimeout does.
const tlsHandshakeTimeout = 10 * time.Second

// standingBuffer is the read buffer of a standing stream's connection:
// it holds the response's header lines (a longer line is read in pieces)
// and the chunk framing; the event reader's reads of its own buffer's size
// go past it.
const standingBuffer = 512

// maxStreamHead bounds the head (status line and headers, with any 1xx
// answers before it) of a standing stream's response: net/http's
// Transport default (MaxResponseHeaderBytes).
const maxStreamHead = 10 << 20

// maxInformational is how many 1xx answers may come before the response,
// as in net/http's Transport.
const maxInformational = 5

// openOwn writes req on a connection of its own and reads the response
// head: an idle connection of the requests' pool when there is one (one
// Prewarm dialled beside the handshake, say: the stream then waits for no
// dial), else one dialled for it. A pooled connection that the server
// closed before any byte of the answer is given up for a new one, once.
// The response's body closes the connection; so does the end of req's
// context, until then.
func (v *Via) openOwn(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := v.Dialer.gate(); err != nil {
		return nil, &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: err}
	}
	if pc := v.reqPool(req.URL).take(); pc != nil {
		resp, err := v.openOn(req, pc.Conn)
		if !errors.Is(err, errNothingRead) || ctx.Err() != nil {
			return resp, streamError(req, err)
		}
		if req.GetBody != nil {
			if req.Body, err = req.GetBody(); err != nil {
				return nil, streamError(req, err)
			}
		}
	}
	conn, err := v.Dialer.dial(ctx, req.URL)
	if err != nil {
		return nil, &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: err}
	}
	resp, err := v.openOn(req, conn)
	return resp, streamError(req, err)
}

// streamError is openOn's error as openOwn returns it.
func streamError(req *http.Request, err error) error {
	if err == nil || errors.Is(err, errRedirected) {
		return err
	}
	return &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: err}
}

// openOn writes req on conn and reads the response head (see openOwn). On
// an error conn is closed; the error wraps errNothingRead when the
// connection ended before any byte of the answer came.
func (v *Via) openOn(req *http.Request, conn net.Conn) (*http.Response, error) {
	ctx := req.Context()
	sc := &streamConn{Conn: conn}
	sc.stop = context.AfterFunc(ctx, sc.close)
	fail := func(err error) (*http.Response, error) {
		sc.close()
		sc.stop()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return fail(err) // not sent, as net/http sends no request whose context ended
	}
	// The request goes out in one write: its head and body are small.
	w := bufio.NewWriterSize(conn, 1<<10)
	err := req.Write(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		if isNothingRead(err) {
			err = fmt.Errorf("%w: %w", errNothingRead, err)
		}
		return fail(err)
	}
	head := &io.LimitedReader{R: conn, N: maxStreamHead}
	br := bufio.NewReaderSize(head, standingBuffer)
	resp, err := readResponseHead(br, head, req)
	if err != nil {
		if head.N == maxStreamHead && isNothingRead(err) {
			err = fmt.Errorf("%w: %w", errNothingRead, err)
		}
		return fail(err)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		sc.close() // first: closing the body would read it to its end
		sc.stop()
		return nil, errRedirected
	}
	body := resp.Body
	if len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked" {
		// Read straight from the connection, so that br and its buffer
		// go now rather than live as long as the stream.
		cb := &chunkedBody{r: conn, wait: readableWait(conn)}
		if n := br.Buffered(); n > 0 {
			head, _ := br.Peek(n)
			cb.pending = bytes.Clone(head)
		}
		body = cb
	}
	resp.Body = &streamBody{ReadCloser: body, conn: sc}
	resp.Request = nil // nothing reads it; the stream would hold it
	return resp, nil
}

// gate asks the Gate, if any.
func (d *Dialer) gate() error {
	if d.Gate == nil {
		return nil
	}
	return d.Gate()
}

// dial dials the connection of a request to u: TCP, with TLS over it for
// https (HTTP/1.1 only).
func (d *Dialer) dial(ctx context.Context, u *url.URL) (net.Conn, error) {
	conn, err := d.DialContext(ctx, "tcp", HostPort(u))
	if err != nil {
		return nil, err
	}
	if u.Scheme != "https" {
		return conn, nil
	}
	cfg := &tls.Config{}
	if d.TLSClientConfig != nil {
		cfg = d.TLSClientConfig.Clone()
	}
	cfg.NextProtos = []string{"http/1.1"}
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	tc := tls.Client(conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
	err = tc.HandshakeContext(hctx)
	cancel()
	if err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// readResponseHead reads the head of the response to req from br, which
// reads from head: the limit of the head's size (maxStreamHead), lifted
// once it is read, as net/http's Transport reads it
// (MaxResponseHeaderBytes): a server that sends an endless header line or
// endless headers cannot grow this process's memory. Informational (1xx)
// answers before the response are skipped, maxInformational at most.
func readResponseHead(br *bufio.Reader, head *io.LimitedReader, req *http.Request) (*http.Response, error) {
	for n := 0; ; n++ {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			if head.N <= 0 {
				err = fmt.Errorf("the response's head is larger than %d bytes", maxStreamHead)
			}
			return nil, err
		}
		// 1xx answers (103 Early Hints, say) come before the real one;
		// net/http takes 5 at most, and so does this.
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			head.N = math.MaxInt64
			return resp, nil
		}
		if n == maxInformational-1 {
			return nil, fmt.Errorf("more than %d informational (1xx) responses", maxInformational)
		}
	}
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

func (b *streamBody) IdleWait() func() error { return IdleWaitOf(b.ReadCloser) }

func (b *streamBody) Close() error {
	b.conn.stop()
	b.conn.close()
	return nil
}

// chunkedBody reads a chunked HTTP/1.1 body straight from its connection,
// removing the framing in place in the caller's buffer: it holds no buffer
// of its own, so that an idle stream holds none (with an [sse.Reader] made
// by NewIdleReader and its wait).
type chunkedBody struct {
	r       io.Reader // the connection
	pending []byte    // body bytes read with the response's head
	state   chunkState
	size    uint64 // of the chunk being read (data left, in chunkData)
	digits  int    // of the size line
	ext     int    // bytes of the size line's extension or padding
	err     error  // sticky
	// wait blocks until conn is readable; nil when it cannot be told.
	wait func() error
}

type chunkState uint8

const (
	chunkSize   chunkState = iota // reading the size's hex digits
	chunkExt                      // skipping to the end of the size line
	chunkSizeLF                   // after the size line's CR
	chunkData                     // reading data; size is what is left
	chunkDataCR                   // after the data, before its CR
	chunkDataLF                   // after the data's CR
	chunkDone                     // the last chunk was read
)

// errChunked is a malformed chunked body.
var errChunked = errors.New("malformed chunked encoding")

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		var n int
		var err error
		if len(b.pending) > 0 {
			n = copy(p, b.pending)
			if b.pending = b.pending[n:]; len(b.pending) == 0 {
				b.pending = nil // not held for the life of the stream
			}
		} else {
			n, err = b.r.Read(p)
		}
		m, derr := b.decode(p[:n])
		switch {
		case derr != nil:
			b.err = derr
		case b.state == chunkDone:
			b.err = io.EOF
		case err == io.EOF:
			b.err = io.ErrUnexpectedEOF // the connection ended inside the body
		case err != nil:
			b.err = err
		}
		if m > 0 || b.err != nil {
			if m > 0 && b.err == io.EOF {
				return m, nil // EOF on the next read
			}
			return m, b.err
		}
	}
}

// decode removes the chunk framing from p in place and returns how many
// data bytes are left at its start.
func (b *chunkedBody) decode(p []byte) (int, error) {
	w := 0
	for i := 0; i < len(p); {
		c := p[i]
		switch b.state {
		case chunkSize:
			switch {
			case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
				if b.digits++; b.digits > 16 { // as net/http's limit
					return w, errChunked
				}
				b.size = b.size<<4 | uint64(unhex(c))
			case c == ';' || c == ' ' || c == '\t':
				if b.digits == 0 {
					return w, errChunked
				}
				b.state = chunkExt
			case c == '\r':
				b.state = chunkSizeLF
			case c == '\n':
				if err := b.endSizeLine(); err != nil {
					return w, err
				}
			default:
				return w, errChunked
			}
			i++
		case chunkExt:
			switch c {
			case '\r':
				b.state = chunkSizeLF
			case '\n':
				if err := b.endSizeLine(); err != nil {
					return w, err
				}
			default:
				if b.ext++; b.ext > 4096 {
					return w, errChunked
				}
			}
			i++
		case chunkSizeLF:
			if c != '\n' {
				return w, errChunked
			}
			if err := b.endSizeLine(); err != nil {
				return w, err
			}
			i++
		case chunkData:
			k := min(uint64(len(p)-i), b.size)
			copy(p[w:], p[i:i+int(k)])
			w += int(k)
			i += int(k)
			if b.size -= k; b.size == 0 {
				b.state = chunkDataCR
			}
		case chunkDataCR:
			switch c {
			case '\r':
				b.state = chunkDataLF
			case '\n':
				b.state = chunkSize
			default:
				return w, errChunked
			}
			i++
		case chunkDataLF:
			if c != '\n' {
				return w, errChunked
			}
			b.state = chunkSize
			i++
		case chunkDone:
			return w, nil // the trailer, if any, is not read
		}
	}
	return w, nil
}

// endSizeLine starts the chunk whose size line was just read.
func (b *chunkedBody) endSizeLine() error {
	if b.digits == 0 {
		return errChunked
	}
	if b.size == 0 {
		b.state = chunkDone
	} else {
		b.state = chunkData
	}
	b.digits, b.ext = 0, 0
	return nil
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// IdleWait returns a function that blocks until a Read has something to
// return without blocking, or nil if none can be told.
func (b *chunkedBody) IdleWait() func() error {
	if b.wait == nil {
		return nil
	}
	return func() error {
		if len(b.pending) > 0 || b.err != nil {
			return nil
		}
		return b.wait()
	}
}

// IdleWaiter is a stream body that can tell when it has bytes to read (see
// sse.NewIdleReader). A reader that wraps such a body implements it by
// returning IdleWaitOf of the body.
type IdleWaiter interface {
	IdleWait() func() error
}

// IdleWaitOf returns r's idle wait, or nil.
func IdleWaitOf(r io.Reader) func() error {
	if w, ok := r.(IdleWaiter); ok {
		return w.IdleWait()
	}
	return nil
}

// Close is done by the streamBody that holds it.
func (b *chunkedBody) Close() error { return nil }
