package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ElicitationHandlers answer servers that ask the user for input in the
// middle of a call: a form to fill in, or a URL to open in a browser. It is
// the seed's configureElicitationHandlers({form, url}).
//
// A handler returns the user's answer: Action "accept" (with Content, in
// form mode), "decline" or "cancel". Form answers are checked against the
// requested schema, and its defaults are filled in for fields left out,
// before they reach the server; an answer that does not match fails the
// request. A handler error fails the server's request (and, in 2026-07-28,
// the call). Handlers may be called concurrently, for many servers and
// calls; ctx ends when the call that caused the request is cancelled, when
// the server cancels the request, or when the Manager closes.
//
// In URL mode, accepting means the user agreed to open the URL (the
// handler opens it, in the system browser, never in a context the client
// or the model can read); completion is up to the server. Show the full
// URL and which server asks before opening anything.
type ElicitationHandlers struct {
	// Form answers form-mode elicitations. Nil means form mode is not
	// advertised and form requests fail.
	Form func(ctx context.Context, req *ElicitationRequest, serverID string) (*mcp.ElicitResult, error)
	// URL answers URL-mode elicitations. Nil means URL mode is not
	// advertised and URL requests fail.
	URL func(ctx context.Context, req *ElicitationRequest, serverID string) (*mcp.ElicitResult, error)

	// URLCompletionWait bounds the wait, when a legacy server refused a
	// request with a URL elicitation required error (-32042) and URL
	// accepted its elicitations, for the server's
	// notifications/elicitation/complete before the request is retried
	// once; the wait also ends with the call's context. Zero means 2
	// minutes. Negative means no wait: retry as soon as URL returns, for
	// handlers that return only once the user has finished in the browser.
	URLCompletionWait time.Duration
}

// ElicitationRequest is one request for user input, with what a UI needs
// to show it.
type ElicitationRequest struct {
	// ServerID is the server that asks. Show it to the user.
	ServerID string
	// Mode is "form" or "url".
	Mode string
	// Message is the server's explanation, for the user.
	Message string
	// RequestedSchema is the JSON schema of the form (form mode): a flat
	// object of string, number, integer, boolean and enum properties.
	RequestedSchema json.RawMessage
	// URL is the URL to open (URL mode). It may carry secrets in its query:
	// do not log it.
	URL string
	// ElicitationID identifies a URL elicitation in protocol 2025-11-25,
	// where the server may announce its completion. It is empty in
	// 2026-07-28.
	ElicitationID string
	// Params is the request as the server sent it (its _meta included).
	Params *mcp.ElicitParams
}

// EventAdvertisementChanged reports that ServerInfo.Elicitation changed:
// the elicitation handlers were configured, or the server's seed was spent.
// Persist the new value with the server.
const EventAdvertisementChanged EventKind = "advertisement"

var (
	// ErrNoHandler is wrapped by the error that a server request gets when
	// the application configured nothing to answer it: an elicitation
	// mode without a handler, or sampling without a handler.
	ErrNoHandler = errors.New("no handler configured")

	// ErrURLElicitationRequired is wrapped by [*URLElicitationRequiredError].
	ErrURLElicitationRequired = errors.New("mcp server requires URL elicitation")
)

// URLElicitationRequiredError reports a request that a server refused
// until the user completes URL elicitations (JSON-RPC error -32042), when
// that did not happen: the user declined or cancelled one, or the server
// refused the request again after the one retry.
type URLElicitationRequiredError struct {
	ServerID string
	// Elicitations are the URL elicitations the server asked for.
	Elicitations []*ElicitationRequest
	// Action is "decline" or "cancel" when the user refused one, and empty
	// when the retry failed the same way.
	Action string
	// Err is the server's error.
	Err error
}

func (e *URLElicitationRequiredError) Error() string {
	what := "it still requires them after a retry"
	if e.Action != "" {
		what = "the user chose " + e.Action
	}
	return fmt.Sprintf("mcp server %q requires %d URL elicitation(s) before it serves the request, and %s", e.ServerID, len(e.Elicitations), what)
}

