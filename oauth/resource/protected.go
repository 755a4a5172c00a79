package resource

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// WellKnown is the RFC 9728 well-known prefix: a resource's protected
// resource metadata is served at it followed by the resource's path.
const WellKnown = "/.well-known/oauth-protected-resource"

// ErrHostNotServed is the error of a request whose Host is not the
// Server's own (ServerOptions.HostServed) when the resource's URL would
// come from it: a Host header is the client's to write, and taking it
// would let the client choose the audience its token is checked against.
var ErrHostNotServed = errors.New("resource: host not served")

// ServerOptions configures a Server. Options.Issuer is required; the zero
// value of every other field gives the default it documents.
type ServerOptions struct {
	// Options configures the Verifier of the tokens; its Scopes are also
	// advertised, in the metadata and the challenge.
	Options

	// Audience is the audience (aud) a token must carry. Empty means the
	// URL of the resource the request is for: at PublicURL when there is
	// one; else at the request's Host only when HostServed accepts it, with
	// the port of the listener the request came in on (ErrHostNotServed
	// otherwise).
	Audience string

	// PublicURL is the origin the resources are reached at
	// ("https://mcp.example.com"). Empty means the request's.
	PublicURL string

	// HostServed reports whether a host name (no port) names this server.
	// Nil means none: without PublicURL or Audience, every request is
	// then ErrHostNotServed.
	HostServed func(host string) bool
}

// Server is the protected resource's side of RFC 9728 for the resources of
// one HTTP server, each at its path: the URL of the resource a request is
// for, its metadata, the challenge of a 401, and the token's check (a
// Verifier, for that resource as the audience).
//
// A Server is safe for concurrent use.
type Server struct {
	opts      ServerOptions
	verifier  *Verifier
	publicURL string
}

// NewServer returns a Server of opts. It does no I/O.
func NewServer(opts *ServerOptions) *Server {
	s := &Server{opts: *opts, publicURL: strings.TrimSuffix(opts.PublicURL, "/")}
	s.opts.Scopes = slices.Clone(opts.Scopes)
	s.verifier = New(&s.opts.Options)
	return s
}

// Resource returns the URL of the resource r is for (its origin and its
// path as routed), and the URL of its metadata (the well-known prefix
// inserted before the path, RFC 9728 §3.1); r may be a request for either.
// Without a PublicURL the origin is r's, and the error is
// ErrHostNotServed when it is not this server's, unless there is an
// Audience (the URL then names the resource only).
func (s *Server) Resource(r *http.Request) (resource, metadata string, err error) {
	origin := s.publicURL
	if origin == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
		if s.opts.Audience == "" && !s.ownOrigin(r, scheme) {
			return "", "", ErrHostNotServed
		}
	}
	p := strings.TrimPrefix(r.URL.EscapedPath(), WellKnown)
	return origin + p, origin + WellKnown + p, nil
}

// ownOrigin reports whether r's Host names this server: a host it serves
// (HostServed) and the port of the listener r came in on (the scheme's
// default when the Host has none).
func (s *Server) ownOrigin(r *http.Request, scheme string) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil || s.opts.HostServed == nil {
		return false
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
		if scheme == "https" {
			port = "443"
		}
	}
	_, localPort, err := net.SplitHostPort(local.String())
	return err == nil && port == localPort && s.opts.HostServed(host)
}

// Challenge returns the WWW-Authenticate value of a 401 for r: Bearer,
// the metadata's URL, the scopes, and error="invalid_token" when invalid
// (a token was sent and refused). Its error is Resource's.
func (s *Server) Challenge(r *http.Request, invalid bool) (string, error) {
	_, metadata, err := s.Resource(r)
	if err != nil {
		return "", err
	}
	params := fmt.Sprintf("resource_metadata=%q", metadata)
	if len(s.opts.Scopes) > 0 {
		params += fmt.Sprintf(", scope=%q", strings.Join(s.opts.Scopes, " "))
	}
	if invalid {
		params += `, error="invalid_token"`
	}
	return "Bearer " + params, nil
}

// Metadata returns the protected resource metadata of the resource r is
// for, named name: the issuer as its authorization server, the scopes, and
// bearer tokens in the header only. Its error is Resource's.
func (s *Server) Metadata(r *http.Request, name string) (*oauthex.ProtectedResourceMetadata, error) {
	resource, _, err := s.Resource(r)
	if err != nil {
		return nil, err
	}
	return &oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{s.opts.Issuer},
		ScopesSupported:        s.opts.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           name,
	}, nil
}

// Verify checks tok (Verifier.Verify) for the resource r is for: its
// audience is Audience, else the resource's URL (ErrHostNotServed when
// r's Host is not this server's).
func (s *Server) Verify(r *http.Request, tok string) error {
	return s.verifier.Verify(r.Context(), tok, func() (string, error) {
		if s.opts.Audience != "" {
			return s.opts.Audience, nil
		}
		resource, _, err := s.Resource(r)
		return resource, err
	})
}
