package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// Pinned tool definitions. The first listing of a server's tools pins the
// definition of each (store.Pin, kept with the agent); every later listing
// (list_changed, a reconnection, a wake, a restore) is compared with the
// pins. A tool whose definition differs is changed: under the policy's
// pins reaction block (the default) it is left out of AITools, ListTools
// and the gateway and its calls are refused with ErrToolChanged until a
// person accepts the new definition (DecidePin) or the server is removed;
// under warn it stays, marked changed; under accept the new definition is
// pinned silently. A tool that appears later is new (allowed unless the
// reaction to new tools is hold); one that disappears is marked removed.
//
// Enforcement compares the catalog with the pins when a list is made or a
// call admitted, not when the listing is noticed, so that no window lets a
// changed tool through.

// ErrToolChanged is wrapped by the error of a call of a tool whose
// definition changed since the agent pinned it, or that is held (a new
// tool under the hold reaction, or one a person rejected); a
// *ToolChangedError says which.
var ErrToolChanged = errors.New("agent: tool definition changed since it was pinned")

// ErrPinsUnsupported is wrapped by DecidePin's error when the agent's
// store cannot keep pins (it does not implement store.PinStore).
var ErrPinsUnsupported = errors.New("the store cannot keep pinned tool definitions")

// ErrUnknownPin is wrapped by DecidePin's error for a tool the agent has
// no pin of.
var ErrUnknownPin = errors.New("agent: no such pinned tool")

// ToolChangedError is a call refused because of the tool's pin.
type ToolChangedError struct {
	ServerID, Tool string
	// State is the pin's: "changed", "new" or "rejected".
	State string
}

func (e *ToolChangedError) Error() string {
	switch e.State {
	case store.PinNew:
		return fmt.Sprintf("tool %q of MCP server %q is new and held until a person accepts it", e.Tool, e.ServerID)
	case store.PinRejected:
		return fmt.Sprintf("tool %q of MCP server %q was rejected: its definition changed since it was pinned", e.Tool, e.ServerID)
	}
	return fmt.Sprintf("tool %q of MCP server %q changed its definition since it was pinned; a person must accept the change", e.Tool, e.ServerID)
}

func (e *ToolChangedError) Unwrap() error { return ErrToolChanged }

// Pin decisions (DecidePin).
const (
	PinAccept = "accept" // pin the definition the server lists now
	PinReject = "reject" // keep the tool out until accepted
)

// ToolPin is one pinned tool as the agent shows it.
type ToolPin struct {
	ServerID string `json:"server"`
	Tool     string `json:"tool"`
	// State is one of store's Pin states: pinned, changed, new, removed,
	// rejected.
	State string `json:"state"`
	// Blocked says whether the tool is left out and its calls refused now.
	Blocked bool `json:"blocked"`
	// Fingerprint and Definition are the pinned definition's.
	Fingerprint string          `json:"fingerprint"`
	Definition  json.RawMessage `json:"definition"`
	// SeenFingerprint and Seen are the definition the server lists, when
	// it differs from the pinned one; Diff says which fields differ.
	SeenFingerprint string          `json:"seenFingerprint,omitempty"`
	Seen            json.RawMessage `json:"seen,omitempty"`
	Diff            []PinChange     `json:"diff,omitempty"`
	PinnedAt        string          `json:"pinnedAt"`
	ChangedAt       string          `json:"changedAt"`
}

// PinChange is one field of a tool's definition that changed: its old
// (pinned) and new (listed) text, strings as they are and other values as
// canonical JSON ("" for a field absent on that side).
type PinChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// pinFields are the fields of a tool's definition that are pinned, in the
// order a diff lists them.
var pinFields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// agentPins is what the agent keeps of its pins.
type agentPins struct {
	// mu guards servers.
	mu      sync.Mutex
	servers map[string]map[string]*store.Pin // by server id, then tool name
	// gen counts the changes of the pins (a ToolSet made from an older
	// generation is made again).
	gen atomic.Uint64
	// fps caches the fingerprints of catalogs' definitions (a catalog
	// is replaced, never modified: see mcpclient.Manager.ToolDefinition),
	// by definition; it is emptied when it holds maxCachedFingerprints.
	fps  sync.Map // *mcp.Tool -> string
	nfps atomic.Int64

	changes, decisions metric.Int64Counter
}

