package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
)

// connFlags are the flags that say how to reach a server, shared by every
// subcommand that connects to one.
type connFlags struct {
	transport    string
	headers      rawHeaders
	protocol     string
	timeout      time.Duration
	allowPrivate bool
}

// defaultTimeout is the one default of --timeout, for every command.
const defaultTimeout = 60 * time.Second

// connFlagsUsage documents connFlags and the server argument, for the usage
// text of the subcommands that use them.
const connFlagsUsage = `Connection flags:
  --transport T    auto (the default for a URL), streamable-http, sse or stdio.
                   auto tries streamable HTTP, then SSE if the endpoint refuses
                   it with an HTTP 4xx other than 401, 403 and 429 (404, 405,
                   400). A command after -- runs over stdio.
  --header 'K: V'  an HTTP header for every request, e.g.
                   --header 'Authorization: Bearer TOKEN'. Repeatable. Header
                   values are never printed, not even in error messages.
                   Headers the transport sets (Accept, Content-Type,
                   Mcp-Session-Id, Mcp-Protocol-Version, ...) are refused.
  --protocol V     pin the MCP protocol version, e.g. 2025-11-25. The default
                   negotiates: 2026-07-28 first, then the older handshake.
  --timeout D      bound the whole command: connecting, listing and calling
                   (default 60s).
  --allow-private  allow private addresses (10/8, 192.168/16, ...), refused by
                   default like every other private, link-local or metadata
                   address. Cloud metadata addresses stay refused.

Flags may also be written with one dash (-header). They may come before or
after URL and the other arguments, but not after --: everything after -- is
the server's command and its arguments.
`

func (f *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.transport, "transport", string(mcpclient.TransportAuto), "")
	fs.Var(&f.headers, "header", "")
	fs.StringVar(&f.protocol, "protocol", "", "")
	fs.DurationVar(&f.timeout, "timeout", defaultTimeout, "")
	fs.BoolVar(&f.allowPrivate, "allow-private", false, "")
}

// rawHeaders collects --header values unparsed; connFlags.server checks
// them. A flag.Value must not reject them itself: the flag package would
// quote the rejected value, which may be a secret, in its error.
type rawHeaders []string

func (h *rawHeaders) String() string     { return "" } // never show values
func (h *rawHeaders) Set(s string) error { *h = append(*h, s); return nil }

// newFlagSet returns a flag set that prints nothing: usage and errors are
// reported by the dispatcher.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses flags anywhere before the first "--" that is not a
// flag's value. It returns the other arguments before it (positional) and
// everything after it (command; hasCommand reports whether there was a
// "--"). It returns flag.ErrHelp for -h and a *usageError for bad flags.
func parseArgs(fs *flag.FlagSet, args []string) (positional, command []string, hasCommand bool, err error) {
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			command, hasCommand = args[i+1:], true
			args = args[:i]
			break
		}
		if takesValue(fs, args[i]) {
			i++ // skip the value, which may itself be "--"
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, false, err
			}
			return nil, nil, false, &usageError{msg: err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, command, hasCommand, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// takesValue reports whether arg is a flag of fs whose value is the next
// argument, as the flag package reads it: -name or --name, not -name=value,
// not a boolean flag.
func takesValue(fs *flag.FlagSet, arg string) bool {
	if len(arg) < 2 || arg[0] != '-' {
		return false
	}
	name := strings.TrimPrefix(arg[1:], "-")
	if name == "" || name[0] == '-' || strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// server builds the server to connect to from the flags and the arguments:
// the first positional argument is the URL unless there is a command
// (after --). It returns the positional arguments it did not use.
func (f *connFlags) server(positional, command []string, hasCommand bool) (*serverSpec, []string, error) {
	if f.timeout <= 0 {
		return nil, nil, usageErrorf("--timeout must be positive")
	}
	transport := mcpclient.TransportType(f.transport)
	switch transport {
	case mcpclient.TransportAuto, mcpclient.TransportStreamableHTTP, mcpclient.TransportSSE, mcpclient.TransportStdio:
	default:
		return nil, nil, usageErrorf("unknown transport %q (want auto, streamable-http, sse or stdio)", f.transport)
	}
	spec := &serverSpec{allowPrivate: f.allowPrivate, options: mcpclient.ServerOptions{
		Client: mcpclient.ClientOptions{ProtocolVersion: f.protocol},
		// One attempt: a command line reports failures rather than
		// retrying in the background.
		Retry: &mcpclient.RetryOptions{MaxAttempts: 1},
	}}

	if hasCommand {
		if len(command) == 0 {
			return nil, nil, usageErrorf("missing command after --")
		}
		if transport != mcpclient.TransportAuto && transport != mcpclient.TransportStdio {
			return nil, nil, usageErrorf("--transport %s needs a URL; a command after -- runs over stdio", transport)
		}
		if len(f.headers) > 0 {
			return nil, nil, usageErrorf("--header applies to HTTP servers only, not to a command")
		}
		spec.options.Name = command[0]
		spec.options.Command = &mcpclient.CommandOptions{Path: command[0], Args: command[1:]}
		spec.options.Transport.Type = mcpclient.TransportStdio
		// The arguments are not shown: they may hold secrets.
		spec.display = fmt.Sprintf("command %q", command[0])
		return spec, positional, nil
	}

	if len(positional) == 0 {
		return nil, nil, usageErrorf("missing server: give a URL, or -- and a command")
	}
	raw := positional[0]
	if transport == mcpclient.TransportStdio {
		return nil, nil, usageErrorf("--transport stdio needs a command after --, not a URL")
	}
	u, err := checkServerURL(raw, &netguard.Policy{AllowPrivate: f.allowPrivate})
	if err != nil {
		return nil, nil, err
	}
	headers, secrets, err := parseHeaders(f.headers)
	if err != nil {
		return nil, nil, err
	}
	spec.options.Name = u.Host
	spec.options.URL = raw
	spec.options.Transport = mcpclient.TransportOptions{Type: transport, Headers: headers}
	spec.display = redactedURL(u)
	spec.authorization = headers.Get("Authorization") != ""
	spec.secrets = append(secrets, urlSecrets(raw, u)...)
	return spec, positional[1:], nil
}

// checkServerURL is parseURL for a URL to connect to. The SSRF guard of
// policy p (nil: the default policy) judges the host first, as netguard
// documents: ftp://10.0.0.1/ is a blocked URL, not a wrong scheme.
func checkServerURL(raw string, p *netguard.Policy) (*url.URL, error) {
	u, err := parseURL(raw)
	if err != nil {
		var blocked *netguard.BlockedError
		if g, gerr := netguard.New(p, nil); gerr == nil && errors.As(g.CheckURL(raw), &blocked) && blocked.Host != "" {
			return nil, blocked
		}
		return nil, err
	}
	return u, nil
}

// parseURL checks the server URL. Errors do not quote it: it may hold
// credentials.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL
		}
		return nil, usageErrorf("invalid server URL: %v%s", err, didYouMean(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return nil, usageErrorf("invalid server URL: no scheme; want http:// or https://%s", didYouMean(raw))
		}
		return nil, usageErrorf("invalid server URL: scheme %q; want http or https%s", u.Scheme, didYouMean(raw))
	}
	if u.Host == "" {
		return nil, usageErrorf("invalid server URL: no host")
	}
	return u, nil
}

