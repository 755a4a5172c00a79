package h1

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The requests of a connection with a Dialer (the POSTs, the GETs that
// resume a response stream, the DELETE that ends a session; the POSTs of
// an HTTP+SSE connection) go on HTTP/1.1
// connections of the Dialer's pool for the endpoint's host, written and
// read on the caller's goroutine: see [Dialer] for what this keeps of net/http and when a
// request goes through the HTTPClient instead.

// maxIdleConns is how many idle connections a pool keeps for a host: as
// many as the callers that came at once, up to this (as the Manager's
// net/http Transport's MaxIdleConnsPerHost).
const maxIdleConns = 16

// idleConnTimeout closes a connection idle for this long, as
// http.DefaultTransport's IdleConnTimeout does.
const idleConnTimeout = 90 * time.Second

// livenessAfter is how long a connection may stay idle before it is
// checked for a close by the server when it is taken again (a connection
// idle for less is sent on unchecked: a server closing it in between is
// met by the one retry).
const livenessAfter = time.Second

// drainLimit bounds what is read, and drainTimeout how long, to find the
// end of an answer whose body is closed before its end (a response stream
// closed once the response was read, whose end follows at once), so that
// its connection can be reused. Past either, the connection is closed.
const (
	drainLimit   = 4 << 10
	drainTimeout = time.Second
)

// requestBuffer is the size of the write and read buffers of a request,
// from pools.
const requestBuffer = 4 << 10

// reqPool holds the idle connections to one host (see Dialer.pools).
type reqPool struct {
	mu    sync.Mutex
	idle  []*reqConn // the most recently used last
	timer *time.Timer
	armed bool
}

// poolFor returns the pool of u's scheme and host.
func (d *Dialer) poolFor(u *url.URL) *reqPool {
	key := u.Scheme + "://" + HostPort(u)
	if p, ok := d.pools.Load(key); ok {
		return p.(*reqPool)
	}
	p, _ := d.pools.LoadOrStore(key, &reqPool{})
	return p.(*reqPool)
}

// CloseIdleConnections closes the idle connections of the requests, as
// http.Transport.CloseIdleConnections does; the ones in use close or go
// idle when their request ends. The Dialer stays usable.
func (d *Dialer) CloseIdleConnections() {
	d.pools.Range(func(_, p any) bool {
		p.(*reqPool).closeIdle()
		return true
	})
}

// reqPool returns the pool of the connection's endpoint (all its requests
// go to it).
func (v *Via) reqPool(u *url.URL) *reqPool {
	if p := v.pool.Load(); p != nil {
		return p
	}
	p := v.Dialer.poolFor(u)
	v.pool.Store(p)
	return p
}

// reqConn is a connection of requests.
type reqConn struct {
	net.Conn
	raw       net.Conn  // the socket under TLS or a wrapper, for liveness checks
	idleSince time.Time // when it went idle
}

// Prewarm dials one connection into the pool of u's host, when the
// connection's requests go on the Dialer's connections and that pool holds
// none idle, so that the request or standing stream that comes next finds
// it open rather than dialling: a handshake's caller runs it beside the
// handshake's request, whose answer the standing stream and the first
// requests follow at once (the connection the handshake took is then one,
// this the other). ctx bounds the dial; nothing is kept once it ended. It
// returns when the connection is in the pool, or was not dialled.
func (v *Via) Prewarm(ctx context.Context, u *url.URL) {
	if v.Dialer == nil || v.Dialer.DialContext == nil || (u.Scheme == "https" && !v.http1.Load()) {
		return // an https connection's first request learns the protocol
	}
	probe := (&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}, Host: u.Host}).WithContext(ctx)
	if !v.own(probe) {
		return
	}
	pool := v.reqPool(u)
	if pool.idleCount() > 0 || v.Dialer.gate() != nil {
		return
	}
	conn, err := v.Dialer.dial(ctx, u)
	if err != nil {
		return
	}
	if ctx.Err() != nil {
		conn.Close()
		return
	}
	pool.put(&reqConn{Conn: conn, raw: netConnOf(conn)})
}

// spareKey is the context key of a request's spare (WithSpare).
type spareKey struct{}

