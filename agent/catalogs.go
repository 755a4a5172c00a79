package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"sync"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalogs that survive sleep: each server's last tools, prompts and
// resources lists are kept with the agent (store.CatalogStore), written
// when a discovery or a list_changed refresh changes them, so that a woken
// or restored agent offers them at once (ListTools, AITools, the gateway),
// marked stale until its server lists them again.

// catalogState is the agent's part in storing catalogs.
type catalogState struct {
	// mu guards hashes: the hashes of the catalogs last stored (or read
	// at Open), by server id, so that an unchanged catalog is not written
	// again.
	mu     sync.Mutex
	hashes map[string][sha256.Size]byte
}

// catalogStore returns the agent's store as a CatalogStore, if it is one.
func (a *Agent) catalogStore() (store.CatalogStore, bool) {
	cs, ok := a.st.(store.CatalogStore)
	return cs, ok
}

// loadCatalogs reads the stored catalogs of the agent's servers, as the
// Manager takes them. A catalog that cannot be read or decoded is left
// out: its server starts with none, as before catalogs were stored.
func (a *Agent) loadCatalogs(ctx context.Context) map[string]*mcpclient.Catalog {
	cs, ok := a.catalogStore()
	if !ok || a.opts.NoStoredCatalogs {
		return nil
	}
	stored, err := cs.ListCatalogs(ctx, a.ns)
	if err != nil {
		a.logger.Warn("cannot read the stored catalogs; the servers' lists come with their connections", "error", err)
		return nil
	}
	out := make(map[string]*mcpclient.Catalog, len(stored))
	hashes := make(map[string][sha256.Size]byte, len(stored))
	for _, sc := range stored {
		if _, ok := a.rows[sc.ServerID]; !ok {
			continue // left by a remove that did not finish
		}
		cat := &mcpclient.Catalog{}
		var fps []storedFingerprint
		known := func(t *mcp.Tool, fp string) { fps = append(fps, storedFingerprint{t, fp}) }
		err := errors.Join(decodeTools(sc.Tools, &cat.Tools, known), decodeList(sc.Prompts, &cat.Prompts),
			decodeList(sc.Resources, &cat.Resources), decodeList(sc.ResourceTemplates, &cat.ResourceTemplates))
		if err != nil {
			a.logger.Warn("cannot decode a stored catalog", "server", sc.ServerID, "error", err)
			continue
		}
		for _, f := range fps {
			a.pins.knownFingerprint(f.t, f.fp) // pins.go
		}
		out[sc.ServerID] = cat
		hashes[sc.ServerID] = catalogHash(sc)
	}
	a.cats.mu.Lock()
	a.cats.hashes = hashes
	a.cats.mu.Unlock()
	return out
}

// storedTool decodes a stored tool with its schemas left as JSON, which
// the Manager and aitools take as they are: decoding them to maps here
// only for aitools to marshal them again (to hash them) would double a
// wake's work. Fingerprint is the fingerprint of the definition (see
// ToolDefinition), stored with it (storedToolOut) so that a woken agent
// checks the stored definitions against its pins without computing
// them again; a catalog stored without them has them computed when
// needed.
type storedTool struct {
	*mcp.Tool
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Fingerprint  string          `json:"agentmcpFingerprint,omitempty"`
}

// storedFingerprint is a stored definition's stored fingerprint.
type storedFingerprint struct {
	t  *mcp.Tool
	fp string
}

// storedToolOut is a tool as stored: its definition, and the fingerprint
// of that definition.
type storedToolOut struct {
	*mcp.Tool
	Fingerprint string `json:"agentmcpFingerprint,omitempty"`
}

// decodeTools decodes a stored list of tools; known is told each
// definition's stored fingerprint.
func decodeTools(raw json.RawMessage, dst *[]*mcp.Tool, known func(t *mcp.Tool, fp string)) error {
	var tools []storedTool
	if err := decodeList(raw, &tools); err != nil {
		return err
	}
	if tools == nil {
		return nil
	}
	*dst = make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if t.Tool == nil {
			continue
		}
		if t.InputSchema != nil {
			t.Tool.InputSchema = t.InputSchema
		}
		if t.OutputSchema != nil {
			t.Tool.OutputSchema = t.OutputSchema
		}
		if t.Fingerprint != "" {
			known(t.Tool, t.Fingerprint)
		}
		*dst = append(*dst, t.Tool)
	}
	return nil
}

// encodeTools encodes a list of tools for storing, each with its
// fingerprint when fp is not nil.
func encodeTools(tools []*mcp.Tool, fp func(*mcp.Tool) string, dst *json.RawMessage) error {
	if tools == nil {
		return nil
	}
	out := make([]storedToolOut, len(tools))
	for i, t := range tools {
		out[i].Tool = t
		if fp != nil {
			out[i].Fingerprint = fp(t)
		}
	}
	b, err := json.Marshal(out)
	*dst = b
	return err
}

func decodeList[T any](raw json.RawMessage, dst *[]T) error {
	if raw == nil {
		return nil
	}
	return json.Unmarshal(raw, dst)
}

