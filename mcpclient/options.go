package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/internal/benchopt"
	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/agentmcp/agentmcp/mcpclient/internal/backoff"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Options configures a Manager. The zero value, or nil, gives the defaults
// each field documents.
type Options struct {
	// ClientInfo identifies this client to servers.
	// Zero value: {Name: "agentmcp", Version: Version}.
	ClientInfo *mcp.Implementation

	// HTTPClient carries every HTTP request of the streamable HTTP and SSE
	// transports. Nil means a client with no overall timeout (streams are
	// long-lived). Whatever it is, the Manager sends its requests through
	// Guard.
	HTTPClient *http.Client

	// Gate, if set, is asked before every HTTP request the Manager sends
	// (MCP messages, OAuth requests through HTTPClient): a non-nil error
	// stops the request unsent, and the call fails with an error wrapping
	// ErrGateClosed and the gate's. With an *http.Transport (the default),
	// it is asked again before each write on a connection, so that a
	// request that passed the first check just before the process was
	// stopped is not written when it runs again. A replica that may no
	// longer trust its ownership of an agent closes the gate, so that it
	// sends nothing on the agent's behalf. It must be fast (an atomic load)
	// and safe for concurrent use.
	Gate func() error

	// Guard is the SSRF policy applied to server URLs when they are
	// registered, to every redirect hop, and to the resolved address of
	// every connection. Nil means netguard's defaults: private, link-local
	// and metadata addresses are refused; loopback is allowed.
	Guard *netguard.Guard

	// Logger receives the Manager's logs. Nil discards them. Header values,
	// tokens and URL queries are never logged.
	Logger *slog.Logger

	// OutputValidation says what CallTool does with a result whose
	// structuredContent is missing or breaks the tool's outputSchema (as
	// the server listed it; results of tools not in a live catalog are not
	// checked), and StartTask and WaitTask with a task's result, as well. Zero, OutputValidationError, fails the call with an
	// *OutputSchemaError; OutputValidationWarn logs and returns the
	// result; OutputValidationOff checks nothing.
	OutputValidation OutputValidation

	// ConnectTimeout bounds one handshake (transport connection, protocol
	// negotiation, initialisation). Zero means 30 seconds.
	ConnectTimeout time.Duration

	// DiscoverTimeout bounds one discovery when DiscoverOptions gives none.
	// Zero means 15 seconds.
	DiscoverTimeout time.Duration

	// MaxPages caps the pages followed when listing one catalog. Zero means
	// 100.
	MaxPages int

	// MaxMessageSize caps one JSON-RPC message or server-sent event, in
	// bytes. Zero means 16 MiB; negative means no cap.
	MaxMessageSize int

	// StreamIdleTimeout is how long the legacy standalone event stream may
	// stay silent (not even a keep-alive comment) before it is reopened.
	// Zero means 5 minutes; negative means never.
	StreamIdleTimeout time.Duration

	// Clock is used for retry backoff. Nil means real time. Tests inject a
	// fake one.
	Clock Clock

	// MaxConcurrentConnects bounds the background connections (restores,
	// reconnections) made at once. Zero means 16.
	MaxConcurrentConnects int

	// EndSessionsOnClose makes Close end the servers' sessions, as
	// CloseAllConnections does (on streamable HTTP, a DELETE with the
	// session id), for a process that will not resume them: a one-shot
	// command, or one that keeps no record of its sessions (ServerInfo.Resume)
	// across restarts. False (the default) leaves them alive on the servers,
	// so that a process that restarts can resume them; servers expire the
	// ones never resumed.
	EndSessionsOnClose bool

	// ServerRequests bounds what servers can make the Manager hold by
	// asking it for something (elicitation, sampling, roots, ping): 4
	// requests per server, 16 requests for input across servers, 64 KiB
	// per elicitation and 1 MiB per sampling request by default. See
	// ServerRequestLimits.
	ServerRequests ServerRequestLimits

	// TracerProvider receives the Manager's spans: one CLIENT span per
	// request and notification sent to a server, following the
	// OpenTelemetry semantic conventions for MCP, and spans for
	// connections, discoveries, session renewals and elicitation waits
	// (docs/OBSERVABILITY.md). Nil means the global provider
	// (otel.GetTracerProvider), so that a program that sets up
	// OpenTelemetry gets them with no code.
	TracerProvider trace.TracerProvider

	// MeterProvider receives the Manager's metrics:
	// mcp.client.operation.duration, mcp.client.session.duration and
	// agentmcp's own (docs/OBSERVABILITY.md). Nil means the global
	// provider (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider

	// Propagator writes the trace context of every request into its
	// params._meta, and reads the context of the requests servers send.
	// Nil means W3C Trace Context and Baggage ("traceparent",
	// "tracestate", "baggage"), the keys the MCP conventions name.
	Propagator propagation.TextMapPropagator

	// RecordContent opts in to content in telemetry: tool arguments and
	// results (gen_ai.tool.call.arguments, gen_ai.tool.call.result),
	// resource URIs with their query, and servers' error messages as span
	// status descriptions. False (the default) records none of them; header
	// values, tokens and URL userinfo are never recorded.
	RecordContent bool

	// Tasks configures tool calls that run as tasks (tasks.go). The zero
	// value calls as tasks only the tools that require it, and those the
	// caller asks for (CallOptions.Task).
	Tasks TaskOptions

	// Apps says that this host renders the views of MCP Apps (apps.go:
	// ToolView, for a host that shows them in a sandboxed frame): every
	// server's client then advertises the extension (AppsExtension, with
	// AppMIMEType) in its capabilities' extensions, in a 2025-11-25
	// initialize as with every 2026-07-28 request. False (the default)
	// advertises nothing of it; ToolView works either way.
	Apps bool

	// Bench is for agentmcp's benchmark (cmd/agentmcp-bench) alone: it
	// turns parts of the Manager off, so that the benchmark can measure
	// what they cost. Its type is internal to this module, so no other
	// program can set it. Nil turns nothing off.
	Bench *benchopt.Options
}