// spare is what WithSpare put in a request's context.
type spare struct {
	life  context.Context
	spawn func(func()) bool
}

// WithSpare returns a context, derived from ctx, for a request that, when
// it dials its connection (the pool has none idle), has one more dialled
// beside it into the pool (Prewarm, bounded by life), on a goroutine that
// spawn starts (and its owner waits for; spawn reports false when it
// starts none). The spare is dialled only once the request has taken its
// own connection, so that the request never takes the spare.
func WithSpare(ctx, life context.Context, spawn func(func()) bool) context.Context {
	return context.WithValue(ctx, spareKey{}, &spare{life: life, spawn: spawn})
}

// wroteKey is the context key of a request's WithWrote function.
type wroteKey struct{}

// WithWrote returns a context, derived from ctx, for a request whose
// wrote is called once the request has been written on a connection of
// the Dialer's (each time it is, should it be sent again); not when it goes
// through the HTTPClient.
func WithWrote(ctx context.Context, wrote func()) context.Context {
	return context.WithValue(ctx, wroteKey{}, wrote)
}

// idleCount returns how many connections are idle in the pool.
func (p *reqPool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// take returns an idle connection, or nil.
func (p *reqPool) take() *reqConn {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return nil
		}
		pc := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		idle := time.Since(pc.idleSince)
		if idle < idleConnTimeout && (idle < livenessAfter || !closedByPeer(pc.raw)) {
			return pc
		}
		pc.Close()
	}
}

// put keeps pc for the next request, or closes it.
func (p *reqPool) put(pc *reqConn) {
	pc.idleSince = time.Now()
	p.mu.Lock()
	if len(p.idle) >= maxIdleConns {
		p.mu.Unlock()
		pc.Close()
		return
	}
	p.idle = append(p.idle, pc)
	if !p.armed {
		p.armed = true
		if p.timer == nil {
			p.timer = time.AfterFunc(idleConnTimeout, p.expire)
		} else {
			p.timer.Reset(idleConnTimeout)
		}
	}
	p.mu.Unlock()
}

// expire closes the connections idle for idleConnTimeout, and waits for
// the next one to be.
func (p *reqPool) expire() {
	now := time.Now()
	var stale []*reqConn
	p.mu.Lock()
	keep := p.idle[:0]
	for _, pc := range p.idle {
		if now.Sub(pc.idleSince) >= idleConnTimeout {
			stale = append(stale, pc)
		} else {
			keep = append(keep, pc)
		}
	}
	clear(p.idle[len(keep):])
	p.idle = keep
	p.armed = len(keep) > 0
	if p.armed {
		p.timer.Reset(idleConnTimeout - now.Sub(keep[0].idleSince))
	}
	p.mu.Unlock()
	for _, pc := range stale {
		pc.Close()
	}
}

// closeIdle closes the idle connections.
func (p *reqPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.armed = nil, false
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	for _, pc := range idle {
		pc.Close()
	}
}

// Do sends req: on a connection of the pool when it can, else through
// client. A response is returned whatever its status; the caller checks it
// and closes its body.
func (v *Via) Do(client *http.Client, req *http.Request) (*http.Response, error) {
	return v.via(client, req, v.ownRequest(req), v.roundTrip)
}

// via sends req with own's send when own is set, else through client; a
// redirect its own connection met is sent again through client (resend).
func (v *Via) via(client *http.Client, req *http.Request, own bool, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if !own {
		return client.Do(req)
	}
	resp, err := send(req)
	if errors.Is(err, errRedirected) {
		return v.resend(client, req)
	}
	return resp, err
}

// resend sends req through client, which follows the redirect its own
// connection met or refuses it, as its CheckRedirect says, and so do the
// connection's later requests.
func (v *Via) resend(client *http.Client, req *http.Request) (*http.Response, error) {
	v.viaClient.Store(true)
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		var err error
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return client.Do(again)
}

// ownRequest reports whether req goes on a connection of the pool.
func (v *Via) ownRequest(req *http.Request) bool {
	if req.URL.Scheme == "https" && !v.http1.Load() {
		return false // not yet seen to be answered over HTTP/1.1
	}
	if req.Body != nil && req.GetBody == nil {
		return false // the body could not be sent again
	}
	return v.own(req)
}

