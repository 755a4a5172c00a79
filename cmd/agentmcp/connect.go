package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/netguard"
)

// serverSpec is the server a command line names, ready for
// mcpclient.Manager.RegisterServer.
type serverSpec struct {
	options mcpclient.ServerOptions
	// display names the server in messages: its URL without userinfo,
	// query or fragment, or `command "PROGRAM"` (arguments may hold
	// secrets).
	display string
	// authorization reports whether an Authorization header was given.
	authorization bool
	// allowPrivate opens private addresses (--allow-private).
	allowPrivate bool
	// secrets must never be printed: header values, the URL's query and
	// password, and the URL itself when it has any of those.
	secrets []string
}

// id is the server's id in the Manager; mcpclient's messages quote it.
func (s *serverSpec) id() string {
	if s.options.Command != nil {
		return filepath.Base(s.options.Command.Path)
	}
	return s.display
}

// redact returns err with the secrets of s cut out of its message.
// errors.Is and errors.As still see err.
func (s *serverSpec) redact(err error) error {
	if err == nil || len(s.secrets) == 0 {
		return err
	}
	// The URL first, replaced by its redacted form; then longer secrets
	// before the shorter ones they may contain.
	secrets := slices.Clone(s.secrets)
	slices.SortStableFunc(secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	msg := err.Error()
	redacted := msg
	for _, sec := range secrets {
		repl := "[redacted]"
		if sec == s.options.URL {
			repl = s.display
		}
		redacted = strings.ReplaceAll(redacted, sec, repl)
	}
	if redacted == msg {
		return err
	}
	return &redactedError{msg: redacted, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// session is one server connected through a Manager, for the life of one
// command.
type session struct {
	m       *mcpclient.Manager
	hc      *http.Client
	spec    *serverSpec
	id      string
	timeout time.Duration
}

// closeTimeout bounds closing the session: a stdio server gets 2 s to exit
// after its stdin closes before it is terminated.
const closeTimeout = 5 * time.Second

// connectWith registers the server, connects to it and lists its catalog.
// ctx bounds it all; timeout is the --timeout it came from, for messages.
// elicit are the elicitation handlers (nil for none), which must be in
// place before the session starts for it to advertise them, and tp the
// TracerProvider of --trace (nil for the global one). The caller must
// close the session.
func connectWith(ctx context.Context, spec *serverSpec, timeout time.Duration, elicit *input.ElicitationHandlers, tp trace.TracerProvider) (*session, error) {
	hc := newHTTPClient(timeout)
	opts := &mcpclient.Options{
		TracerProvider:  tp,
		HTTPClient:      hc,
		ConnectTimeout:  timeout,
		DiscoverTimeout: timeout,
		// A command runs once: nothing will resume its session.
		EndSessionsOnClose: true,
	}
	if spec.allowPrivate {
		g, err := netguard.New(&netguard.Policy{AllowPrivate: true}, nil)
		if err != nil {
			return nil, err
		}
		opts.Guard = g
	}
	m := mcpclient.New(opts)
	if elicit != nil {
		m.ConfigureElicitationHandlers(elicit)
	}
	s := &session{
		m:       m,
		hc:      hc,
		spec:    spec,
		id:      spec.id(),
		timeout: timeout,
	}
	err := s.open(ctx)
	if err != nil {
		s.close()
		return nil, spec.redact(err)
	}
	return s, nil
}

func (s *session) open(ctx context.Context) error {
	if _, err := s.m.RegisterServer(ctx, s.id, s.spec.options); err != nil {
		var blocked *netguard.BlockedError
		if errors.As(err, &blocked) {
			// Not a mistake in the command: the destination is refused.
			return blockedError(blocked, s.spec.options.URL, s.spec.allowPrivate)
		}
		// The options came from the command line (an unsupported
		// --protocol, say).
		return &usageError{msg: err.Error()}
	}
	res, err := s.m.ConnectToServer(ctx, s.id)
	if err != nil {
		return err
	}
	if res.State != mcpclient.StateConnected {
		return s.failure(ctx, "connecting to "+s.spec.display, res.State, res.Err)
	}
	d, err := s.m.DiscoverIfConnected(ctx, s.id, &mcpclient.DiscoverOptions{Timeout: s.timeout})
	if err != nil {
		return err
	}
	if !d.Success {
		return s.failure(ctx, "listing what "+s.spec.display+" offers", d.State, d.Err)
	}
	return nil
}

// failure describes a failed step, with the server's state and error.
func (s *session) failure(ctx context.Context, step string, state mcpclient.State, err error) error {
	if cerr := interrupted(ctx); cerr != nil {
		return cerr
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s timed out after %v (state %s)", step, s.timeout, state)
	}
	if mcpclient.IsUnauthorized(err) {
		status := http.StatusUnauthorized
		var herr *mcpclient.HTTPError
		if errors.As(err, &herr) {
			status = herr.StatusCode
		}
		if s.spec.authorization {
			return fmt.Errorf("%s rejected the credentials in --header Authorization (HTTP %d, state %s): %w",
				s.spec.display, status, state, err)
		}
		return fmt.Errorf("%s requires authorization (HTTP %d, state %s); give a token with --header 'Authorization: Bearer TOKEN': %w",
			s.spec.display, status, state, err)
	}
	if err == nil {
		return fmt.Errorf("%s failed (state %s)", step, state)
	}
	return fmt.Errorf("%s failed (state %s): %w", step, state, err)
}

// interrupted returns the error to report when ctx was cancelled (Ctrl-C),
// or nil.
func interrupted(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return errInterrupted{}
	}
	return nil
}

// errInterrupted reports a command cancelled by a signal. It is
// context.Canceled, for exitCode.
type errInterrupted struct{}

func (errInterrupted) Error() string { return "interrupted" }
func (errInterrupted) Unwrap() error { return context.Canceled }

// info returns the server's snapshot.
func (s *session) info() mcpclient.ServerInfo {
	info, _ := s.m.Server(s.id)
	return info
}

// close closes the Manager, which ends the session (a DELETE on a stateful
// streamable HTTP server, and stops a stdio server). Its error is not reported: the command's outcome is decided by
// then, and how a server goes away is not the user's failure.
func (s *session) close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = s.m.Close(ctx)
	// The Manager does not close the idle connections of the HTTP client
	// it is given.
	s.hc.CloseIdleConnections()
}

// newHTTPClient returns what mcpclient uses by default (no overall
// timeout, as streams are long-lived; the dial bounded by connectTimeout),
// as a client of its own so that close can drop its idle connections.
func newHTTPClient(connectTimeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: t}
}

// blockedError is the error of a URL the SSRF guard refuses, naming
// --allow-private when that would allow it.
func blockedError(blocked *netguard.BlockedError, raw string, allowPrivate bool) error {
	if g, err := netguard.New(&netguard.Policy{AllowPrivate: true}, nil); !allowPrivate && err == nil && g.CheckURL(raw) == nil {
		return fmt.Errorf("%w; --allow-private allows private addresses", blocked)
	}
	return blocked
}
