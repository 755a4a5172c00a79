package codec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentmcp/agentmcp/store"
)

// catalogRecord is what a catalog row stores as JSON besides its key.
type catalogRecord struct {
	Tools             json.RawMessage `json:"tools,omitempty"`
	Prompts           json.RawMessage `json:"prompts,omitempty"`
	Resources         json.RawMessage `json:"resources,omitempty"`
	ResourceTemplates json.RawMessage `json:"resourceTemplates,omitempty"`
}

// EncodeCatalog checks c's key and returns its JSON record, refusing one
// over store.MaxCatalogBytes or holding a list that is not a JSON array.
func EncodeCatalog(c store.Catalog) ([]byte, error) {
	if err := CheckScope(c.Namespace, c.ServerID); err != nil {
		return nil, err
	}
	for _, l := range []json.RawMessage{c.Tools, c.Prompts, c.Resources, c.ResourceTemplates} {
		// Marshal below checks that it is JSON.
		if t := bytes.TrimSpace(l); l != nil && (len(t) == 0 || t[0] != '[') {
			return nil, fmt.Errorf("a catalog list is not a JSON array")
		}
	}
	b, err := json.Marshal(catalogRecord{Tools: c.Tools, Prompts: c.Prompts, Resources: c.Resources, ResourceTemplates: c.ResourceTemplates})
	if err != nil {
		return nil, err
	}
	if len(b) > store.MaxCatalogBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", store.ErrCatalogTooLarge, len(b), store.MaxCatalogBytes)
	}
	return b, nil
}

// DecodeCatalog fills c's lists from its JSON record.
func DecodeCatalog(data []byte, c *store.Catalog) error {
	var r catalogRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	c.Tools, c.Prompts, c.Resources, c.ResourceTemplates = r.Tools, r.Prompts, r.Resources, r.ResourceTemplates
	return nil
}
