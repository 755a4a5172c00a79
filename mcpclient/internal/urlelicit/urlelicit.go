// Package urlelicit handles, for package mcpclient's Manager, the legacy
// URL elicitation required error (JSON-RPC -32042): a server that needs
// the user to visit URLs before it serves a request fails the request
// with it, listing URL-mode elicitations; the client runs its URL handler
// for each, waits for the server to announce their completion
// (notifications/elicitation/complete), and retries the request once.
//
// # Usage
//
// A session keeps one [Completions], fed by its go-sdk client's
// ElicitationCompleteHandler ([Completions.Complete]), and installs
// [Middleware] among its sending middleware.
//
// # Concurrency
//
// Completions and the middleware are safe for concurrent use.
//
// # Errors
//
// A request still refused after the retry, or whose elicitations the user
// declined or cancelled, fails with an *input.URLElicitationRequiredError;
// an error that lists no valid elicitation wraps transport.ErrProtocol.
package urlelicit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Completions are the URL elicitations of a session whose completion is
// awaited.
type Completions struct {
	// mu guards waiting. It is never held across I/O.
	mu      sync.Mutex
	waiting map[string]chan struct{} // by elicitation id
}

// Complete notes the completion of the elicitation id, as the server
// announced it.
func (c *Completions) Complete(id string) {
	c.mu.Lock()
	ch, ok := c.waiting[id]
	if ok {
		delete(c.waiting, id)
	}
	c.mu.Unlock()
	if ok {
		close(ch)
	}
}

// Await registers for the completion of the elicitation id. done is
// closed when the server announces it; release must be called when the
// wait is over.
func (c *Completions) Await(id string) (done <-chan struct{}, release func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	if c.waiting == nil {
		c.waiting = map[string]chan struct{}{}
	}
	c.waiting[id] = ch
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		if c.waiting[id] == ch {
			delete(c.waiting, id)
		}
		c.mu.Unlock()
	}
}

// Config is what the middleware needs of the session's server.
type Config struct {
	// ServerID returns the id of the server, for errors and logs.
	ServerID func() string
	// MaxElicitations caps the elicitations one error may list (the
	// requests for input a server may have pending).
	MaxElicitations int
	// Elicit runs the URL handler for one elicitation (its Mode is set to
	// "url").
	Elicit func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// Wait returns how long to wait for the completions before the retry:
	// zero means 2 minutes, less than zero not at all.
	Wait func() time.Duration
	// After is the clock's time.After.
	After func(time.Duration) <-chan time.Time
	// Logger notes a retry made without the server's announcement.
	Logger *slog.Logger
	// Life bounds the handlers and the wait as well as the request's
	// context: when it ends, they are cancelled with cause Closed.
	Life   context.Context
	Closed error
}

// Middleware is the sending middleware that handles the URL elicitation
// required error of any request but the handshake and notifications, with
// the completions of comps. A handler runs within the request's context,
// bounded by cfg.Life.
func Middleware(comps *Completions, cfg Config) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			werr := required(err)
			if werr == nil || strings.HasPrefix(method, "notifications/") || method == "initialize" || method == "server/discover" {
				return res, err
			}
			reqs, err := satisfy(ctx, comps, cfg, werr, err)
			if err != nil {
				return nil, err
			}
			res, err = next(ctx, method, req)
			if required(err) != nil {
				return nil, &input.URLElicitationRequiredError{ServerID: cfg.ServerID(), Elicitations: reqs, Err: err}
			}
			return res, err
		}
	}
}

// required returns the -32042 error in err, if any.
func required(err error) *jsonrpc.Error {
	if err == nil {
		return nil // werr below escapes: a call that succeeded allocates nothing
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && werr.Code == mcp.CodeURLElicitationRequired {
		return werr
	}
	return nil
}

func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", transport.ErrProtocol, fmt.Sprintf(format, args...))
}

// satisfy runs the URL handler for the elicitations of werr, then waits
// for their completion.
func satisfy(ctx context.Context, comps *Completions, cfg Config, werr *jsonrpc.Error, orig error) ([]*input.ElicitationRequest, error) {
	id := cfg.ServerID()
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if len(werr.Data) > 0 {
		if err := json.Unmarshal(werr.Data, &data); err != nil {
			return nil, protocolError("mcp server %q: malformed URL elicitation required error: %v", id, err)
		}
	}
	if max := cfg.MaxElicitations; len(data.Elicitations) > max {
		return nil, protocolError("mcp server %q: a URL elicitation required error lists %d elicitations, more than the %d a server may have pending", id, len(data.Elicitations), max)
	}
	var reqs []*input.ElicitationRequest
	for _, p := range data.Elicitations {
		if p == nil || input.ElicitationMode(p) != "url" || p.URL == "" {
			return nil, protocolError("mcp server %q: a URL elicitation required error must list URL-mode elicitations with a URL", id)
		}
		reqs = append(reqs, &input.ElicitationRequest{ServerID: id, Mode: "url", Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID, Params: p})
	}
	if len(reqs) == 0 {
		return nil, &input.URLElicitationRequiredError{ServerID: id, Err: orig}
	}

	// The handlers run within the call; they end with Life too.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(cfg.Life, func() { cancel(cfg.Closed) })()

	// Register first: a completion may come as soon as the user is done.
	var pending []<-chan struct{}
	for _, p := range data.Elicitations {
		if p.ElicitationID == "" {
			continue
		}
		done, release := comps.Await(p.ElicitationID)
		defer release()
		pending = append(pending, done)
	}
	for _, p := range data.Elicitations {
		p.Mode = "url"
		res, err := cfg.Elicit(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q requires URL elicitation: %w", id, err)
		}
		if res.Action != "accept" {
			return nil, &input.URLElicitationRequiredError{ServerID: id, Elicitations: reqs, Action: res.Action, Err: orig}
		}
	}

	wait := cfg.Wait()
	if wait == 0 {
		wait = 2 * time.Minute
	}
	if wait < 0 || len(pending) == 0 {
		return reqs, nil
	}
	timeout := cfg.After(wait)
	for _, done := range pending {
		select {
		case <-done:
		case <-timeout:
			// The server may never say: retry, and let it decide.
			cfg.Logger.Info("mcp server did not announce the completion of a URL elicitation; retrying the request", "server", id)
			return reqs, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return reqs, nil
}