func (ps *agentPins) init(o Options) {
	mp := o.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter("github.com/agentmcp/agentmcp/agent")
	ps.changes, _ = meter.Int64Counter("agentmcp.pins.changes", metric.WithUnit("{tool}"),
		metric.WithDescription("Tool definitions found differing from the agents' pins, by state (changed, new, removed) and reaction (block, warn, accept, allow, hold)."))
	ps.decisions, _ = meter.Int64Counter("agentmcp.pins.decisions", metric.WithUnit("{tool}"),
		metric.WithDescription("Pin decisions made by people, by decision (accept, reject)."))
}

// ToolDefinition returns the pinned form of a tool's definition: canonical
// JSON (keys sorted, no insignificant whitespace, numbers as written) of
// its name, title, description, input and output schemas and annotations,
// and its fingerprint, the hex SHA-256 of that form.
func ToolDefinition(t *mcp.Tool) (def json.RawMessage, fingerprint string, err error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, "", fmt.Errorf("tool %q: %w", t.Name, err)
	}
	if def, err = appendCanonical(nil, raw, isPinField); err != nil { // canonical.go
		return nil, "", fmt.Errorf("tool %q: %w", t.Name, err)
	}
	sum := sha256.Sum256(def)
	return def, hex.EncodeToString(sum[:]), nil
}

func isPinField(name string) bool { return slices.Contains(pinFields, name) }

// maxCachedFingerprints bounds agentPins.fps.
const maxCachedFingerprints = 4096

// fingerprint is fingerprintOf(t) for a definition a catalog holds
// (shared and never modified), computed once per definition. Never for a
// copy (an mcpclient.Tool's): the copy's memory may hold another
// definition later, and the cached fingerprint would be taken for it.
func (ps *agentPins) fingerprint(t *mcp.Tool) string {
	if fp, ok := ps.fps.Load(t); ok {
		return fp.(string)
	}
	fp := fingerprintOf(t)
	ps.knownFingerprint(t, fp)
	return fp
}

// knownFingerprint caches fp as the fingerprint of t, a catalog's
// definition: one computed, or one stored with the catalog t was decoded
// from (see storedTool).
func (ps *agentPins) knownFingerprint(t *mcp.Tool, fp string) {
	if ps.nfps.Add(1) > maxCachedFingerprints {
		ps.fps.Clear()
		ps.nfps.Store(1)
	}
	ps.fps.Store(t, fp)
}

func fingerprintOf(t *mcp.Tool) string {
	_, fp, err := ToolDefinition(t)
	if err != nil {
		return ""
	}
	return fp
}

// loadPins reads the stored pins, when the store keeps them.
func (a *Agent) loadPins(ctx context.Context) error {
	servers := map[string]map[string]*store.Pin{}
	if ps, ok := a.st.(store.PinStore); ok {
		list, err := ps.ListPins(ctx, a.ns)
		if err != nil {
			return err
		}
		for i := range list {
			p := &list[i]
			if servers[p.ServerID] == nil {
				servers[p.ServerID] = map[string]*store.Pin{}
			}
			servers[p.ServerID][p.Tool] = p
		}
	}
	a.pins.mu.Lock()
	a.pins.servers = servers
	a.pins.mu.Unlock()
	return nil
}

// pinRules returns the reactions for serverID.
func (a *Agent) pinRules(serverID string) policy.PinRules {
	return a.pol.cur.Load().Pins.For(serverID)
}

