// Package explain says in a few words what an error of mcpclient's means,
// for a person who must act on it: "cannot connect: connection refused",
// "the server asks for sign-in", "not an MCP endpoint (HTTP 405)". The
// agent's server state (error_summary) and the agentmcp program show it
// next to the full error.
package explain

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/stdio"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Summary says in a few words what failed, for a person who must act on
// it: "cannot connect: connection refused", "the server asks for sign-in",
// "not an MCP endpoint (HTTP 405)". The full chain (err.Error()) remains
// the detail for those who want it.
//
// The summary is chosen from the typed errors in err's chain (the
// sentinels and types of mcpclient and of its packages transport, input
// and stdio, netguard's, net, TLS and x509 errors, os/exec's, context
// deadlines), never
// from the text of messages. It carries no
// secret and no response body; where nothing in the chain is recognised,
// it is the innermost error's message, shortened. It is "" for a nil err.
func Summary(err error) string {
	if err == nil {
		return ""
	}
	var (
		blocked   *netguard.BlockedError
		authReq   *mcpclient.AuthRequiredError
		urlElic   *input.URLElicitationRequiredError
		interr    *mcpclient.InterruptedCallError
		herr      *mcpclient.HTTPError
		dnsErr    *net.DNSError
		unknown   x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		record    tls.RecordHeaderError
		alert     tls.AlertError
		exitErr   *exec.ExitError
		execErr   *exec.Error
		pathErr   *fs.PathError
		stdioExit *stdio.ExitError
		opErr     *net.OpError
		rpcErr    *jsonrpc.Error
		netErr    net.Error
		hostname  string
	)
	switch {
	case errors.As(err, &blocked):
		reason := blocked.Reason
		if reason == "" {
			reason = blocked.URL
		}
		return "blocked URL: " + reason
	case errors.Is(err, netguard.ErrBlockedURL):
		return "blocked URL"
	case errors.Is(err, netguard.ErrUnsupportedScheme):
		return "unsupported URL scheme (use http or https)"
	case errors.As(err, &authReq), errors.Is(err, mcpclient.ErrUnauthorized):
		return "the server asks for sign-in"
	case errors.As(err, &urlElic):
		if urlElic.Action != "" {
			return "the server needs a step in the browser, which was " + actionPast(urlElic.Action)
		}
		return "the server needs a step in the browser"
	case errors.As(err, &interr):
		return "the call was interrupted; it may or may not have run"
	case errors.Is(err, mcpclient.ErrSessionExpired):
		return "session expired"
	case errors.Is(err, mcpclient.ErrClosed):
		return "the client is closed"
	case errors.Is(err, mcpclient.ErrNotRegistered):
		return "unknown server"
	case errors.Is(err, input.ErrNoHandler):
		return "the server asked for something this client cannot answer"
	case errors.As(err, &herr):
		return httpSummary(herr)
	case errors.Is(err, mcpclient.ErrProtocol):
		return "protocol error: the server sent something that is not valid MCP"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "server timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &dnsErr):
		hostname = dnsErr.Name
		if dnsErr.IsNotFound {
			return "DNS lookup failed: no such host " + hostname
		}
		if dnsErr.IsTimeout {
			return "DNS lookup timed out for " + hostname
		}
		return "DNS lookup failed for " + hostname
	case errors.As(err, &unknown):
		return "TLS failure: certificate signed by an unknown authority"
	case errors.As(err, &hostErr):
		return "TLS failure: the certificate is not valid for this host"
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return "TLS failure: the certificate has expired or is not yet valid"
		}
		return "TLS failure: invalid certificate"
	case errors.As(err, &verify):
		return "TLS failure: the certificate could not be verified"
	case errors.As(err, &record):
		return "TLS failure: the server does not speak TLS on this port"
	case errors.As(err, &alert):
		return "TLS failure: the server refused the handshake"
	case errors.As(err, &execErr) && (errors.Is(execErr.Err, exec.ErrNotFound) || errors.Is(execErr.Err, fs.ErrNotExist)):
		return "command not found: " + safetext.Sanitize(execErr.Name, 80)
	case errors.As(err, &execErr) && errors.Is(execErr.Err, fs.ErrPermission):
		return "command not executable: " + safetext.Sanitize(execErr.Name, 80)
	case errors.Is(err, exec.ErrNotFound):
		return "command not found"
	case errors.As(err, &pathErr) && pathErr.Op == "chdir":
		return "working directory not usable: " + safetext.Sanitize(pathErr.Path, 80) + ": " + pathErr.Err.Error()
	case errors.As(err, &stdioExit):
		s := "the server exited with status " + strconv.Itoa(stdioExit.Code)
		if stdioExit.Signal != "" {
			s = "the server was killed (signal: " + stdioExit.Signal + ")"
		}
		if stdioExit.Stderr != "" {
			s += ": " + safetext.Sanitize(stdioExit.Stderr, 120)
		}
		return s
	case errors.As(err, &exitErr):
		return fmt.Sprintf("the server process exited (status %d)", exitErr.ExitCode())
	case errors.Is(err, syscall.ECONNREFUSED):
		return "cannot connect: connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "cannot connect: host unreachable"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "server timed out"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "cannot connect: " + innermost(opErr)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the server closed the connection"
	case errors.Is(err, mcp.ErrConnectionClosed):
		return "connection closed"
	case errors.Is(err, mcpclient.ErrNotConnected):
		return "not connected"
	case errors.As(err, &rpcErr):
		return "the server answered with an error: " + safetext.Sanitize(rpcErr.Message, 80)
	}
	return innermost(err)
}

// httpSummary describes an HTTP status the client could not use, without
// the body.
func httpSummary(e *mcpclient.HTTPError) string {
	code := e.StatusCode
	switch {
	case e.JSONRPC == nil && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed):
		return fmt.Sprintf("not an MCP endpoint (HTTP %d)", code)
	case code == http.StatusNotAcceptable || code == http.StatusUnsupportedMediaType:
		return fmt.Sprintf("the server does not accept MCP messages (HTTP %d)", code)
	case code == http.StatusForbidden:
		return "access denied (HTTP 403)"
	case code == http.StatusTooManyRequests:
		return "rate limited by the server (HTTP 429)"
	case code >= 500:
		return fmt.Sprintf("server error (HTTP %d %s)", code, http.StatusText(code))
	case e.JSONRPC != nil:
		return fmt.Sprintf("the server refused the request (HTTP %d): %s", code, safetext.Sanitize(e.JSONRPC.Message, 80))
	}
	return fmt.Sprintf("the server refused the request (HTTP %d %s)", code, http.StatusText(code))
}

func actionPast(action string) string {
	switch action {
	case "decline":
		return "declined"
	case "cancel":
		return "cancelled"
	}
	return action
}

// innermost returns the message of the deepest error in err's chain
// (following the first branch of a joined error), shortened.
func innermost(err error) string {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			return safetext.Sanitize(err.Error(), 120)
		}
		err = next
	}
}