// Version is the version of agentmcp, reported in ClientInfo by default.
const Version = "0.1.0"

// TransportType selects how the Manager reaches a server.
type TransportType string

const (
	// TransportAuto tries streamable HTTP first and falls back to SSE only
	// when the endpoint refuses the handshake with an HTTP 4xx that carries
	// no JSON-RPC error (404 and 405 from servers without streamable HTTP,
	// 400 from go-sdk's SSE server), never on 401, 403, 429 or 5xx. Once a
	// server spoke SSE, it tries SSE first. When both fail, the error says
	// how each did. It is the default for URLs.
	TransportAuto TransportType = "auto"
	// TransportStreamableHTTP is the streamable HTTP transport, in both
	// protocol eras. It never falls back.
	TransportStreamableHTTP TransportType = "streamable-http"
	// TransportSSE is the deprecated HTTP+SSE transport of 2024-11-05. It
	// never falls back.
	TransportSSE TransportType = "sse"
	// TransportStdio runs a command and speaks newline-delimited JSON-RPC on
	// its stdin and stdout. A line on stdout that is not a JSON-RPC message
	// (a banner, a log line) is skipped; the first 10 of a session are
	// logged, and a failed start quotes the last one. Its stderr is logged
	// line by line. It is the default when ServerOptions.Command is set.
	TransportStdio TransportType = "stdio"
	// TransportInProcess connects to an MCP server in the same process, with
	// no HTTP (the counterpart of the seed's RPC transport). It is the
	// default when ServerOptions.InProcess is set.
	TransportInProcess TransportType = "in-process"
)

// ServerOptions describes one server. Exactly one of URL, Command and
// InProcess must be set.
type ServerOptions struct {
	// Name is the display name. It need not be unique.
	Name string

	// URL is the MCP endpoint of an HTTP server.
	URL string

	// Command runs a server over stdio.
	Command *CommandOptions

	// InProcess builds the in-process server for each new connection. It
	// is given Props, the seed's initialisation data.
	InProcess InProcessFactory
	// Props is passed to InProcess.
	Props map[string]any

	// CallbackURL is the OAuth redirect URI for this server, if it may need
	// OAuth.
	CallbackURL string

	// Auth authorises requests to an HTTP server: it supplies tokens, and
	// starts an authorisation when the server refuses. Nil sends no
	// credentials beyond Transport.Headers; a 401 then leaves the server
	// authenticating without an AuthURL.
	Auth AuthProvider

	// Client configures the MCP client side of the connection.
	Client ClientOptions

	// Transport selects and configures the transport.
	Transport TransportOptions

	// Retry configures reconnection. Nil means 3 attempts, 500 ms base
	// delay, 5 s maximum delay, full jitter, then background attempts at
	// most 3 minutes apart.
	Retry *RetryOptions

	// PendingAuthURL, if set, registers the server in state authenticating,
	// waiting for the user to finish an authorisation started earlier (at
	// that URL), without any I/O.
	PendingAuthURL string

	// Resume, if set, resumes a streamable HTTP session saved earlier (see
	// ServerInfo.Resume) instead of starting one: the first connection skips
	// the handshake. If the server no longer knows the session, the Manager
	// starts a fresh one. It is used once. A stdio server's (a legacy
	// version, no session) makes its process start with the legacy
	// handshake, not the 2026-07-28 probe (which some servers exit on).
	Resume *Resume

	// Catalog, if set, holds the server's lists as stored before a
	// restart (an agent keeps them with the server): the Manager offers
	// them (ListTools, AITools, ...) until the server's first discovery
	// replaces them, marked stale (ServerInfo.CatalogStale, Tool.Stale,
	// aitools.Tool.Stale). A call to a stale entry goes to the server as
	// any call does, connecting first; the server is the judge of what it
	// has. Its lists must not be modified afterwards.
	Catalog *Catalog
}