// pinBlocked reports whether the pins keep tool t of serverID out, and the
// pin's state when they do.
// fp gives t's fingerprint (fingerprintOf, or agentPins.fingerprint for
// a catalog's definition); it is asked only when needed.
func (a *Agent) pinBlocked(serverID string, t *mcp.Tool, fp func(*mcp.Tool) string) (string, bool) {
	a.pins.mu.Lock()
	recs := a.pins.servers[serverID]
	if len(recs) == 0 {
		a.pins.mu.Unlock()
		return "", false // never listed: the first listing pins it
	}
	rec, ok := recs[t.Name]
	var state, pinned string
	if ok {
		state, pinned = rec.State, rec.Fingerprint
	}
	a.pins.mu.Unlock()
	rules := a.pinRules(serverID)
	switch {
	case !ok:
		return store.PinNew, rules.New == policy.HoldNew
	case state == store.PinRejected:
		return state, true
	case fp(t) != pinned:
		return store.PinChanged, rules.Changed == policy.Block
	case state == store.PinNew:
		return state, rules.New == policy.HoldNew
	}
	return state, false
}

// CheckPin returns an error wrapping ErrToolChanged (a *ToolChangedError)
// when the agent's pins keep tool name of serverID out, nil otherwise:
// what CallTool checks first. A server restored by Open (after a restart
// or a wake) is waited for (while ctx lasts), so that its catalog is
// compared with the pins before a call goes out; a server whose restore
// did not list its tools (its catalog still the stored, stale one) is
// asked for them first (Manager.DiscoverIfConnected), and when it cannot
// list them the call is refused with an error wrapping
// mcpclient.ErrNotConnected rather than sent unchecked; when the catalog
// lacks the tool, the stored state of its pin decides.
func (a *Agent) CheckPin(ctx context.Context, serverID, name string) error {
	a.pins.mu.Lock()
	pinned := len(a.pins.servers[serverID]) > 0
	a.pins.mu.Unlock()
	if !pinned {
		return nil // never listed: the first listing pins it
	}
	t, stale, ok := a.m.ToolDefinition(serverID, name)
	if !ok || stale {
		// A stale entry is the stored catalog of a server not listed
		// since the wake: the definition it had, not the one it has now.
		a.WaitRestored(ctx, serverID)
		t, stale, ok = a.m.ToolDefinition(serverID, name)
	}
	if !ok || stale {
		if cat, found := a.m.Catalog(serverID); found && (stale || !cat.Known || cat.Stale) {
			// Its restore did not list the server's tools (the listing
			// failed): list them now, else the call would go out checked
			// against nothing newer than the pin itself. A server that
			// cannot list them is not called.
			if _, err := a.m.DiscoverIfConnected(ctx, serverID, nil); err != nil {
				return err
			}
			if t, stale, ok = a.m.ToolDefinition(serverID, name); stale || !ok {
				if cat, _ := a.m.Catalog(serverID); !cat.Known || cat.Stale {
					return fmt.Errorf("tool %q of MCP server %q: its tools could not be listed to check it against its pin: %w",
						name, serverID, mcpclient.ErrNotConnected)
				}
			}
		}
	}
	if ok && !stale {
		if state, blocked := a.pinBlocked(serverID, t, a.pins.fingerprint); blocked {
			// The listing that blocks the call may not be compared with
			// the pins yet (notePins hears of it on the Manager's event
			// queue): compare it now, so that the pins say why the call
			// was refused as soon as it is (Pins, GET .../pins).
			a.pinListed(serverID)
			return &ToolChangedError{ServerID: serverID, Tool: name, State: state}
		}
		return nil
	}
	a.pins.mu.Lock()
	rec, ok := a.pins.servers[serverID][name]
	var p store.Pin
	if ok {
		p = *rec
	}
	a.pins.mu.Unlock()
	if ok && a.toolPin(p).Blocked {
		return &ToolChangedError{ServerID: serverID, Tool: name, State: p.State}
	}
	return nil
}

// notePins is a Manager listener: a server's listed tools are compared
// with its pins.
func (a *Agent) notePins(ev mcpclient.Event) {
	switch {
	case ev.Kind == mcpclient.EventToolsChanged:
	case ev.Kind == mcpclient.EventStateChanged && ev.State == mcpclient.StateReady:
	default:
		return
	}
	a.mu.Lock()
	_, stored := a.rows[ev.ServerID]
	closed := a.closed
	a.mu.Unlock()
	if !stored || closed {
		return
	}
	a.pinListed(ev.ServerID)
}

