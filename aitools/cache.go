package aitools

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPTool is a tool definition as an MCP server listed it, with the id of
// that server.
type MCPTool struct {
	ServerID string
	// Def is the definition. It is shared with the ToolSets built from it
	// and must not be modified once passed to Build: the Cache recognises
	// an unchanged definition by its pointer.
	Def *mcp.Tool
	// Stale marks a definition from a catalog stored before a restart
	// that the server has not confirmed yet (see Tool.Stale).
	Stale bool
}

// A Caller calls a tool on a server's current connection. It is how a
// ToolSet reaches servers: for a mcpclient.Manager, its CallTool. It must
// be safe for concurrent use. A tool failure is a result with IsError
// set; an error means the call did not complete.
type Caller func(ctx context.Context, serverID, name string, args map[string]any) (*mcp.CallToolResult, error)

// CacheOptions configures a Cache. The zero value, or nil, gives the
// defaults each field documents.
type CacheOptions struct {
	// Logger receives a warning for each schema that cannot be compiled
	// (once per schema version). Nil discards.
	Logger *slog.Logger

	// MaxSchemaBytes caps the size of an input schema that is compiled for
	// validation; a larger one is not enforced client side. Zero means
	// 1 MiB; negative means no cap.
	MaxSchemaBytes int

	// MaxArgumentBytes caps the size of the arguments of one call; larger
	// arguments are refused with an [*ArgumentsError]. Zero means 1 MiB;
	// negative means no cap.
	MaxArgumentBytes int
}

// config is what Tools need from their Cache.
type config struct {
	logger           *slog.Logger
	maxSchemaBytes   int
	maxArgumentBytes int

	compiles atomic.Int64
}

// A Cache turns MCP tool catalogs into ToolSets, keeping what it derived
// from each tool (its schemas, their validators, its key) while the tool
// is unchanged. It is safe for concurrent use.
type Cache struct {
	call Caller
	cfg  *config

	// mu guards the fields below. It is held while a ToolSet is built: no
	// I/O and no callbacks happen then.
	mu      sync.Mutex
	entries map[ident]*entry
	gen     uint64    // Build generation
	last    *ToolSet  // the last ToolSet built
	lastIn  []MCPTool // what it was built from
	stats   CacheStats
}

// ident is a tool's identity.
type ident struct{ serverID, name string }

// entry is what the Cache keeps about one tool.
type entry struct {
	def      *mcp.Tool // the definition the schemas below were taken from
	key      keyItem
	assigned string  // the key the last Build gave it
	in, out  *schema // out is nil when the tool declares no output schema
	gen      uint64  // the last Build that saw this tool
}

// CacheStats counts a Cache's work, cumulatively.
type CacheStats struct {
	// Builds counts calls of Build; Rebuilds those that had to build a new
	// ToolSet because the catalog had changed.
	Builds, Rebuilds int64
	// SchemasHashed counts schemas marshalled and hashed because a tool's
	// definition was new or had been replaced.
	SchemasHashed int64
	// NewSchemas counts schema versions that were new (by content) and so
	// replaced what the Cache held for a tool.
	NewSchemas int64
	// Compiles counts validators compiled. Compiling is lazy: it happens on
	// a tool's first call after its input schema changed.
	Compiles int64
	// Entries is the number of tools the Cache holds now.
	Entries int
}

// NewCache returns a Cache whose ToolSets call tools through call. It does
// no I/O.
func NewCache(call Caller, opts *CacheOptions) *Cache {
	var o CacheOptions
	if opts != nil {
		o = *opts
	}
	cfg := &config{logger: o.Logger, maxSchemaBytes: o.MaxSchemaBytes, maxArgumentBytes: o.MaxArgumentBytes}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.maxSchemaBytes == 0 {
		cfg.maxSchemaBytes = 1 << 20
	}
	if cfg.maxArgumentBytes == 0 {
		cfg.maxArgumentBytes = 1 << 20
	}
	return &Cache{call: call, cfg: cfg, entries: map[ident]*entry{}}
}