func (e *URLElicitationRequiredError) Unwrap() []error {
	return []error{ErrURLElicitationRequired, e.Err}
}

// noHandlerError is the error of a request nobody can answer. It carries a
// JSON-RPC error, so that the server gets a proper code.
type noHandlerError struct{ msg string }

func (e *noHandlerError) Error() string { return e.msg }
func (e *noHandlerError) Unwrap() []error {
	return []error{ErrNoHandler, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.msg}}
}

// ConfigureElicitationHandlers sets the handlers that answer elicitation
// requests, replacing any set before; nil, or handlers with neither mode,
// clears them.
//
// Live sessions use the new handlers at once: a request for a mode without
// a handler fails with an error naming the mode, wrapping ErrNoHandler.
// What a session advertises is decided when it starts: exactly the modes
// that have handlers, and no elicitation capability without any. Until
// this is first called, a server's seed (ClientOptions.Capabilities.
// Elicitation) is advertised instead, for one successful handshake.
//
// Every registered server gets an EventAdvertisementChanged.
func (m *Manager) ConfigureElicitationHandlers(h *ElicitationHandlers) {
	var cfg ElicitationHandlers
	if h != nil {
		cfg = *h
	}
	m.hooks.elicit.Store(&cfg)
	for _, c := range m.snapshot() {
		c.mu.Lock()
		state := c.state
		c.mu.Unlock()
		m.publish(Event{Kind: EventAdvertisementChanged, ServerID: c.ID(), State: state})
	}
}

// ElicitationHandlers returns a copy of the handlers that
// ConfigureElicitationHandlers set last, or nil when it was never called:
// for a layer that answers some requests itself and passes the others on
// to the handlers in place (package gateway).
func (m *Manager) ElicitationHandlers() *ElicitationHandlers {
	h := m.hooks.elicit.Load()
	if h == nil {
		return nil
	}
	cp := *h
	return &cp
}

// elicitationToAdvertise returns the elicitation capability for a new
// session of c, and whether it is c's seed.
func (c *server) elicitationToAdvertise() (caps *mcp.ElicitationCapabilities, seed bool) {
	if h := c.m.hooks.elicit.Load(); h != nil {
		return h.capabilities(), false
	}
	c.hooks.mu.Lock()
	spent := c.hooks.seedSpent
	c.hooks.mu.Unlock()
	if x := c.opts.Client.Capabilities; x != nil && x.Elicitation != nil && !spent {
		return cloneElicitation(x.Elicitation), true
	}
	return nil, false
}

// capabilities returns the modes h has handlers for, or nil.
func (h *ElicitationHandlers) capabilities() *mcp.ElicitationCapabilities {
	if h.Form == nil && h.URL == nil {
		return nil
	}
	caps := &mcp.ElicitationCapabilities{}
	if h.Form != nil {
		caps.Form = &mcp.FormElicitationCapabilities{}
	}
	if h.URL != nil {
		caps.URL = &mcp.URLElicitationCapabilities{}
	}
	return caps
}

// spendSeed notes that a session advertising c's seed was established (the
// server accepted a request of it):
// unless handlers have been configured by now, later sessions advertise
// nothing, and the stored seed should go.
func (c *server) spendSeed() {
	if c.m.hooks.elicit.Load() != nil {
		return
	}
	c.hooks.mu.Lock()
	spent := c.hooks.seedSpent
	c.hooks.seedSpent = true
	c.hooks.mu.Unlock()
	if !spent {
		c.mu.Lock()
		state := c.state
		c.mu.Unlock()
		c.m.publish(Event{Kind: EventAdvertisementChanged, ServerID: c.ID(), State: state})
	}
}

