package policy

import (
	"fmt"
	"maps"
)

// PinReaction is what an agent does when a server lists a pinned tool
// with a definition other than the pinned one.
type PinReaction string

// The reactions to a changed tool. The zero PinReaction means Block.
const (
	Block  PinReaction = "block"  // the tool is left out and its calls refused until a person accepts it
	Warn   PinReaction = "warn"   // the tool stays, marked changed
	Accept PinReaction = "accept" // the new definition is pinned silently
)

// NewTools is what an agent does with a tool that appears after its
// server's first listing.
type NewTools string

// The reactions to a new tool. The zero NewTools means AllowNew.
const (
	AllowNew NewTools = "allow" // the tool is pinned as listed and may be called
	HoldNew  NewTools = "hold"  // the tool is left out until a person accepts it
)

// Pins says how an agent reacts to its servers' tool definitions changing
// after it pinned them, in the policy's "pins" field:
//
//	"pins": {"changed": "block", "new": "allow",
//	         "servers": {"github": {"changed": "warn", "new": "hold"}}}
//
// A server's entry, by server id, overrides the agent's reactions for
// that server; a field left empty there takes the agent's.
type Pins struct {
	PinRules
	Servers map[string]PinRules `json:"servers,omitempty"`
}

// PinRules are the reactions of an agent, or of one of its servers.
type PinRules struct {
	// Changed is the reaction to a changed tool; "" means Block.
	Changed PinReaction `json:"changed,omitempty"`
	// New is the reaction to a new tool; "" means AllowNew.
	New NewTools `json:"new,omitempty"`
}

// For returns the reactions for server serverID, defaults filled in. A
// nil Pins gives the defaults (block, allow).
func (p *Pins) For(serverID string) PinRules {
	r := PinRules{Changed: Block, New: AllowNew}
	if p == nil {
		return r
	}
	r = r.over(p.PinRules)
	if s, ok := p.Servers[serverID]; ok {
		r = r.over(s)
	}
	return r
}

func (r PinRules) over(o PinRules) PinRules {
	if o.Changed != "" {
		r.Changed = o.Changed
	}
	if o.New != "" {
		r.New = o.New
	}
	return r
}

func (r PinRules) validate(field string) error {
	switch r.Changed {
	case "", Block, Warn, Accept:
	default:
		return &Error{Rule: -1, Field: field + ".changed", Reason: fmt.Sprintf("%q: want block, warn or accept", r.Changed)}
	}
	switch r.New {
	case "", AllowNew, HoldNew:
	default:
		return &Error{Rule: -1, Field: field + ".new", Reason: fmt.Sprintf("%q: want allow or hold", r.New)}
	}
	return nil
}

func (p *Pins) validate() error {
	if p == nil {
		return nil
	}
	if err := p.PinRules.validate("pins"); err != nil {
		return err
	}
	if len(p.Servers) > MaxPatterns {
		return &Error{Rule: -1, Field: "pins.servers", Reason: fmt.Sprintf("more than %d servers", MaxPatterns)}
	}
	for id, r := range p.Servers {
		if id == "" {
			return &Error{Rule: -1, Field: "pins.servers", Reason: "an empty server id"}
		}
		if err := r.validate(fmt.Sprintf("pins.servers[%q]", id)); err != nil {
			return err
		}
	}
	return nil
}

func (p *Pins) clone() *Pins {
	if p == nil {
		return nil
	}
	q := *p
	q.Servers = maps.Clone(p.Servers)
	return &q
}
