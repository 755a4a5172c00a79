package forward

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/cluster/lease"
	"github.com/agentmcp/agentmcp/server/internal/guard"
	"github.com/agentmcp/agentmcp/server/internal/reply"
)

// Options configure a Forwarder.
type Options struct {
	// Replica is this process's membership. Required.
	Replica *cluster.Replica

	// Key is the cluster key requests are signed with. Required.
	Key string

	// WaitForOwner bounds how long a request waits for an owner that
	// cannot be reached. Required (the server's default is 15 seconds).
	WaitForOwner time.Duration

	// Streams ends the forwarded streams when it is done (the server's
	// CloseStreams). Nil means context.Background.
	Streams context.Context

	// Logger receives a warning per interrupted request. Nil discards.
	Logger *slog.Logger
}

// Forwarder sends requests to the replicas that own their agents, and
// checks the requests forwarded to this one.
type Forwarder struct {
	replica   *cluster.Replica
	signer    *cluster.Signer
	transport *http.Transport
	wait      time.Duration
	streams   context.Context
	logger    *slog.Logger
}

// New returns a Forwarder for o.
func New(o *Options) *Forwarder {
	f := &Forwarder{replica: o.Replica, signer: cluster.NewSigner(o.Key), wait: o.WaitForOwner, streams: o.Streams, logger: o.Logger}
	if f.streams == nil {
		f.streams = context.Background()
	}
	if f.logger == nil {
		f.logger = slog.New(slog.DiscardHandler)
	}
	f.transport = &http.Transport{
		Proxy:                 nil, // replicas talk directly
		DialContext:           (&net.Dialer{Timeout: 3 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // a tool call may take long; the client's request bounds it
	}
	return f
}

// CloseIdleConnections closes the idle connections to the other replicas.
func (f *Forwarder) CloseIdleConnections() { f.transport.CloseIdleConnections() }

// forwardedKey marks the context of a request that came through the
// cluster listener: it is served here or refused, never forwarded again.
// Its value is the scheme the client used.
type forwardedKey struct{}

// Forwarded reports whether r came through the cluster listener
// (Receive).
func Forwarded(r *http.Request) bool { return r.Context().Value(forwardedKey{}) != nil }

// Receive checks a request to the cluster listener: its signature
// (cluster.Signer), reading its body (at most limit bytes, within
// bodyTimeout) to check its hash. It returns r marked as forwarded
// (Forwarded), its body in memory and its signature header removed, or
// the error to answer.
func (f *Forwarder) Receive(w http.ResponseWriter, r *http.Request, limit int64, bodyTimeout time.Duration) (*http.Request, *api.APIError) {
	sig, err := f.signer.Parse(r)
	if err == nil {
		if aerr := guard.ReadBody(w, r, limit, bodyTimeout); aerr != nil {
			return nil, aerr
		}
		var body []byte
		if guard.HasBody(r) {
			body, _ = io.ReadAll(r.Body) // in memory (ReadBody)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		err = f.signer.Check(r, sig, body)
	}
	switch {
	case err == nil:
	case errors.Is(err, cluster.ErrReplayFull):
		aerr := reply.Errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "%v", err)
		aerr.RetryAfter = 1
		return nil, aerr
	default:
		return nil, reply.Errorf(http.StatusUnauthorized, api.CodeUnauthorized, "%v", err)
	}
	r.Header.Del(cluster.SignatureHeader)
	proto := "http"
	if r.Header.Get("X-Forwarded-Proto") == "https" && r.TLS == nil {
		proto = "https"
	}
	return r.WithContext(context.WithValue(r.Context(), forwardedKey{}, proto)), nil
}

// scheme is the scheme the client used for r: its own, or the one the
// forwarding replica saw.
func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	if p, ok := r.Context().Value(forwardedKey{}).(string); ok {
		return p
	}
	return "http"
}

// Forward answers r, whose agent o.Namespace another replica owns (o;
// its URL may be unknown), by sending it to the owner: one hop, on the
// owner's cluster listener. stream says that r opens a stream. An owner
// that cannot be reached is waited for (Options.WaitForOwner) until its
// lease expires, and the agent is then woken here (cluster.Replica.Follow
// decides whom to try and how long to wait); a request sent that got no
// answer is retried only when it is safe to repeat (repeatable),
// otherwise it is answered 502 interrupted. It reports whether it
// answered r (false: the agent is free now, and the caller wakes it here).
// r's body must be in memory (guard.ReadBody).
func (f *Forwarder) Forward(w http.ResponseWriter, r *http.Request, o lease.Owner, stream bool) bool {
	if Forwarded(r) {
		w.Header().Set(movedHeader, "1")
		w.Header().Set("Retry-After", "1")
		reply.Error(w, reply.Errorf(http.StatusServiceUnavailable, api.CodeOwnerMoved, "agent %s has moved to another replica; retry", o.Namespace))
		return true
	}
	body, err := io.ReadAll(r.Body) // read whole already (guard.ReadBody)
	if err != nil {
		reply.Error(w, reply.Errorf(http.StatusBadRequest, api.CodeInvalidRequest, "reading the body: %v", err))
		return true
	}
	// The request may end up served here after all (its owner died).
	r.Body = io.NopCloser(bytes.NewReader(body))
	// A forwarded stream ends with this server's streams (CloseStreams, on
	// drain or shutdown), and when its owner's lease lapses or moves on
	// (cluster.Replica.WatchLease): its client reconnects, and finds the agent's new owner.
	var endStream context.CancelFunc
	if stream {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(f.streams, cancel)()
		r, endStream = r.WithContext(ctx), cancel
	}
	// Unreachable, or no owner named: Follow waits for its lease to lapse
	// (or the agent to move), then the agent is taken here or followed.
	free, err := f.replica.Follow(r.Context(), o.Namespace, o, time.Now().Add(f.wait), func(o lease.Owner) bool {
		stopWatch := func() {}
		if stream {
			var wctx context.Context
			wctx, stopWatch = context.WithCancel(r.Context())
			go f.replica.WatchLease(wctx, endStream, o.Namespace, o.Replica)
		}
		sent, err := f.proxy(w, r, o.ClusterURL, body)
		stopWatch()
		if err == nil {
			return true
		}
		if sent && !repeatable(r) {
			f.logger.Warn("forwarded request interrupted: its agent's replica went away", "agent", o.Namespace, "error", err)
			reply.Error(w, reply.Errorf(http.StatusBadGateway, api.CodeInterrupted,
				"the replica that held agent %s went away during the request; whether it took effect is unknown (it was not repeated)", o.Namespace))
			return true
		}
		return false
	})
	switch {
	case errors.Is(err, cluster.ErrOwnerUnavailable):
		w.Header().Set("Retry-After", "2")
		reply.Error(w, reply.Errorf(http.StatusServiceUnavailable, api.CodeOwnerUnavailable, "the replica that holds agent %s does not answer; retry", o.Namespace))
	case err != nil && err == r.Context().Err():
		// the client left
	case err != nil:
		reply.Error(w, reply.Errorf(http.StatusServiceUnavailable, api.CodeOwnerUnavailable, "finding the replica of agent %s: %v", o.Namespace, err))
	}
	return !free
}

// Place forwards r, for the agent ns that no replica owns, to the replica
// that should wake it instead of this draining one
// (cluster.Replica.Elsewhere). It reports false when there is none.
func (f *Forwarder) Place(w http.ResponseWriter, r *http.Request, ns string, stream bool) bool {
	rep, ok := f.replica.Elsewhere(r.Context())
	if !ok {
		return false
	}
	return f.Forward(w, r, lease.Owner{Namespace: ns, Replica: rep.ID, ClusterURL: rep.ClusterURL}, stream)
}

// repeatable reports whether r may be sent again when its outcome is
// unknown: reads, removals, and the API's idempotent actions (adding a
// server that exists returns it; reconnecting twice reconnects once
// more). A tool call may not: it is answered 502 interrupted instead.
func repeatable(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodDelete:
		return true
	case http.MethodPost:
		for _, suffix := range []string{"/servers", "/reconnect", "/resources/read", "/prompts/get", "/hibernate"} {
			if strings.HasSuffix(r.URL.Path, suffix) {
				return true
			}
		}
	}
	return false
}