// pinListed compares the tools a ready server lists with its pins (a
// server not ready has no catalog to compare).
func (a *Agent) pinListed(serverID string) {
	if info, ok := a.m.Server(serverID); !ok || info.State != mcpclient.StateReady {
		return
	}
	a.reconcilePins(serverID)
}

// listing returns the tools server serverID lists: its catalog's, unless
// it has none or only the stale one stored before a restart, which says
// what the server listed then, not now.
func (a *Agent) listing(serverID string) ([]*mcp.Tool, bool) {
	cat, ok := a.m.Catalog(serverID)
	if !ok || !cat.Known || cat.Stale {
		return nil, false
	}
	return cat.Tools, true
}

// reconcilePins compares the tools server serverID lists with its pins,
// updates them, and queues their writes. The listing is read under
// pins.mu, so that of two reconciliations running at once the later one
// compares the newer listing.
func (a *Agent) reconcilePins(serverID string) {
	// Fingerprint the listing before taking the lock (once per definition:
	// the catalog's definitions are shared, and so is their fingerprint
	// with pinBlocked's).
	if tools, ok := a.listing(serverID); ok {
		for _, t := range tools {
			a.pins.fingerprint(t)
		}
	}
	rules := a.pinRules(serverID)
	now := a.now()
	type change struct{ tool, state, reaction string }
	var (
		dirty   []string
		changes []change
	)
	a.pins.mu.Lock()
	tools, ok := a.listing(serverID)
	if !ok {
		a.pins.mu.Unlock()
		return
	}
	recs := a.pins.servers[serverID]
	first := len(recs) == 0
	if recs == nil {
		recs = map[string]*store.Pin{}
		a.pins.servers[serverID] = recs
	}
	listed := map[string]bool{}
	for _, t := range tools {
		fp := a.pins.fingerprint(t)
		if fp == "" {
			_, _, err := ToolDefinition(t)
			a.logger.Warn("cannot pin a tool", "server", serverID, "tool", t.Name, "error", err)
			continue
		}
		// definition is t's pinned form, needed only when a pin changes.
		definition := func() json.RawMessage {
			def, _, _ := ToolDefinition(t)
			return def
		}
		listed[t.Name] = true
		rec, ok := recs[t.Name]
		switch {
		case !ok:
			state := store.PinPinned
			if !first {
				state = store.PinNew
				changes = append(changes, change{t.Name, state, string(rules.New)})
			}
			recs[t.Name] = &store.Pin{Namespace: a.ns, ServerID: serverID, Tool: t.Name, State: state,
				Fingerprint: fp, Definition: definition(), PinnedAt: now, ChangedAt: now}
		case fp == rec.Fingerprint:
			if rec.State != store.PinChanged && rec.State != store.PinRemoved {
				continue
			}
			rec.State, rec.Seen, rec.SeenFingerprint, rec.ChangedAt = store.PinPinned, nil, "", now
		case fp == rec.SeenFingerprint && (rec.State == store.PinChanged || rec.State == store.PinRejected):
			continue // seen already
		case rules.Changed == policy.Accept && rec.State != store.PinRejected:
			if rec.State != store.PinNew {
				rec.State = store.PinPinned
			}
			rec.Fingerprint, rec.Definition, rec.Seen, rec.SeenFingerprint = fp, definition(), nil, ""
			rec.PinnedAt, rec.ChangedAt = now, now
			changes = append(changes, change{t.Name, store.PinChanged, string(rules.Changed)})
		default:
			if rec.State != store.PinRejected {
				rec.State = store.PinChanged
			}
			rec.Seen, rec.SeenFingerprint, rec.ChangedAt = definition(), fp, now
			changes = append(changes, change{t.Name, store.PinChanged, string(rules.Changed)})
		}
		dirty = append(dirty, t.Name)
	}
	for name, rec := range recs {
		if !listed[name] && rec.State != store.PinRemoved {
			rec.State, rec.ChangedAt = store.PinRemoved, now
			dirty = append(dirty, name)
			changes = append(changes, change{name, store.PinRemoved, ""})
		}
	}
	a.pins.mu.Unlock()
	if len(dirty) == 0 {
		return
	}
	for _, c := range changes {
		attrs := []attribute.KeyValue{attribute.String("state", c.state)}
		if c.reaction != "" {
			attrs = append(attrs, attribute.String("reaction", c.reaction))
		}
		a.pins.changes.Add(context.Background(), 1, metric.WithAttributes(attrs...))
		a.audit.pinDecision("", "", serverID, c.tool, c.state, c.reaction) // audit.go
		a.logger.Warn("a tool's definition differs from its pin", "server", serverID, "tool", c.tool, "state", c.state, "reaction", c.reaction)
	}
	for _, name := range dirty {
		a.writes.put("pin:"+serverID+"\x00"+name, func(ctx context.Context) { a.savePin(ctx, serverID, name) })
	}
	a.pins.gen.Add(1)
	a.updates.stateChanged()
}

