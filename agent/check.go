package agent

import (
	"fmt"

	"github.com/agentmcp/agentmcp/store"
)

// CheckAdd reports whether AddMCPServer would accept these arguments,
// without storing or connecting anything. It makes the checks AddMCPServer
// makes before it stores a server (name, URL, SSRF guard, callback URL)
// and those the Manager makes when the server is registered, which
// AddMCPServer meets only after storing it (transport type, header names,
// retry options, protocol version). It does not check whether a stable id
// is in use (AddMCPServer reports ErrIDInUse before storing anything). The
// error wraps netguard.ErrBlockedURL for a blocked URL.
//
// An HTTP API calls it first, so that bad input is refused with nothing
// stored.
func (a *Agent) CheckAdd(name, rawURL string, opts *AddOptions) error {
	var o AddOptions
	if opts != nil {
		o = *opts
	}
	tgt, _, err := a.checkTarget(name, rawURL, o)
	if err != nil {
		return err
	}
	so, err := a.serverOptions(store.Server{Namespace: a.ns, ID: "check", Name: name, URL: tgt.url, Options: storeOptions(o)})
	if err != nil {
		return err
	}
	if err := a.m.CheckServerOptions(so); err != nil {
		return fmt.Errorf("add mcp server: %w", err)
	}
	return nil
}