// proxy sends r to the cluster listener at base and copies the answer to
// w. It reports an error only when nothing was written to w; sent says
// whether r may have reached the owner (it got past connecting).
func (f *Forwarder) proxy(w http.ResponseWriter, r *http.Request, base string, body []byte) (sent bool, err error) {
	target, err := url.Parse(base)
	if err != nil {
		return false, err
	}
	var failure error
	bodySum := sha256.Sum256(body)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host // the client's: callback URLs are built from it
			pr.Out.Header.Set("X-Forwarded-Proto", scheme(pr.In))
			pr.Out.Header.Del("Authorization") // checked here; the owner trusts the signature
			pr.Out.Header.Del("Cookie")
			pr.Out.Body = io.NopCloser(bytes.NewReader(body))
			pr.Out.ContentLength = int64(len(body))
			// Signed last, each attempt anew: good once, for this request.
			f.signer.Sign(pr.Out, f.replica.ID(), time.Now(), bodySum)
		},
		Transport:     f.transport,
		FlushInterval: -1, // streams
		ModifyResponse: func(resp *http.Response) error {
			if resp.Header.Get(movedHeader) != "" {
				// The agent moved on while the request was on its way; the
				// owner did not run it: find where it is now.
				resp.Body.Close()
				return errMoved
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			failure = err
		},
	}
	rp.ServeHTTP(w, r)
	if failure == nil {
		return true, nil
	}
	var op *net.OpError
	notRun := errors.Is(failure, errMoved) || (errors.As(failure, &op) && op.Op == "dial")
	return !notRun, failure
}

// movedHeader marks an owner_moved answer, which the forwarding replica
// does not pass on: it follows the agent.
const movedHeader = "Agentmcp-Owner-Moved"

var errMoved = errors.New("the agent moved to another replica")
