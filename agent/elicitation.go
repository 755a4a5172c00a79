package agent

import (
	"context"
	"encoding/json"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stampElicitation keeps the elicitation capability stored with each server
// (the "elicitation" member of store.ServerOptions.Capabilities) equal to
// what the Manager would advertise to it (mcpclient.ServerInfo.Elicitation),
// so that after a restart its sessions advertise the same modes before the
// application has configured its handlers again; serverOptions hands the
// stored value back to the Manager as the seed. Following the reference
// (§11.1), the stamp is written when a server is registered and every time
// the handlers are configured, and it goes once a restored session has been
// established with it while no handlers were configured: an application
// that stopped configuring handlers stops advertising after one restart. A
// restart that never connects (waiting for OAuth, or interrupted) keeps it,
// and a change of id keeps it with the row.
//
// It is a Manager listener, run in order with the other events.
func (a *Agent) stampElicitation(ev mcpclient.Event) {
	if ev.Kind != mcpclient.EventRegistered && ev.Kind != mcpclient.EventAdvertisementChanged {
		return
	}
	info, ok := a.m.Server(ev.ServerID)
	if !ok {
		return
	}
	a.mu.Lock()
	row, ok := a.rows[ev.ServerID]
	a.mu.Unlock()
	if !ok {
		return // not stored (registered with the Manager directly), or renamed since
	}
	if _, changed, err := withElicitation(row.Options.Capabilities, info.Elicitation); err != nil || !changed {
		if err != nil {
			a.logger.Warn("cannot stamp the elicitation capability: stored capabilities are invalid", "server", ev.ServerID, "error", err)
		}
		return
	}
	a.writes.put("capabilities:"+ev.ServerID, func(ctx context.Context) {
		a.updateRow(ctx, ev.ServerID, func(row *store.Server) bool {
			caps, changed, err := withElicitation(row.Options.Capabilities, info.Elicitation)
			if err != nil || !changed {
				return false
			}
			row.Options.Capabilities = caps
			return true
		})
	})
}

// withElicitation returns the capabilities JSON raw with its elicitation
// member set to e (removed when e is nil), other members untouched, and
// whether that changed anything.
func withElicitation(raw json.RawMessage, e *mcp.ElicitationCapabilities) (json.RawMessage, bool, error) {
	members := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &members); err != nil {
			return nil, false, err
		}
		if members == nil {
			members = map[string]json.RawMessage{}
		}
	}
	old, had := members["elicitation"]
	if had {
		var cur *mcp.ElicitationCapabilities
		if json.Unmarshal(old, &cur) == nil && sameModes(cur, e) {
			return raw, false, nil
		}
	} else if e == nil {
		return raw, false, nil
	}
	if e == nil {
		delete(members, "elicitation")
	} else {
		v, err := json.Marshal(e)
		if err != nil {
			return nil, false, err
		}
		members["elicitation"] = v
	}
	if len(members) == 0 {
		return nil, true, nil
	}
	out, err := json.Marshal(members)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// sameModes reports whether a and b advertise the same elicitation modes.
func sameModes(a, b *mcp.ElicitationCapabilities) bool {
	if a == nil || b == nil {
		return a == b
	}
	return (a.Form == nil) == (b.Form == nil) && (a.URL == nil) == (b.URL == nil)
}