// roundTrip sends req on a connection of the pool, or a new one, and reads
// the response's head.
func (v *Via) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	resp, err := v.sendReused(req)
	if err != nil && !errors.Is(err, errRedirected) {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		err = &url.Error{Op: req.Method, URL: req.URL.Redacted(), Err: err}
	}
	return resp, err
}

// sendReused sends req on an idle connection of the pool, if any, else on
// a new one; a request that met a reused connection the server closed
// before it answered goes once more, on a new one.
func (v *Via) sendReused(req *http.Request) (*http.Response, error) {
	if err := v.Dialer.gate(); err != nil {
		return nil, err
	}
	pool := v.reqPool(req.URL)
	if pc := pool.take(); pc != nil {
		resp, err := v.send(pool, pc, req)
		if !errors.Is(err, errNothingRead) || req.Context().Err() != nil {
			return resp, err
		}
		if req.GetBody != nil {
			if req.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
	if sp, ok := req.Context().Value(spareKey{}).(*spare); ok {
		u := req.URL
		sp.spawn(func() { v.Prewarm(sp.life, u) })
	}
	conn, err := v.Dialer.dial(req.Context(), req.URL)
	if err != nil {
		return nil, err
	}
	return v.send(pool, &reqConn{Conn: conn, raw: netConnOf(conn)}, req)
}

// errNothingRead is a connection that ended before any byte of the
// answer came (sendReused tries once more when it was a reused one).
var errNothingRead = errors.New("the server closed the connection before answering")

// send writes req on pc and reads its response's head. On an error, pc is
// closed.
func (v *Via) send(pool *reqPool, pc *reqConn, req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	b := &ownBody{pool: pool, pc: pc}
	if ctx.Done() != nil {
		b.stop = context.AfterFunc(ctx, func() { pc.Close() })
	}
	fail := func(err error) (*http.Response, error) {
		b.release(false)
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// As net/http: a request whose context ended is not sent (the
		// close above may not have happened yet).
		return fail(err)
	}
	w := writers.Get().(*bufio.Writer)
	w.Reset(pc)
	gzipped, err := writeRequest(w, req)
	if err == nil {
		err = w.Flush()
	}
	w.Reset(nil)
	writers.Put(w)
	if err != nil {
		if isNothingRead(err) {
			err = fmt.Errorf("%w: %w", errNothingRead, err)
		}
		return fail(err)
	}
	if wrote, ok := ctx.Value(wroteKey{}).(func()); ok {
		wrote()
	}
	b.rd = readers.Get().(*headReader)
	b.rd.lr = io.LimitedReader{R: pc, N: maxStreamHead}
	b.rd.br.Reset(&b.rd.lr)
	resp, err := readResponseHead(b.rd.br, &b.rd.lr, req)
	if err != nil {
		if b.rd.lr.N == maxStreamHead && isNothingRead(err) {
			err = fmt.Errorf("%w: %w", errNothingRead, err)
		}
		return fail(err)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		b.release(false)
		return nil, errRedirected
	}
	b.body = resp.Body
	b.reusable = !resp.Close
	if resp.Body == http.NoBody {
		b.release(true)
		return resp, nil
	}
	resp.Body = b
	if gzipped && resp.Header.Get("Content-Encoding") == "gzip" {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		resp.Body = &gzipBody{body: b}
	}
	return resp, nil
}

// isNothingRead reports whether err is a connection that ended (or was
// reset) under a request.
func isNothingRead(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// headReader reads a response through a limit on its head's size.
type headReader struct {
	lr io.LimitedReader
	br *bufio.Reader
}

var (
	writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, requestBuffer) }}
	readers = sync.Pool{New: func() any {
		r := &headReader{}
		r.br = bufio.NewReaderSize(nil, requestBuffer)
		return r
	}}
)

// ownBody is the body of a response read on a connection of the pool. At
// its end, the connection goes back to the pool.
type ownBody struct {
	pool     *reqPool
	pc       *reqConn
	rd       *headReader
	body     io.ReadCloser // as http.ReadResponse made it, reading from rd
	stop     func() bool   // unregisters the close on the request's context
	reusable bool
	done     bool
	err      error // what Read returns once done
}

