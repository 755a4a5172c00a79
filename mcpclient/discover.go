package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient/internal/paging"
	"github.com/agentmcp/agentmcp/mcpclient/internal/toolfilter"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// discoverOnce is discover; reauth allows one more attempt after the
// AuthProvider renewed credentials by itself.
func (c *server) discoverOnce(ctx context.Context, timeout time.Duration, reauth bool) DiscoverResult {
	c.mu.Lock()
	s, state := c.sess, c.state
	if s == nil || (state != StateConnected && state != StateReady && state != StateDiscovering) {
		c.mu.Unlock()
		return DiscoverResult{State: state, Err: fmt.Errorf("discovery skipped: connection in %s state", state)}
	}
	if c.discoverCancel != nil {
		c.discoverCancel() // a new discovery replaces one in flight
	}
	c.discoverGen++
	gen, listGen, epoch, verify := c.discoverGen, c.listGen, c.epoch, s.unverified
	dctx, cancel := context.WithTimeout(ctx, timeout)
	stop := context.AfterFunc(c.life, cancel)
	c.discoverCancel = cancel
	c.mu.Unlock()
	defer stop()
	defer cancel()
	// A resumed session is shown discovering from its handshake on (see
	// connectOnce): no second event.
	if !(verify && state == StateDiscovering) && !c.setStateAt(epoch, StateDiscovering, nil) {
		return DiscoverResult{State: c.info().State, Err: errors.New("discovery was cancelled")}
	}

	cat, err := c.fetchCatalog(dctx, s, verify)
	if err != nil && dctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		err = fmt.Errorf("discovery timed out after %v: %w", timeout, err)
	}

	c.mu.Lock()
	if verify && (err == nil || (dctx.Err() == nil && !transport.IsUnreachable(err) && !isSessionLost(err))) {
		// The server answered: the session is live. A discovery cancelled
		// (by its caller, a newer one or a close) before it heard from the
		// server confirms nothing.
		s.unverified = false
	}
	if c.discoverGen != gen || c.sess != s || c.epoch != epoch {
		// Replaced by a newer discovery, or the session went away (and a
		// renewal, which discovers again, is under way).
		state := c.state
		c.mu.Unlock()
		if !isSessionLost(err) {
			err = errors.New("discovery was cancelled")
		}
		return DiscoverResult{State: state, Err: err}
	}
	c.discoverCancel = nil
	if err == nil {
		// Keep any list that a list_changed refresh fetched after this
		// discovery started: it is newer.
		if c.catGen[kindTools] > listGen[kindTools] {
			cat.tools = c.cat.tools
		}
		if c.catGen[kindPrompts] > listGen[kindPrompts] {
			cat.prompts = c.cat.prompts
		}
		if c.catGen[kindResources] > listGen[kindResources] {
			cat.resources, cat.templates = c.cat.resources, c.cat.templates
		}
		for k := range c.catGen {
			c.catGen[k] = max(c.catGen[k], listGen[k])
		}
		cat.known = true
		c.cat = cat
	}
	c.mu.Unlock()

	switch {
	case err == nil:
		c.setState(StateReady, nil)
		return DiscoverResult{Success: true, State: StateReady}
	case IsUnauthorized(err):
		authURL, aerr := c.authorize(ctx, err)
		if aerr == nil && authURL == "" && c.opts.Auth != nil && reauth {
			// New credentials without a user: discover again, once.
			c.setState(StateConnected, err)
			return c.discoverOnce(ctx, timeout, false)
		}
		c.setAuthenticating(authURL, err)
		return DiscoverResult{State: StateAuthenticating, Err: err}
	case verify && transport.IsUnreachable(err):
		// The first exchange of a resumed session: its server cannot be
		// reached, so the connect failed after all.
		c.m.logger.Warn("mcp server of a resumed session is unreachable", "server", c.ID(), "error", err)
		c.mu.Lock()
		current := c.sess == s && c.epoch == epoch
		if current {
			c.sess = nil
		}
		c.mu.Unlock()
		if current {
			s.close()
			c.setStateAt(epoch, StateFailed, err)
		}
		return DiscoverResult{State: StateFailed, Err: err}
	case verify && isSessionLost(err):
		// The server rejected the resumed session: one fresh handshake
		// (the renewal in flight, or a new one), which discovers again.
		c.setStateAt(epoch, StateConnecting, err)
		c.startRenew(s, 1)
		return DiscoverResult{State: StateConnecting, Err: err}
	default:
		c.m.logger.Warn("mcp discovery failed", "server", c.ID(), "error", err)
		c.setStateAt(epoch, StateConnected, err)
		if isSessionLost(err) {
			// The server forgot the session: re-initialise once, which
			// discovers again.
			c.startRenew(s, 1)
		}
		return DiscoverResult{State: StateConnected, Err: err}
	}
}

