package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Catalog is what one MCP server of an agent listed the last time the
// agent asked: its tools, prompts, resources and resource templates, each
// a JSON array of the MCP definitions as the server sent them (nil when
// the server advertises no such list). An agent woken or restored from
// the store offers them at once, marked stale, until its server answers
// again.
type Catalog struct {
	// Namespace is the agent and ServerID the server: the row's key.
	Namespace string
	ServerID  string
	// The lists, as JSON arrays.
	Tools             json.RawMessage
	Prompts           json.RawMessage
	Resources         json.RawMessage
	ResourceTemplates json.RawMessage
	// UpdatedAt is when the row was last written, set by the store (UTC,
	// microsecond precision); PutCatalog ignores the value it is given.
	UpdatedAt time.Time
}

// MaxCatalogBytes bounds the JSON of one stored catalog (its four lists
// together): PutCatalog refuses a larger one with ErrCatalogTooLarge.
const MaxCatalogBytes = 4 << 20

// ErrCatalogTooLarge is wrapped by the error PutCatalog returns for a
// catalog over MaxCatalogBytes. Nothing is written.
var ErrCatalogTooLarge = errors.New("store: catalog too large")

// CatalogStore is implemented by stores that keep the last catalog of
// each of an agent's servers (store/sqlite and store/postgres do). A
// catalog's lists are stored as readable JSON, as task results are:
// it is what the server publishes to whoever may call it, not a
// credential. Catalogs live apart from the server rows: the agent deletes
// a server's catalog when it removes the server, and ignores catalogs of
// ids it has no row for.
type CatalogStore interface {
	// PutCatalog stores c, replacing the catalog of the same (Namespace,
	// ServerID). Under a Fence of the namespace (WithFence) it is fenced
	// as the server writes are.
	PutCatalog(ctx context.Context, c Catalog) error
	// ListCatalogs returns the catalogs of namespace ns, in no particular
	// order; an empty slice when there are none.
	ListCatalogs(ctx context.Context, ns string) ([]Catalog, error)
	// DeleteCatalog deletes one catalog; an unknown one is not an error.
	DeleteCatalog(ctx context.Context, ns, serverID string) error
}