// savePin writes the pin of name of serverID as it is in memory now.
func (a *Agent) savePin(ctx context.Context, serverID, name string) {
	ps, ok := a.st.(store.PinStore)
	if !ok {
		return
	}
	a.pins.mu.Lock()
	rec, ok := a.pins.servers[serverID][name]
	var p store.Pin
	if ok {
		p = *rec
	}
	a.pins.mu.Unlock()
	if !ok {
		return
	}
	if err := ps.PutPin(ctx, p); err != nil {
		a.logger.Warn("cannot store a tool's pin", "server", serverID, "tool", name, "error", err)
		return
	}
	// A remove (or a rename) that dropped the server's pins while this
	// write was on its way may have deleted the stored ones before it
	// landed: delete them again, so that a removed server's pin never
	// comes back.
	a.pins.mu.Lock()
	_, kept := a.pins.servers[serverID]
	a.pins.mu.Unlock()
	if !kept {
		if err := ps.DeletePins(ctx, a.ns, serverID); err != nil {
			a.logger.Warn("cannot delete a removed server's pins", "server", serverID, "error", err)
		}
	}
}

// forgetPins drops the pins of a server removed: from memory first, so
// that a pin write queued before (savePin) deletes them again if it lands
// after the store's delete.
func (a *Agent) forgetPins(ctx context.Context, serverID string) error {
	a.pins.mu.Lock()
	delete(a.pins.servers, serverID)
	a.pins.mu.Unlock()
	a.pins.gen.Add(1)
	if ps, ok := a.st.(store.PinStore); ok {
		return ps.DeletePins(ctx, a.ns, serverID)
	}
	return nil
}

// renamePins moves the pins of server oldID to newID in memory, as the
// store's RenameServer moved the stored ones (a migration from a
// generated id to a stable one), once the Manager knows the server under
// newID only. A write queued under the old id before (the pins of its
// first listing) is made, then deleted: no pin is left under the old id.
func (a *Agent) renamePins(ctx context.Context, oldID, newID string) {
	a.pins.mu.Lock()
	recs, ok := a.pins.servers[oldID]
	delete(a.pins.servers, oldID)
	var names []string
	if ok {
		for name, rec := range recs {
			rec.ServerID = newID
			names = append(names, name)
		}
		a.pins.servers[newID] = recs
	}
	a.pins.mu.Unlock()
	a.pins.gen.Add(1)
	a.writes.flush(ctx)
	if ps, ok := a.st.(store.PinStore); ok {
		if err := ps.DeletePins(ctx, a.ns, oldID); err != nil {
			a.logger.Warn("cannot delete the pins left under a server's old id", "server", oldID, "error", err)
		}
	}
	for _, name := range names { // the moved ones, as they are now
		a.writes.put("pin:"+newID+"\x00"+name, func(ctx context.Context) { a.savePin(ctx, newID, name) })
	}
}