// catalogHash hashes a stored catalog's lists.
func catalogHash(c store.Catalog) [sha256.Size]byte {
	h := sha256.New()
	for _, l := range []json.RawMessage{c.Tools, c.Prompts, c.Resources, c.ResourceTemplates} {
		h.Write(l)
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// noteCatalog queues the write of a server's catalog when a discovery or
// a refresh changed it. It is a Manager listener.
func (a *Agent) noteCatalog(ev mcpclient.Event) {
	switch ev.Kind {
	case mcpclient.EventStateChanged:
		if ev.State != mcpclient.StateReady {
			return
		}
	case mcpclient.EventToolsChanged, mcpclient.EventPromptsChanged, mcpclient.EventResourcesChanged:
	default:
		return
	}
	if _, ok := a.catalogStore(); !ok || a.opts.NoStoredCatalogs {
		return
	}
	a.mu.Lock()
	closing := a.closed
	a.mu.Unlock()
	if closing {
		return
	}
	id := ev.ServerID
	a.writes.put("catalog:"+id, func(ctx context.Context) { a.saveCatalog(ctx, id) })
}

// saveCatalog stores the catalog the Manager holds for server id, unless
// it is the one stored already, stale, or the server is no longer stored.
// A catalog over store.MaxCatalogBytes is not stored, and the older one
// is deleted: a stale list must never outlive a newer one.
func (a *Agent) saveCatalog(ctx context.Context, id string) {
	cs, ok := a.catalogStore()
	if !ok {
		return
	}
	a.mu.Lock()
	_, stored := a.rows[id]
	a.mu.Unlock()
	cat, ok := a.m.Catalog(id)
	if !stored || !ok || !cat.Known || cat.Stale {
		return
	}
	sc := store.Catalog{Namespace: a.ns, ServerID: id}
	var fp func(*mcp.Tool) string
	if _, ok := a.st.(store.PinStore); ok {
		fp = a.pins.fingerprint // pins.go
	}
	err := errors.Join(encodeTools(cat.Tools, fp, &sc.Tools), encodeList(cat.Prompts, &sc.Prompts),
		encodeList(cat.Resources, &sc.Resources), encodeList(cat.ResourceTemplates, &sc.ResourceTemplates))
	if err != nil {
		a.logger.Warn("cannot encode a server's catalog", "server", id, "error", err)
		return
	}
	sum := catalogHash(sc)
	a.cats.mu.Lock()
	same := a.cats.hashes != nil && a.cats.hashes[id] == sum
	a.cats.mu.Unlock()
	if same {
		return
	}
	err = cs.PutCatalog(ctx, sc)
	if errors.Is(err, store.ErrCatalogTooLarge) {
		a.logger.Info("a server's catalog is too large to be kept with the agent; after a wake its lists come with its connection", "server", id, "error", err)
		err = cs.DeleteCatalog(ctx, a.ns, id)
		sum = [sha256.Size]byte{}
	}
	if err != nil {
		a.logger.Warn("cannot store a server's catalog", "server", id, "error", err)
		return
	}
	a.cats.mu.Lock()
	if a.cats.hashes == nil {
		a.cats.hashes = map[string][sha256.Size]byte{}
	}
	a.cats.hashes[id] = sum
	a.cats.mu.Unlock()
}

func encodeList[T any](items []*T, dst *json.RawMessage) error {
	if items == nil {
		return nil
	}
	b, err := json.Marshal(items)
	*dst = b
	return err
}

// forgetCatalog queues the delete of a server's stored catalog (replacing
// a write of it not made yet).
func (a *Agent) forgetCatalog(id string) {
	cs, ok := a.catalogStore()
	if !ok {
		return
	}
	a.writes.put("catalog:"+id, func(ctx context.Context) {
		if err := cs.DeleteCatalog(ctx, a.ns, id); err != nil {
			a.logger.Warn("cannot delete a server's stored catalog", "server", id, "error", err)
			return
		}
		a.cats.mu.Lock()
		delete(a.cats.hashes, id)
		a.cats.mu.Unlock()
	})
}

// WaitCatalogs waits, as WaitRestored does, for the servers ids (all when
// none is given) that Open restored, but only for those whose lists the
// agent does not hold yet: a server restored with its stored catalog is
// listed at once (its entries stale), and one being restored without is
// waited for until its first connection attempt settles, or ctx is done.
func (a *Agent) WaitCatalogs(ctx context.Context, ids ...string) {
	a.mu.Lock()
	if len(ids) == 0 {
		for id := range a.restoring {
			ids = append(ids, id)
		}
	}
	var wait []string
	for _, id := range ids {
		if _, ok := a.restoring[id]; ok {
			wait = append(wait, id)
		}
	}
	a.mu.Unlock()
	var missing []string
	for _, id := range wait {
		if cat, ok := a.m.Catalog(id); !ok || !cat.Known {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		a.WaitRestored(ctx, missing...)
	}
}
