package transport

import (
	"fmt"
	"net/http"
	"net/url"
)

// SDKRoundTripper is an [http.RoundTripper] for go-sdk's own
// [mcp.StreamableClientTransport]: it adds to each request what
// [Streamable] adds (custom headers, credentials), and turns the statuses
// a client acts on into an [*HTTPError] (which go-sdk wraps), so that
// errors.Is(err, ErrUnauthorized) and errors.Is(err,
// ErrTransportNotImplemented) hold as with Streamable. A lost session (404
// to a request with a session id) is left to go-sdk, which reports
// mcp.ErrSessionMissing.
//
// Its fields must not be changed once it is in use.
type SDKRoundTripper struct {
	// Next sends the requests. nil means http.DefaultTransport.
	Next http.RoundTripper
	// Endpoint is the server's URL: headers and credentials go to its
	// origin only. nil means every origin.
	Endpoint *url.URL
	// Header holds custom headers for every request. nil means none.
	Header http.Header
	// Authorize, if set, adds credentials to each request.
	Authorize func(*http.Request) error
}

// RoundTrip implements [http.RoundTripper].
func (t *SDKRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if (len(t.Header) > 0 || t.Authorize != nil) && (t.Endpoint == nil || sameOrigin(req.URL, t.Endpoint)) {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		for k, vs := range t.Header {
			req.Header[k] = vs
		}
		if t.Authorize != nil {
			if err := t.Authorize(req); err != nil {
				return nil, err
			}
		}
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		// go-sdk handles the GET stream's statuses (405: no stream) itself.
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		if req.Header.Get(headerSessionID) != "" {
			return resp, nil // a lost session: go-sdk reports mcp.ErrSessionMissing
		}
	default:
		return resp, nil
	}
	herr := newHTTPError(req, resp)
	resp.Body.Close()
	switch {
	case herr.Is(ErrUnauthorized) || herr.Is(ErrTransportNotImplemented):
		return nil, herr
	case herr.JSONRPC != nil:
		return nil, rejected(fmt.Errorf("%w: %w", herr.JSONRPC, herr))
	}
	return nil, rejected(herr)
}
