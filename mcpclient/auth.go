package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// AuthProvider authorises the requests to one server: OAuth (package
// oauth), or any other scheme. Set it on ServerOptions.Auth.
//
// Implementations must be safe for concurrent use: Token is called for
// every HTTP request.
type AuthProvider interface {
	// Token returns the access token to send as a Bearer token, or "" to
	// send none. It refreshes an expiring token when it can. An error fails
	// the request.
	Token(ctx context.Context) (string, error)

	// Authorize is called when the server refused a request for lack of
	// (sufficient) authorisation: HTTP 401, or 403 with a Bearer error such
	// as insufficient_scope. It returns the URL the user must visit to
	// authorise, or "" when it obtained new credentials by itself (the
	// request is then retried once).
	Authorize(ctx context.Context, c *AuthChallenge) (authURL string, err error)
}

// AuthChallenge is a server's refusal, as an AuthProvider needs it.
type AuthChallenge struct {
	// ServerURL is the MCP endpoint that refused (the resource).
	ServerURL string
	// StatusCode is 401 or 403.
	StatusCode int
	// WWWAuthenticate holds the response's WWW-Authenticate values.
	WWWAuthenticate []string
}

// AuthRequiredError is returned by a call when the server wants the user
// to authorise (again): the server is then authenticating, and the user
// must visit AuthURL.
type AuthRequiredError struct {
	ServerID string
	AuthURL  string
	Err      error // the server's refusal
}

func (e *AuthRequiredError) Error() string {
	return fmt.Sprintf("mcp server %q requires authorization: %v", e.ServerID, e.Err)
}

func (e *AuthRequiredError) Unwrap() []error { return []error{ErrUnauthorized, e.Err} }

// challenge extracts the AuthChallenge from an error that IsUnauthorized.
func (c *server) challenge(err error) *AuthChallenge {
	ch := &AuthChallenge{ServerURL: c.opts.URL, StatusCode: http.StatusUnauthorized}
	var herr *HTTPError
	if errors.As(err, &herr) {
		ch.StatusCode = herr.StatusCode
		ch.WWWAuthenticate = herr.WWWAuthenticate
	}
	return ch
}

// authorize asks the server's AuthProvider what to do about a refusal. It
// returns the URL the user must visit, or "" when new credentials are in
// place and the request may be retried. Without a provider the URL is ""
// and err is the refusal itself.
func (c *server) authorize(ctx context.Context, refusal error) (authURL string, err error) {
	if c.opts.Auth == nil {
		return "", refusal
	}
	authURL, err = c.opts.Auth.Authorize(ctx, c.challenge(refusal))
	if err != nil {
		return "", fmt.Errorf("starting authorization: %w", err)
	}
	return authURL, nil
}

// authorizeRequest returns the hook that adds the provider's token to each
// request, or nil without a provider.
func (c *server) authorizeRequest() func(*http.Request) error {
	p := c.opts.Auth
	if p == nil {
		return nil
	}
	return func(req *http.Request) error {
		token, err := p.Token(req.Context())
		if err != nil {
			return fmt.Errorf("getting an access token: %w", err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return nil
	}
}

// setAuthURL records a pending authorisation and moves to authenticating.
func (c *server) setAuthenticating(authURL string, err error) {
	c.mu.Lock()
	c.authURL = authURL
	c.mu.Unlock()
	c.setState(StateAuthenticating, err)
}