// Resume is what it takes to resume a streamable HTTP session without a
// handshake (see transport.Resume).
type Resume = transport.Resume

// CommandOptions describes a server run as a child process over stdio
// (on Linux under a supervisor that kills all it started when it ends or
// the program dies: see stdio.SupervisorEnv).
type CommandOptions struct {
	// Path is the program to run, looked up in PATH when it has no slash.
	Path string
	// Args are its arguments, without the program name.
	Args []string
	// Env is the server's environment (KEY=VALUE entries), besides the
	// few variables of this process's that every server gets (PATH, HOME,
	// the locale, npm's and uv's settings: see stdio.Environ). The rest of
	// this process's environment is not passed on.
	Env []string
	// Dir is its working directory. Empty means the current directory.
	Dir string
}

// InProcessFactory returns the server for one in-process connection.
type InProcessFactory func(ctx context.Context, props map[string]any) (*mcp.Server, error)

// ClientOptions configures the MCP client of one server.
type ClientOptions struct {
	// ProtocolVersion pins the protocol version offered. Empty means
	// negotiate: 2026-07-28 first, then the legacy handshake. Pinning
	// "2026-07-28" fails against servers that do not speak it; pinning a
	// legacy version skips the 2026-07-28 probe (the server may still
	// answer with an older legacy version).
	ProtocolVersion string

	// Capabilities are advertised in addition to those the Manager derives
	// from its handlers. Only Experimental, Extensions and Elicitation are
	// used. Elicitation is a seed: the elicitation capability advertised,
	// before the Manager's elicitation handlers are first configured, by
	// sessions until one of them is established (ServerInfo.Elicitation
	// says what to store for the next restart). Nil means none.
	Capabilities *mcp.ClientCapabilities

	// ToolsOnly makes discovery list the server's tools alone, not its
	// prompts, resources and resource templates, for a client that uses
	// tools only (an agent's tool loop): a connect then sends one list, as
	// go-sdk's Connect and ListTools do, rather than four (each list a
	// request, and a connection dialled for it when they go at once). The
	// server's prompts and resources stay unlisted (ListPrompts and the
	// others show none of them) and their list_changed notifications are
	// ignored; ReadResource and GetPrompt still work. False (the zero
	// value) lists everything the server advertises.
	ToolsOnly bool
}

// TransportOptions selects and configures the transport.
type TransportOptions struct {
	// Type is the transport. Zero means TransportAuto for a URL,
	// TransportStdio for a Command and TransportInProcess for InProcess.
	Type TransportType

	// Headers are sent on every HTTP request of the transport, the SSE GET
	// included. Their values are secrets: they never appear in logs, errors
	// or state snapshots, and, like the bearer token, they are not sent on
	// to another origin when the server redirects there.
	Headers http.Header

	// Implementation selects whose streamable HTTP transport carries a
	// streamable-http connection (including under TransportAuto). Zero
	// means ImplementationAgentMCP; ImplementationGoSDK is go-sdk's own.
	Implementation TransportImplementation
}

