package agent

import (
	"context"
	"slices"
	"strings"
)

// NamespaceLister is implemented by stores that can list the agents that
// have servers (store/sqlite and store/postgres do). Host.Known uses it to
// list the sleeping agents; with a store that lacks it, only the default
// and awake ones are listed.
type NamespaceLister interface {
	ListNamespaces(ctx context.Context) ([]string, error)
}

// IsDefault reports whether key ("class/name") is one of
// HostOptions.Defaults, which always exist.
func (h *Host) IsDefault(key string) bool { return slices.Contains(h.opts.Defaults, key) }

// Known returns up to limit agents that exist ("class/name"), of those
// keep accepts: the default agents first (HostOptions.Defaults, all of
// them), then those with servers in the store in the order they were first
// stored (NamespaceLister), then the other awake ones; more reports
// whether some were left out. err is the store's, when it could not list
// the stored agents (the list then lacks them). It opens nothing.
func (h *Host) Known(ctx context.Context, limit int, keep func(class, name string) bool) (keys []string, more bool, err error) {
	seen := map[string]bool{}
	for _, key := range h.opts.Defaults {
		class, name, _ := strings.Cut(key, "/")
		if !seen[key] && keep(class, name) {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	var candidates []string
	if lister, ok := h.st.(NamespaceLister); ok {
		candidates, err = lister.ListNamespaces(ctx)
		if err != nil {
			h.logger.Warn("cannot list the stored agents", "error", err)
		}
	}
	candidates = append(candidates, h.Awake()...)
	for _, key := range candidates {
		class, name, _ := strings.Cut(key, "/")
		if seen[key] || !keep(class, name) {
			continue
		}
		seen[key] = true
		if len(keys) >= limit {
			return keys, true, err
		}
		keys = append(keys, key)
	}
	return keys, false, err
}