func (b *ownBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.release(true)
		b.err = io.EOF
	} else if err != nil {
		b.release(false)
		b.err = err
	}
	return n, err
}

// Close ends the body. One closed before its end is read on, a little,
// to find its end (see drainLimit).
func (b *ownBody) Close() error {
	if b.done {
		return nil
	}
	if !b.reusable {
		b.release(false)
		return nil
	}
	b.pc.SetReadDeadline(time.Now().Add(drainTimeout))
	var scratch [512]byte
	for read := 0; read < drainLimit; {
		n, err := b.body.Read(scratch[:])
		read += n
		if err == io.EOF {
			b.pc.SetReadDeadline(time.Time{})
			b.release(true)
			return nil
		}
		if err != nil {
			break
		}
	}
	b.release(false)
	return nil
}

// release ends the request: the connection goes back to the pool when ok,
// and it can be, else it is closed.
func (b *ownBody) release(ok bool) {
	if b.done {
		return
	}
	b.done = true
	b.err = http.ErrBodyReadAfterClose
	if b.stop != nil && !b.stop() {
		ok = false // the request's context closed the connection
	}
	if b.rd != nil {
		if b.rd.br.Buffered() > 0 {
			ok = false // bytes past the answer: the connection is out of step
		}
		b.rd.br.Reset(nil)
		b.rd.lr.R = nil
		readers.Put(b.rd)
		b.rd = nil
	}
	if ok && b.reusable {
		b.pool.put(b.pc)
	} else {
		b.pc.Close()
	}
}

// gzipBody decompresses a gzip answer, as net/http's Transport does for a
// request it asked one for.
type gzipBody struct {
	body *ownBody
	zr   *gzip.Reader
	err  error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil {
		g.err = err
		if err == io.EOF {
			g.body.Close() // the connection's end of the answer
		}
	}
	return n, err
}

func (g *gzipBody) Close() error { return g.body.Close() }

// writeRequest writes req's head and body as net/http's Transport writes
// an HTTP/1.1 request, and reports whether it asked for a gzip answer.
func writeRequest(w *bufio.Writer, req *http.Request) (gzipped bool, err error) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !httpguts.ValidHostHeader(host) {
		return false, errors.New("invalid Host header")
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	}
	for k, vs := range req.Header {
		if excludedHeader(k) {
			continue
		}
		if !httpguts.ValidHeaderFieldName(k) {
			return false, fmt.Errorf("invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return false, fmt.Errorf("invalid header field value for %q", k)
			}
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(trimHeaderValue(v))
			w.WriteString("\r\n")
		}
	}
	if req.Body != nil || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		w.WriteString("Content-Length: ")
		w.Write(strconv.AppendInt(w.AvailableBuffer(), max(req.ContentLength, 0), 10))
		w.WriteString("\r\n")
	}
	if req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == "" && method != http.MethodHead {
		w.WriteString("Accept-Encoding: gzip\r\n")
		gzipped = true
	}
	w.WriteString("\r\n")
	if req.Body != nil {
		n, err := w.ReadFrom(req.Body)
		req.Body.Close()
		if err != nil {
			return false, err
		}
		if n != req.ContentLength {
			return false, fmt.Errorf("http: ContentLength=%d with Body length %d", req.ContentLength, n)
		}
	}
	return gzipped, nil
}

// excludedHeader reports whether k is a header writeRequest writes itself,
// or net/http would not send from Request.Header.
func excludedHeader(k string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
		return true
	}
	return false
}

// trimHeaderValue trims the spaces net/http trims from a header's value.
func trimHeaderValue(v string) string {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// netConnOf returns the socket under conn: under TLS, and under wrappers
// that tell it (a NetConn method, as tls.Conn has).
func netConnOf(conn net.Conn) net.Conn {
	for {
		u, ok := conn.(interface{ NetConn() net.Conn })
		if !ok {
			return conn
		}
		conn = u.NetConn()
	}
}

// HostPort is u's host with its port, the scheme's default if none.
func HostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host + ":443"
	case "http":
		return u.Host + ":80"
	}
	return u.Host
}