// Build returns the ToolSet of tools, in their order. Entries with a nil
// Def are ignored.
//
// Pass the whole catalog, and narrow the result with [ToolSet.Select]:
// keys are assigned over tools (so a tool's key does not depend on a
// filter), and the Cache forgets every tool not in tools.
//
// When tools holds the same definitions as the previous call (the same
// pointers, in the same order), Build returns the previous ToolSet and
// does no work but that comparison. Otherwise it builds a new ToolSet,
// reusing everything derived from definitions it has seen: a replaced
// definition (a catalog refresh) is re-marshalled and hashed, and its
// schemas are decoded, and later recompiled, only if their bytes changed.
func (c *Cache) Build(tools []MCPTool) *ToolSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Builds++
	if c.last != nil && sameTools(c.lastIn, tools) {
		return c.last
	}
	c.stats.Rebuilds++
	c.gen++
	n := 0
	for _, t := range tools {
		if t.Def != nil {
			n++
		}
	}
	entries := make([]*entry, 0, n)
	stale := make([]bool, 0, n)
	// Keys depend only on the set of identities: when it is the previous
	// Build's, the keys are too.
	sameIdentities := c.last != nil && n == c.last.Len()
	for _, t := range tools {
		if t.Def == nil {
			continue
		}
		id := ident{t.ServerID, t.Def.Name}
		e := c.entries[id]
		switch {
		case e == nil:
			e = &entry{key: newKeyItem(t.ServerID, t.Def.Name)}
			c.entries[id] = e
			sameIdentities = false
		case e.gen == c.gen:
			// The same identity twice in one catalog (a server that lists a
			// name twice): the duplicate gets an entry of its own, not kept.
			e = &entry{key: e.key}
			sameIdentities = false
		case e.gen != c.gen-1:
			sameIdentities = false // not in the previous Build
		}
		if e.def != t.Def {
			c.refresh(e, t.Def)
		}
		e.gen = c.gen
		entries = append(entries, e)
		stale = append(stale, t.Stale)
	}
	if !sameIdentities {
		for id, e := range c.entries {
			if e.gen != c.gen {
				delete(c.entries, id)
			}
		}
	}

	set := &ToolSet{
		tools: make([]Tool, len(entries)),
		byKey: make(map[string]int, len(entries)),
	}
	if sameIdentities {
		set.collisions = c.last.collisions
	} else {
		items := make([]keyItem, len(entries))
		for i, e := range entries {
			items[i] = e.key
		}
		var keys []string
		keys, set.collisions = assignKeys(items)
		for i, e := range entries {
			e.assigned = keys[i]
		}
	}
	for i, e := range entries {
		set.tools[i] = e.tool(e.assigned, c.call, c.cfg)
		set.tools[i].Stale = stale[i]
		set.byKey[e.assigned] = i
	}
	c.last, c.lastIn = set, slices.Clone(tools)
	return set
}

// sameTools reports whether a and b hold the same definitions in the same
// order.
func sameTools(a, b []MCPTool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Def != b[i].Def || a[i].ServerID != b[i].ServerID || a[i].Stale != b[i].Stale {
			return false
		}
	}
	return true
}

// refresh takes e's schemas from def, reusing the ones whose bytes did
// not change.
func (c *Cache) refresh(e *entry, def *mcp.Tool) {
	e.def = def
	e.in = c.schemaFor(e.in, def.InputSchema, true)
	e.out = c.schemaFor(e.out, def.OutputSchema, false)
}

// schemaFor returns the schema for v, which is old when its bytes did not
// change.
func (c *Cache) schemaFor(old *schema, v any, input bool) *schema {
	if v == nil {
		if !input {
			return nil
		}
		v = emptyObjectInput
	}
	c.stats.SchemasHashed++
	raw, hash, err := marshalSchema(v)
	if err == nil && old != nil && old.err == nil && old.hash == hash {
		return old
	}
	c.stats.NewSchemas++
	if v == emptyObjectInput {
		v = nil // decode the bytes: a fresh map, owned by the schema
	}
	return newSchema(v, raw, hash, err)
}

// emptyObjectInput stands for an absent input schema.
const emptyObjectInput jsonRaw = emptyObjectSchema

type jsonRaw string

func (r jsonRaw) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// Stats returns counts of the work the Cache has done.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	s := c.stats
	s.Entries = len(c.entries)
	c.mu.Unlock()
	s.Compiles = c.cfg.compiles.Load()
	return s
}