// fetchCatalog lists every catalog the server advertises: in parallel
// when no other handshake or discovery of the Manager is in flight, one
// after another otherwise. Lists sent at once go out on as many HTTP
// connections, each dialled for the purpose: they save a server connected
// alone some round trips, but when many servers connect at once (a
// restore, a fan-out) the client's CPU is what bounds them, and the extra
// connections, their buffers and goroutines are most of what the lists
// cost (docs/PERFORMANCE.md). With verify (a resumed session's first
// exchange), one request goes alone first, so that a server that is gone
// is found out with one request, and one that answers is known to be
// there: the first list, or a ping when the server advertises none.
func (c *server) fetchCatalog(ctx context.Context, s *session, verify bool) (*catalog, error) {
	parallel := c.m.connecting.Add(1) == 1
	defer c.m.connecting.Add(-1)
	caps := s.cs.InitializeResult().Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	if c.opts.Client.ToolsOnly {
		caps = &mcp.ServerCapabilities{Tools: caps.Tools}
	}
	cat := &catalog{}
	if verify {
		var err error
		switch {
		case caps.Tools != nil:
			if cat.tools, err = c.listTools(ctx, s); err != nil {
				return nil, fmt.Errorf("listing tools: %w", err)
			}
			caps = &mcp.ServerCapabilities{Prompts: caps.Prompts, Resources: caps.Resources}
		case caps.Prompts != nil:
			if cat.prompts, err = c.listPrompts(ctx, s); err != nil {
				return nil, fmt.Errorf("listing prompts: %w", err)
			}
			caps = &mcp.ServerCapabilities{Resources: caps.Resources}
		case caps.Resources != nil:
			if cat.resources, err = c.listResources(ctx, s); err != nil {
				return nil, fmt.Errorf("listing resources: %w", err)
			}
			caps = &mcp.ServerCapabilities{}
			if cat.templates, err = c.listTemplates(ctx, s); err != nil {
				return nil, fmt.Errorf("listing resource templates: %w", err)
			}
		default:
			if err := s.cs.Ping(ctx, nil); err != nil {
				return nil, fmt.Errorf("ping: %w", err)
			}
		}
	}
	var (
		mu    sync.Mutex
		errs  []error
		lists []func()
	)
	add := func(kind string, fn func() error) {
		lists = append(lists, func() {
			if err := fn(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("listing %s: %w", kind, err))
				mu.Unlock()
			}
		})
	}
	if caps.Tools != nil {
		add("tools", func() (err error) { cat.tools, err = c.listTools(ctx, s); return })
	}
	if caps.Prompts != nil {
		add("prompts", func() (err error) { cat.prompts, err = c.listPrompts(ctx, s); return })
	}
	if caps.Resources != nil {
		add("resources", func() (err error) { cat.resources, err = c.listResources(ctx, s); return })
		add("resource templates", func() (err error) { cat.templates, err = c.listTemplates(ctx, s); return })
	}
	// In parallel, the last list goes on this goroutine, whose stack has
	// grown already: a list alone (ToolsOnly) costs no goroutine, no
	// growth of a new one's stack and no wake-up of this one.
	var wg sync.WaitGroup
	for i, list := range lists {
		if parallel && i < len(lists)-1 {
			wg.Go(list)
		} else {
			list()
		}
	}
	wg.Wait()
	return cat, errors.Join(errs...)
}

func (c *server) listTools(ctx context.Context, s *session) ([]*mcp.Tool, error) {
	return paging.All(ctx, c.m.opts.MaxPages, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
		r, direct, err := listPage(ctx, s, "tools/list", &mcp.ListToolsParams{Cursor: cursor}, s.cs.ListTools)
		if err != nil {
			return nil, "", err
		}
		if direct {
			r.Tools = toolfilter.Valid(r.Tools, c.excludedTool) // as go-sdk's ListTools does
		}
		return r.Tools, r.NextCursor, nil
	})
}