// quoteArg quotes a command-line argument for a message; a URL is shown
// without userinfo, query and fragment.
func quoteArg(arg string) string {
	if u, err := url.Parse(arg); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		return fmt.Sprintf("%q", redactedURL(u))
	}
	return fmt.Sprintf("%q", arg)
}

// redactedURL is u without userinfo, query and fragment, for messages.
func redactedURL(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return r.String()
}

// urlSecrets returns the parts of the server URL that messages must not
// show: the whole URL when it has a query or a password (its redacted form
// replaces it), the query, and the password.
func urlSecrets(raw string, u *url.URL) []string {
	var s []string
	if u.RawQuery != "" || u.User != nil || u.Fragment != "" {
		s = append(s, raw)
	}
	if u.RawQuery != "" {
		s = append(s, u.RawQuery)
	}
	if p, ok := u.User.Password(); ok && p != "" {
		s = append(s, p, url.UserPassword(u.User.Username(), p).String())
	}
	return s
}

// reservedHeader reports whether the transports set the header canon
// themselves, so that a --header cannot replace it.
func reservedHeader(canon string) bool {
	switch canon {
	case "Accept", "Connection", "Content-Length", "Content-Type", "Host",
		"Last-Event-Id", "Mcp-Method", "Mcp-Name", "Mcp-Protocol-Version",
		"Mcp-Session-Id", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return strings.HasPrefix(canon, "Mcp-Param-")
}

// parseHeaders parses --header values ("Name: value"). It returns the
// values as secrets, for redaction. Errors name the header, never its value.
func parseHeaders(raw []string) (http.Header, []string, error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	h := http.Header{}
	var secrets []string
	for i, r := range raw {
		name, value, ok := strings.Cut(r, ":")
		if !ok {
			// Do not quote it: it may be a token given without a name.
			return nil, nil, usageErrorf("invalid --header (#%d): want 'Name: value', found no colon", i+1)
		}
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, nil, usageErrorf("invalid --header (#%d): %q is not a valid header name", i+1, name)
		}
		value = strings.Trim(value, " \t") // optional whitespace (RFC 9110)
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil, nil, usageErrorf("invalid --header %q: its value contains a line break or control character", name)
		}
		canon := http.CanonicalHeaderKey(name)
		if reservedHeader(canon) {
			return nil, nil, usageErrorf("invalid --header %q: the transport sets it", name)
		}
		h.Add(canon, value)
		secrets = append(secrets, headerSecrets(value)...)
	}
	return h, secrets, nil
}

// headerSecrets returns what messages must not show of a header value: the
// value, and its words long enough to be a credential on their own (the
// token of "Bearer TOKEN").
func headerSecrets(value string) []string {
	var s []string
	if len(value) >= minSecretValue {
		s = append(s, value)
	}
	for w := range strings.FieldsSeq(value) {
		if len(w) >= minSecretWord && w != value {
			s = append(s, w)
		}
	}
	return s
}

// Redaction thresholds. A shorter header value ("1", "on") is not worth
// garbling every message that happens to contain it (127.0.0.1); words
// shorter than minSecretWord ("Bearer", "Basic") are common words.
const (
	minSecretValue = 4
	minSecretWord  = 8
)
