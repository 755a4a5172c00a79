package oauthtest

import (
	"fmt"
	"net/http"
)

// Fault is a failure injected into the token or registration endpoint.
type Fault int

const (
	// FaultNone is no fault.
	FaultNone Fault = iota
	// FaultUnavailable answers 503 with error temporarily_unavailable and
	// a Retry-After header, without processing the request: the code or
	// refresh token presented stays valid.
	FaultUnavailable
	// FaultServerError answers 500 with error server_error, without
	// processing the request.
	FaultServerError
	// FaultDropConnection closes the connection without an answer,
	// without processing the request.
	FaultDropConnection
	// FaultInvalidGrant answers 400 invalid_grant without processing the
	// request: the grant presented stays valid. (A real invalid_grant
	// comes from presenting a bad grant, or from Revoke.) Token endpoint
	// only.
	FaultInvalidGrant
	// FaultLoseResponse processes the request (the code is redeemed, the
	// refresh token rotated, the client registered) and then closes the
	// connection without an answer, as a response lost on its way back.
	FaultLoseResponse
)

func (f Fault) String() string {
	switch f {
	case FaultNone:
		return "none"
	case FaultUnavailable:
		return "unavailable"
	case FaultServerError:
		return "server error"
	case FaultDropConnection:
		return "drop connection"
	case FaultInvalidGrant:
		return "invalid_grant"
	case FaultLoseResponse:
		return "lose response"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// code is the OAuth error code the fault answers with, if any.
func (f Fault) code() string {
	switch f {
	case FaultUnavailable:
		return "temporarily_unavailable"
	case FaultServerError:
		return "server_error"
	case FaultInvalidGrant:
		return "invalid_grant"
	}
	return ""
}

// write answers a request with a fault that does not process it, and
// returns the status sent (0 for none).
func (f Fault) write(w http.ResponseWriter) int {
	switch f {
	case FaultUnavailable:
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": f.code(), "error_description": "injected fault"})
		return http.StatusServiceUnavailable
	case FaultServerError:
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": f.code(), "error_description": "injected fault"})
		return http.StatusInternalServerError
	case FaultInvalidGrant:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": f.code(), "error_description": "injected fault"})
		return http.StatusBadRequest
	default: // FaultDropConnection
		dropConnection(w)
		return 0
	}
}

// FailTokenRequests makes the next n token requests, of any grant type,
// fail with f. Calls queue up: FailTokenRequests(1, FaultUnavailable)
// then FailTokenRequests(1, FaultDropConnection) fails the next request
// with 503 and the one after by dropping it.
func (s *AuthServer) FailTokenRequests(n int, f Fault) {
	s.t.Helper()
	if f <= FaultNone || f > FaultLoseResponse {
		s.t.Fatalf("oauthtest: FailTokenRequests: bad fault %v", f)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.tokenFaults = append(s.tokenFaults, f)
	}
}

// FailRegistrations makes the next n registration requests fail with f,
// which may be anything but FaultInvalidGrant.
func (s *AuthServer) FailRegistrations(n int, f Fault) {
	s.t.Helper()
	if f <= FaultNone || f > FaultLoseResponse || f == FaultInvalidGrant {
		s.t.Fatalf("oauthtest: FailRegistrations: bad fault %v", f)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.regFaults = append(s.regFaults, f)
	}
}