func cloneElicitation(e *mcp.ElicitationCapabilities) *mcp.ElicitationCapabilities {
	if e == nil {
		return nil
	}
	cp := &mcp.ElicitationCapabilities{}
	if e.Form != nil {
		cp.Form = &mcp.FormElicitationCapabilities{}
	}
	if e.URL != nil {
		cp.URL = &mcp.URLElicitationCapabilities{}
	}
	return cp
}

// elicit is the session's go-sdk elicitation handler: for legacy
// elicitation/create requests and 2026-07-28 input requests. go-sdk has
// checked the parameters, and checks form answers and fills in defaults
// after it.
func (h *sessionHooks) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	ctx, done := h.requestCtx(ctx)
	defer done()
	return h.c.elicit(ctx, req.Params)
}

// elicitUntraced is elicit (telemetry.go): it runs the handler for the
// mode of p, within the limits of ServerRequestLimits: p's size, and the
// requests for input waiting.
func (c *server) elicitUntraced(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	m, serverID := c.m, c.ID()
	if p == nil {
		p = &mcp.ElicitParams{}
	}
	mode := elicitMode(p)
	var schema []byte
	if p.RequestedSchema != nil {
		var err error
		if schema, err = json.Marshal(p.RequestedSchema); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("elicitation schema cannot be encoded: %v", err)}
		}
	}
	if err := c.checkElicitationSize(p, schema); err != nil {
		return nil, err
	}
	release, err := c.acquireInput("elicitation")
	if err != nil {
		return nil, err
	}
	defer release()
	cfg := m.hooks.elicit.Load()
	if cfg == nil {
		cfg = &ElicitationHandlers{}
	}
	var fn func(context.Context, *ElicitationRequest, string) (*mcp.ElicitResult, error)
	switch mode {
	case "form":
		fn = cfg.Form
	case "url":
		fn = cfg.URL
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unsupported elicitation mode %q", mode)}
	}
	if fn == nil {
		return nil, &noHandlerError{fmt.Sprintf("no %s-mode elicitation handler is configured for mcp server %q", mode, serverID)}
	}
	req := &ElicitationRequest{
		ServerID:        serverID,
		Mode:            mode,
		Message:         p.Message,
		URL:             p.URL,
		ElicitationID:   p.ElicitationID,
		RequestedSchema: schema,
		Params:          p,
	}
	res, err := fn(ctx, req, serverID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s-mode elicitation handler: %w", mode, err)
	case res == nil:
		return nil, fmt.Errorf("%s-mode elicitation handler returned no result", mode)
	}
	switch res.Action {
	case "accept":
		if mode == "url" && res.Content != nil {
			r := *res
			r.Content = nil // URL mode carries consent only
			res = &r
		}
	case "decline", "cancel":
		if res.Content != nil {
			r := *res
			r.Content = nil
			res = &r
		}
	default:
		return nil, fmt.Errorf("%s-mode elicitation handler returned action %q; want accept, decline or cancel", mode, res.Action)
	}
	return res, nil
}

// elicitMode is p's mode, inferred as go-sdk does when the server left it
// out.
func elicitMode(p *mcp.ElicitParams) string {
	switch {
	case p.Mode != "":
		return p.Mode
	case p.URL != "" || p.ElicitationID != "":
		return "url"
	}
	return "form"
}

// elicitationComplete receives notifications/elicitation/complete.
func (h *sessionHooks) elicitationComplete(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
	if req.Params == nil {
		return
	}
	h.mu.Lock()
	ch, ok := h.completions[req.Params.ElicitationID]
	if ok {
		delete(h.completions, req.Params.ElicitationID)
	}
	h.mu.Unlock()
	if ok {
		close(ch)
	}
}

// awaitCompletion registers for the completion of a URL elicitation. The
// result's done is closed when the server announces it; release must be
// called when the wait is over.
func (h *sessionHooks) awaitCompletion(id string) (done <-chan struct{}, release func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	if h.completions == nil {
		h.completions = map[string]chan struct{}{}
	}
	h.completions[id] = ch
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if h.completions[id] == ch {
			delete(h.completions, id)
		}
		h.mu.Unlock()
	}
}