// Pins returns the agent's pinned tools: those changed, new or rejected
// first (with their diffs), then removed ones, then the others, each group
// by server id and tool name.
func (a *Agent) Pins() []ToolPin {
	a.pins.mu.Lock()
	var recs []store.Pin
	for _, server := range a.pins.servers {
		for _, rec := range server {
			recs = append(recs, *rec)
		}
	}
	a.pins.mu.Unlock()
	out := make([]ToolPin, 0, len(recs))
	for _, rec := range recs {
		out = append(out, a.toolPin(rec))
	}
	rank := func(state string) int {
		switch state {
		case store.PinChanged, store.PinNew, store.PinRejected:
			return 0
		case store.PinRemoved:
			return 1
		}
		return 2
	}
	slices.SortFunc(out, func(x, y ToolPin) int {
		if d := rank(x.State) - rank(y.State); d != 0 {
			return d
		}
		if x.ServerID != y.ServerID {
			return strings.Compare(x.ServerID, y.ServerID)
		}
		return strings.Compare(x.Tool, y.Tool)
	})
	return out
}

// toolPin is rec as shown.
func (a *Agent) toolPin(rec store.Pin) ToolPin {
	tp := ToolPin{ServerID: rec.ServerID, Tool: rec.Tool, State: rec.State, Fingerprint: rec.Fingerprint,
		Definition: rec.Definition, SeenFingerprint: rec.SeenFingerprint, Seen: rec.Seen,
		PinnedAt: rec.PinnedAt.UTC().Format(timeFormat), ChangedAt: rec.ChangedAt.UTC().Format(timeFormat)}
	rules := a.pinRules(rec.ServerID)
	switch rec.State {
	case store.PinRejected:
		tp.Blocked = true
	case store.PinChanged:
		tp.Blocked = rules.Changed == policy.Block
	case store.PinNew:
		tp.Blocked = rules.New == policy.HoldNew
	}
	if len(rec.Seen) > 0 {
		tp.Diff = diffDefinitions(rec.Definition, rec.Seen)
	}
	return tp
}

const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// diffDefinitions lists the fields of two pinned definitions that differ.
func diffDefinitions(old, new json.RawMessage) []PinChange {
	decode := func(raw json.RawMessage) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		_ = json.Unmarshal(raw, &m)
		return m
	}
	text := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	o, n := decode(old), decode(new)
	var out []PinChange
	for _, f := range pinFields {
		if !bytes.Equal(o[f], n[f]) {
			out = append(out, PinChange{Field: f, Old: text(o[f]), New: text(n[f])})
		}
	}
	return out
}

