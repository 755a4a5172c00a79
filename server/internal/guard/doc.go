// Package guard is the security layer of the HTTP server: the checks
// every request passes before its handler runs, as one middleware
// (Guard.Wrap).
//
// In order: security headers on every response (a strict
// Content-Security-Policy, nosniff, no referrer, no framing); without a
// token, the Host check (loopback names and Options.AllowedHosts only, so
// that a web page cannot reach the server through DNS rebinding); CORS
// for Options.TrustedOrigins; and on the routes that are not public, the
// cross-site checks (Fetch Metadata, then Origin for state-changing
// methods through http.CrossOriginProtection) and the token (a bearer
// token, or the cookie the dashboard's /?token= link sets; with
// Options.Resource, an MCP endpoint also takes the authorization server's
// access tokens, and answers the RFC 9728 challenge). Then the body is
// read whole, at most the route's limit and within Options.BodyTimeout,
// before the handler runs; a request refused before that is answered at
// once and its connection closed, without reading the rest of its body.
// A response that is not a stream must be written within
// Options.WriteTimeout once it starts.
//
// The guard does not know the routes: the server says, for the route the
// mux will run (the pattern it matched, so that the check and the routing
// cannot read a path two ways), whether it is public, how large a body it
// takes, whether it is a stream, and whether it is an MCP endpoint
// (Route).
//
// # Concurrency
//
// A Guard is safe for concurrent use; it is not changed after New.
//
// # Errors
//
// A refused request gets the API's JSON error (package reply) with
// host_not_allowed, cross_origin, unauthorized, body_too_large,
// request_timeout or invalid_request; none carries the token, a header
// value or a URL query.
package guard