// urlElicitationMiddleware handles the legacy URL elicitation required
// error (-32042): it runs the URL handler for each elicitation the error
// lists, waits for the server to announce their completion
// (URLCompletionWait), and retries the request once.
func (h *sessionHooks) urlElicitationMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		werr := urlElicitationRequired(err)
		if werr == nil || strings.HasPrefix(method, "notifications/") || method == "initialize" || method == "server/discover" {
			return res, err
		}
		reqs, err := h.satisfyURLElicitations(ctx, werr, err)
		if err != nil {
			return nil, err
		}
		res, err = next(ctx, method, req)
		if urlElicitationRequired(err) != nil {
			return nil, &URLElicitationRequiredError{ServerID: h.c.ID(), Elicitations: reqs, Err: err}
		}
		return res, err
	}
}

// urlElicitationRequired returns the -32042 error in err, if any.
func urlElicitationRequired(err error) *jsonrpc.Error {
	var werr *jsonrpc.Error
	if err != nil && errors.As(err, &werr) && werr.Code == mcp.CodeURLElicitationRequired {
		return werr
	}
	return nil
}

// satisfyURLElicitations runs the URL handler for the elicitations of
// werr, then waits for their completion.
func (h *sessionHooks) satisfyURLElicitations(ctx context.Context, werr *jsonrpc.Error, orig error) ([]*ElicitationRequest, error) {
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if len(werr.Data) > 0 {
		if err := json.Unmarshal(werr.Data, &data); err != nil {
			return nil, protocolError("mcp server %q: malformed URL elicitation required error: %v", h.c.ID(), err)
		}
	}
	if max := h.c.m.limits().PerServer; len(data.Elicitations) > max {
		return nil, protocolError("mcp server %q: a URL elicitation required error lists %d elicitations, more than the %d a server may have pending", h.c.ID(), len(data.Elicitations), max)
	}
	var reqs []*ElicitationRequest
	for _, p := range data.Elicitations {
		if p == nil || elicitMode(p) != "url" || p.URL == "" {
			return nil, protocolError("mcp server %q: a URL elicitation required error must list URL-mode elicitations with a URL", h.c.ID())
		}
		reqs = append(reqs, &ElicitationRequest{ServerID: h.c.ID(), Mode: "url", Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID, Params: p})
	}
	if len(reqs) == 0 {
		return nil, &URLElicitationRequiredError{ServerID: h.c.ID(), Err: orig}
	}

	// The handlers run within the call; they end with the Manager too.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(h.c.m.ctx, func() { cancel(ErrClosed) })()

	// Register first: a completion may come as soon as the user is done.
	var pending []<-chan struct{}
	for _, p := range data.Elicitations {
		if p.ElicitationID == "" {
			continue
		}
		done, release := h.awaitCompletion(p.ElicitationID)
		defer release()
		pending = append(pending, done)
	}
	for _, p := range data.Elicitations {
		p.Mode = "url"
		res, err := h.c.elicit(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q requires URL elicitation: %w", h.c.ID(), err)
		}
		if res.Action != "accept" {
			return nil, &URLElicitationRequiredError{ServerID: h.c.ID(), Elicitations: reqs, Action: res.Action, Err: orig}
		}
	}

	wait := 2 * time.Minute
	if cfg := h.c.m.hooks.elicit.Load(); cfg != nil && cfg.URLCompletionWait != 0 {
		wait = cfg.URLCompletionWait
	}
	if wait < 0 || len(pending) == 0 {
		return reqs, nil
	}
	timeout := h.c.m.clock.After(wait)
	for _, done := range pending {
		select {
		case <-done:
		case <-timeout:
			// The server may never say: retry, and let it decide.
			h.c.m.logger.Info("mcp server did not announce the completion of a URL elicitation; retrying the request", "server", h.c.ID())
			return reqs, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return reqs, nil
}