// DecidePin answers for a tool of serverID whose pin is changed, new or
// rejected: PinAccept pins the definition the server lists now (or, for a
// new tool, the one it was first listed with) and lets it through;
// PinReject keeps it out, whatever the reaction, until accepted or the
// server removed. The decision is stored before it is applied, then the
// pin is written again as applied (after any write of it queued earlier)
// and compared with the server's current listing: a definition listed
// since the one decided on is a change again. It returns the pin as it
// is now; an error wrapping ErrUnknownPin for a tool without
// a pin, ErrPinsUnsupported when the store keeps none, or ErrStorage.
// The decider ctx carries (WithDecider) is named in the decision's audit
// record; an invalid one gives an error wrapping ErrInvalidDecider.
func (a *Agent) DecidePin(ctx context.Context, serverID, tool, decision string) (ToolPin, error) {
	if decision != PinAccept && decision != PinReject {
		return ToolPin{}, fmt.Errorf("agent %s: pin decision %q: want %q or %q", a.ns, decision, PinAccept, PinReject)
	}
	if err := CheckDecider(DeciderOf(ctx)); err != nil {
		return ToolPin{}, fmt.Errorf("agent %s: pin decision: %w", a.ns, err)
	}
	ps, ok := a.st.(store.PinStore)
	if !ok {
		return ToolPin{}, fmt.Errorf("agent %s: %w", a.ns, ErrPinsUnsupported)
	}
	a.pins.mu.Lock()
	rec, ok := a.pins.servers[serverID][tool]
	var seen store.Pin
	if ok {
		seen = *rec
	}
	a.pins.mu.Unlock()
	if !ok {
		return ToolPin{}, fmt.Errorf("agent %s: tool %q of MCP server %q: %w", a.ns, tool, serverID, ErrUnknownPin)
	}
	now := a.now()
	next := decidePin(seen, seen, decision, now)
	if err := ps.PutPin(ctx, next); err != nil {
		return ToolPin{}, fmt.Errorf("agent %s: %s tool %q of MCP server %q: %w: %w", a.ns, decision, tool, serverID, ErrStorage, err)
	}
	// Apply the decision to the pin as it is now: a listing compared
	// since it was read is kept (the definition accepted is the one the
	// decision was made on, seen).
	a.pins.mu.Lock()
	if cur, ok := a.pins.servers[serverID][tool]; ok {
		*cur = decidePin(*cur, seen, decision, now)
		next = *cur
	}
	a.pins.mu.Unlock()
	// Write the pin again as it is in memory, after any write of it
	// queued before the decision (reconcilePins's savePin) that read it
	// before it was applied: such a write, made after the one above,
	// would leave the store with the pin as it was before the decision.
	a.writes.put("pin:"+serverID+"\x00"+tool, func(ctx context.Context) { a.savePin(ctx, serverID, tool) })
	a.pins.gen.Add(1)
	a.pins.decisions.Add(ctx, 1, metric.WithAttributes(attribute.String("decision", decision)))
	a.audit.pinDecision(string(CallerOf(ctx)), DeciderOf(ctx), serverID, tool, decision, "") // audit.go
	a.logger.Info("pin decided", "server", serverID, "tool", tool, "decision", decision)
	a.updates.stateChanged()
	// Compare the decided pin with what the server lists now (a listing
	// that came since the decision was made on seen is a change again).
	a.pinListed(serverID)
	a.pins.mu.Lock()
	if cur, ok := a.pins.servers[serverID][tool]; ok {
		next = *cur
	}
	a.pins.mu.Unlock()
	return a.toolPin(next), nil
}

// decidePin returns pin p with decision applied, where seen is the pin
// the decision was made on: PinAccept pins seen's listed definition (its
// Seen, else its pinned one), PinReject rejects.
func decidePin(p, seen store.Pin, decision string, now time.Time) store.Pin {
	switch decision {
	case PinAccept:
		if len(seen.Seen) > 0 {
			p.Definition, p.Fingerprint, p.PinnedAt = seen.Seen, seen.SeenFingerprint, now
		} else if p.Fingerprint != seen.Fingerprint {
			p.Definition, p.Fingerprint, p.PinnedAt = seen.Definition, seen.Fingerprint, now
		}
		p.Seen, p.SeenFingerprint = nil, ""
		if p.State != store.PinRemoved {
			p.State = store.PinPinned
		}
	case PinReject:
		p.State = store.PinRejected
	}
	p.ChangedAt = now
	return p
}

// pinAlerts returns the pins that are not plainly pinned (changed, new,
// rejected, removed), for the agent's state.
func (a *Agent) pinAlerts() []ToolPin {
	all := a.Pins()
	return slices.DeleteFunc(all, func(p ToolPin) bool { return p.State == store.PinPinned })
}

// fencedStore keeps store.PinStore visible through the wrapper and fences
// its writes; a store without it gets ErrPinsUnsupported for writes and
// no pins.
var _ store.PinStore = (*fencedStore)(nil)

func (s *fencedStore) PutPin(ctx context.Context, p store.Pin) error {
	ps, ok := s.Store.(store.PinStore)
	if !ok {
		return ErrPinsUnsupported
	}
	return s.check(ps.PutPin(s.ctx(ctx), p))
}

func (s *fencedStore) ListPins(ctx context.Context, ns string) ([]store.Pin, error) {
	ps, ok := s.Store.(store.PinStore)
	if !ok {
		return []store.Pin{}, nil
	}
	return ps.ListPins(ctx, ns)
}

func (s *fencedStore) DeletePins(ctx context.Context, ns, serverID string) error {
	ps, ok := s.Store.(store.PinStore)
	if !ok {
		return nil
	}
	return s.check(ps.DeletePins(s.ctx(ctx), ns, serverID))
}