func (c *server) listPrompts(ctx context.Context, s *session) ([]*mcp.Prompt, error) {
	return paging.All(ctx, c.m.opts.MaxPages, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		r, _, err := listPage(ctx, s, "prompts/list", &mcp.ListPromptsParams{Cursor: cursor}, s.cs.ListPrompts)
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	})
}

func (c *server) listResources(ctx context.Context, s *session) ([]*mcp.Resource, error) {
	return paging.All(ctx, c.m.opts.MaxPages, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		r, _, err := listPage(ctx, s, "resources/list", &mcp.ListResourcesParams{Cursor: cursor}, s.cs.ListResources)
		if err != nil {
			return nil, "", err
		}
		return r.Resources, r.NextCursor, nil
	})
}

func (c *server) listTemplates(ctx context.Context, s *session) ([]*mcp.ResourceTemplate, error) {
	return paging.All(ctx, c.m.opts.MaxPages, func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		r, _, err := listPage(ctx, s, "resources/templates/list", &mcp.ListResourceTemplatesParams{Cursor: cursor}, s.cs.ListResourceTemplates)
		if err != nil {
			return nil, "", err
		}
		return r.ResourceTemplates, r.NextCursor, nil
	})
}

// Kinds of catalog a list_changed notification refreshes.
const (
	kindTools = iota
	kindPrompts
	kindResources
)

// refreshState debounces the refreshes of one kind of list.
type refreshState struct {
	running bool
	again   bool // another notification arrived while running
}

// listChanged refreshes one list after the server said it changed. It runs
// in the background (notification handlers must not block) and coalesces
// notifications that arrive while a refresh runs.
func (c *server) listChanged(s *session, kind int) {
	if kind != kindTools && c.opts.Client.ToolsOnly {
		return // never listed
	}
	c.mu.Lock()
	if c.sess != s {
		// Not installed yet: the handshake is still running. Refresh once
		// it is.
		if !s.installed {
			s.pending[kind] = true
		}
		c.mu.Unlock()
		return
	}
	c.listGen[kind]++
	r := &c.refresh[kind]
	if r.running {
		r.again = true
		c.mu.Unlock()
		return
	}
	r.running = true
	c.mu.Unlock()
	c.m.goTracked(func(ctx context.Context) {
		for {
			c.refreshList(ctx, s, kind)
			c.mu.Lock()
			if !r.again || c.removed {
				r.running, r.again = false, false
				c.mu.Unlock()
				return
			}
			r.again = false
			c.mu.Unlock()
		}
	})
}

// refreshList fetches one list again and replaces it in the catalog.
func (c *server) refreshList(ctx context.Context, s *session, kind int) {
	c.mu.Lock()
	gen := c.listGen[kind]
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.m.opts.DiscoverTimeout)
	defer cancel()
	var (
		err  error
		next = func(cat catalog) catalog { return cat }
		ev   EventKind
	)
	switch kind {
	case kindTools:
		var tools []*mcp.Tool
		tools, err = c.listTools(ctx, s)
		next = func(cat catalog) catalog { cat.tools, cat.size = tools, nil; return cat }
		ev = EventToolsChanged
	case kindPrompts:
		var prompts []*mcp.Prompt
		prompts, err = c.listPrompts(ctx, s)
		next = func(cat catalog) catalog { cat.prompts = prompts; return cat }
		ev = EventPromptsChanged
	case kindResources:
		var res []*mcp.Resource
		var tmpl []*mcp.ResourceTemplate
		if res, err = c.listResources(ctx, s); err == nil {
			tmpl, err = c.listTemplates(ctx, s)
		}
		next = func(cat catalog) catalog { cat.resources, cat.templates = res, tmpl; return cat }
		ev = EventResourcesChanged
	}
	if err != nil {
		c.m.logger.Warn("mcp list refresh failed", "server", c.ID(), "error", err)
		return
	}
	c.mu.Lock()
	if c.sess != s || c.catGen[kind] > gen {
		c.mu.Unlock()
		return
	}
	c.catGen[kind] = gen
	cat := next(*c.cat)
	c.cat = &cat
	state := c.state
	c.mu.Unlock()
	c.m.publish(Event{Kind: ev, ServerID: c.ID(), State: state})
}
