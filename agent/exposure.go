package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// Exposure says which of an agent's servers and tools its MCP endpoint
// (package gateway) exposes. Allow and Deny hold patterns:
//
//	SERVER         a server as a whole: its tools, prompts, resources
//	SERVER/TOOL    one tool (or, with wildcards, several) of a server
//
// where SERVER matches server ids and TOOL the tools' MCP names (not their
// gateway names), with "*" for any run of characters ("/" included) and
// "?" for one character; every other character stands for itself.
//
// Precedence: Deny wins. A tool is exposed when no Deny pattern matches it
// (SERVER alone matches every tool of the server) and, if Allow has
// patterns, one of them does. A server's prompts, resources and resource
// templates are exposed when no SERVER-only Deny pattern matches it and, if
// Allow has patterns, one names it (a SERVER/TOOL pattern names the server
// too). The zero Exposure exposes everything.
//
// Examples: {Deny: ["*/delete_*"]} hides every tool whose name starts with
// delete_; {Allow: ["docs", "github/search_*"]} exposes the docs server and
// only the search tools of github; {Deny: ["scratch"]} hides a server.
type Exposure struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// Limits of an Exposure.
const (
	MaxExposurePatterns     = 100 // in Allow, and in Deny
	MaxExposurePatternBytes = 256
)

// ErrInvalidExposure is wrapped by the errors of Exposure.Validate and
// SetExposure for rules that are not valid.
var ErrInvalidExposure = errors.New("invalid exposure rules")

// ErrExposureUnsupported is wrapped by SetExposure's error when the agent's
// store cannot keep exposure rules (it does not implement
// store.ExposureStore).
var ErrExposureUnsupported = errors.New("the store cannot keep exposure rules")

// ExposureError is a pattern Validate refused.
type ExposureError struct {
	List    string // "allow" or "deny"
	Pattern string
	Reason  string
}

func (e *ExposureError) Error() string {
	return fmt.Sprintf("%s pattern %q: %s", e.List, e.Pattern, e.Reason)
}

func (e *ExposureError) Unwrap() error { return ErrInvalidExposure }

// IsZero reports whether e has no pattern, and so exposes everything.
func (e Exposure) IsZero() bool { return len(e.Allow) == 0 && len(e.Deny) == 0 }

// Validate checks every pattern: it returns an error wrapping
// ErrInvalidExposure (an *ExposureError names the first bad pattern), or
// nil.
func (e Exposure) Validate() error {
	for _, l := range []struct {
		name     string
		patterns []string
	}{{"allow", e.Allow}, {"deny", e.Deny}} {
		if len(l.patterns) > MaxExposurePatterns {
			return fmt.Errorf("%w: %d %s patterns, at most %d", ErrInvalidExposure, len(l.patterns), l.name, MaxExposurePatterns)
		}
		for _, p := range l.patterns {
			if reason := checkPattern(p); reason != "" {
				return &ExposureError{List: l.name, Pattern: p, Reason: reason}
			}
		}
	}
	return nil
}

// checkPattern returns why p is not a pattern, or "": exposure patterns
// are the tool patterns of package policy.
func checkPattern(p string) string { return policy.CheckToolPattern(p) }

// Exposes reports whether the rules expose tool of server serverID, or,
// with tool "", the server as a whole (its prompts, resources and
// templates; see Exposure for the rules). It is gateway.ExposeFunc's
// contract: a server refused with tool "" shows nothing. It allocates
// nothing.
func (e Exposure) Exposes(serverID, tool string) bool {
	if tool == "" {
		for _, p := range e.Deny {
			if s, _, hasTool := strings.Cut(p, "/"); !hasTool && glob(s, serverID) {
				return false
			}
		}
		if len(e.Allow) == 0 {
			return true
		}
		for _, p := range e.Allow {
			if s, _, _ := strings.Cut(p, "/"); glob(s, serverID) {
				return true
			}
		}
		return false
	}
	if slices.ContainsFunc(e.Deny, func(p string) bool { return matches(p, serverID, tool) }) {
		return false
	}
	return len(e.Allow) == 0 || slices.ContainsFunc(e.Allow, func(p string) bool { return matches(p, serverID, tool) })
}

// matches reports whether pattern p matches tool of serverID.
func matches(p, serverID, tool string) bool { return policy.MatchTool(p, serverID, tool) }

// glob is policy.Glob.
func glob(pattern, name string) bool { return policy.Glob(pattern, name) }

// clone returns a copy of e whose slices are its own, never nil.
func (e Exposure) clone() Exposure {
	return Exposure{Allow: append([]string{}, e.Allow...), Deny: append([]string{}, e.Deny...)}
}

// Exposure returns a copy of the agent's exposure rules.
func (a *Agent) Exposure() Exposure { return a.exposure.Load().clone() }

// Exposes reports whether the agent's exposure rules expose tool of
// server serverID, or with tool "" the server as a whole (see
// Exposure.Exposes). It reads the rules in memory, without a lock: the
// gateway calls it on every list and call (gateway.Options.Expose).
func (a *Agent) Exposes(serverID, tool string) bool { return a.exposure.Load().Exposes(serverID, tool) }

// SetExposure validates, stores and applies the agent's exposure rules,
// replacing the previous ones; the zero Exposure exposes everything. Rules
// are kept with the agent in its store (store.ExposureStore) and come back
// when it is opened again. The change is reported to OnMCPUpdate listeners
// and watchers like a change of the servers, so that a gateway following
// the agent updates its lists (and tells its clients, with list_changed).
// Invalid rules give an error wrapping ErrInvalidExposure; a store failure
// one wrapping ErrStorage; nothing changes then.
func (a *Agent) SetExposure(ctx context.Context, e Exposure) error {
	if err := e.Validate(); err != nil {
		return err
	}
	es, ok := a.st.(store.ExposureStore)
	if !ok {
		return fmt.Errorf("agent %s: set exposure: %w", a.ns, ErrExposureUnsupported)
	}
	e = e.clone()
	a.exposureMu.Lock() // one writer at a time: memory follows the store's order
	defer a.exposureMu.Unlock()
	if err := es.PutExposure(ctx, a.ns, store.Exposure{Allow: e.Allow, Deny: e.Deny}); err != nil {
		return fmt.Errorf("agent %s: set exposure: %w: %w", a.ns, ErrStorage, err)
	}
	a.exposure.Store(&e)
	a.updates.stateChanged()
	return nil
}

// loadExposure reads the stored exposure rules, when the store keeps them.
func (a *Agent) loadExposure(ctx context.Context) error {
	e := Exposure{}
	if es, ok := a.st.(store.ExposureStore); ok {
		se, err := es.GetExposure(ctx, a.ns)
		if err != nil {
			return err
		}
		e = Exposure{Allow: se.Allow, Deny: se.Deny}.clone()
	}
	a.exposure.Store(&e)
	return nil
}