// RetryOptions configures reconnection (after a drop, on a restore, after
// an authorisation) with exponential backoff and full jitter: before
// attempt k+1 the Manager waits a random duration in
// [0, min(2^k × BaseDelay, MaxDelay)).
//
// When the MaxAttempts attempts are spent the server is failed, and it
// keeps being retried in the background, one attempt at a time: the
// backoff goes on doubling from where the attempts left it, capped at
// BackgroundMaxDelay, with equal jitter (a wait in [d/2, d)), until the
// server is connected, closed or removed. A call, a read, a prompt or a
// discovery on a failed server, and Manager.Reconnect, make one attempt at
// once.
type RetryOptions struct {
	// MaxAttempts counts attempts, the first included. Zero means 3.
	MaxAttempts int
	// BaseDelay is the backoff unit. Zero means 500 ms.
	BaseDelay time.Duration
	// MaxDelay caps one wait. Zero means 5 s.
	MaxDelay time.Duration
	// BackgroundMaxDelay caps the wait between background attempts. Zero
	// means 3 minutes. It is at least MaxDelay.
	BackgroundMaxDelay time.Duration
	// DisableBackground turns the background retry off: once the
	// MaxAttempts attempts are spent the server stays failed until a call,
	// a discovery or Reconnect. False (the zero value) means retry.
	DisableBackground bool
}

// withDefaults validates r and fills in its zero fields (backoff.Check).
func (r *RetryOptions) withDefaults() (RetryOptions, error) {
	p, err := backoff.Check((*backoff.Policy)(r))
	return RetryOptions(p), err
}

// transportType returns the effective transport type of o.
func (o *ServerOptions) transportType() TransportType {
	if o.Transport.Type != "" {
		return o.Transport.Type
	}
	switch {
	case o.Command != nil:
		return TransportStdio
	case o.InProcess != nil:
		return TransportInProcess
	}
	return TransportAuto
}

// validate checks o for RegisterServer.
func (o *ServerOptions) validate() error {
	n := 0
	if o.URL != "" {
		n++
	}
	if o.Command != nil {
		n++
	}
	if o.InProcess != nil {
		n++
	}
	if n != 1 {
		return errors.New("exactly one of URL, Command and InProcess must be set")
	}
	t := o.transportType()
	switch t {
	case TransportAuto, TransportStreamableHTTP, TransportSSE:
		if o.URL == "" {
			return fmt.Errorf("transport %q needs a URL", t)
		}
		u, err := url.Parse(o.URL)
		if err != nil {
			return fmt.Errorf("invalid URL: %w", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("the URL must be http or https, not %q", u.Scheme)
		}
	case TransportStdio:
		if o.Command == nil || o.Command.Path == "" {
			return fmt.Errorf("transport %q needs a Command with a Path", t)
		}
	case TransportInProcess:
		if o.InProcess == nil {
			return fmt.Errorf("transport %q needs an InProcess factory", t)
		}
	default:
		return fmt.Errorf("unknown transport type %q", t)
	}
	switch o.Transport.Implementation {
	case "", ImplementationAgentMCP, ImplementationGoSDK:
	default:
		return fmt.Errorf("unknown transport implementation %q", o.Transport.Implementation)
	}
	for k := range o.Transport.Headers {
		if err := checkHeaderName(k); err != nil {
			return err
		}
	}
	if _, err := o.Retry.withDefaults(); err != nil {
		return err
	}
	if v := o.Client.ProtocolVersion; v != "" && !protocol.Supported(v) {
		return fmt.Errorf("unsupported protocol version %q", v)
	}
	return nil
}

// clone returns a copy of o that shares nothing mutable with it.
func (o ServerOptions) clone() ServerOptions {
	if o.Command != nil {
		c := *o.Command
		c.Args = append([]string(nil), c.Args...)
		c.Env = append([]string(nil), c.Env...)
		o.Command = &c
	}
	o.Transport.Headers = o.Transport.Headers.Clone()
	if o.Retry != nil {
		r := *o.Retry
		o.Retry = &r
	}
	if o.Resume != nil {
		r := *o.Resume
		o.Resume = &r
	}
	return o
}

// checkHeaderName refuses header names that are not HTTP tokens and those
// the transports set themselves.
func checkHeaderName(name string) error {
	if name == "" || strings.IndexFunc(name, func(r rune) bool {
		return r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	}) >= 0 {
		return fmt.Errorf("invalid header name %q", name)
	}
	switch c := http.CanonicalHeaderKey(name); {
	case c == "Accept", c == "Content-Type", c == "Content-Length", c == "Host", c == "Connection",
		c == "Transfer-Encoding", c == "Last-Event-Id", strings.HasPrefix(c, "Mcp-"):
		return fmt.Errorf("header %q is set by the transport and cannot be overridden", name)
	}
	return nil
}
