package codec

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmcp/agentmcp/store"
)

var errNotArray = errors.New("a catalog list is not a JSON array")

// CheckCatalog checks c's key and lists: each nil or a JSON array, all
// together at most store.MaxCatalogBytes.
func CheckCatalog(c store.Catalog) error {
	if err := CheckScope(c.Namespace, c.ServerID); err != nil {
		return err
	}
	n := 0
	for _, l := range CatalogLists(c) {
		if l == nil {
			continue
		}
		n += len(l)
		if t := bytes.TrimSpace(l); len(t) == 0 || t[0] != '[' || !json.Valid(t) {
			return errNotArray
		}
		if !text(string(l)) {
			return errBadText
		}
	}
	if n > store.MaxCatalogBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", store.ErrCatalogTooLarge, n, store.MaxCatalogBytes)
	}
	return nil
}

// CatalogLists returns c's lists in the order of their columns (tools,
// prompts, resources, resource templates).
func CatalogLists(c store.Catalog) []json.RawMessage {
	return []json.RawMessage{c.Tools, c.Prompts, c.Resources, c.ResourceTemplates}
}

// CatalogColumn is a list as a nullable text column.
func CatalogColumn(l json.RawMessage) sql.NullString {
	return sql.NullString{String: string(l), Valid: l != nil}
}

// CatalogList is a nullable text column as a list.
func CatalogList(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}
