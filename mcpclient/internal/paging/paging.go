// Package paging follows the pages of an MCP list (tools/list,
// prompts/list, resources/list, resources/templates/list) for package
// mcpclient's Manager.
//
// # Usage
//
// [All] asks for one page after another, each with the cursor the one
// before it gave, and returns their items together.
//
// # Concurrency
//
// All calls its page function on the caller's goroutine, one page at a
// time.
//
// # Errors
//
// A list with more pages than allowed, or whose server repeats a cursor,
// fails with an error wrapping transport.ErrProtocol. A server that does
// not implement the method (a JSON-RPC -32601 for the first page) has an
// empty list; any other error of a page is returned as it is.
package paging

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// All follows every page of a list, up to maxPages, failing on a cursor
// that repeats. A server that does not implement the method (-32601) has an
// empty list.
func All[T any](ctx context.Context, maxPages int, page func(context.Context, string) ([]T, string, error)) ([]T, error) {
	var (
		out    []T
		cursor string
		seen   = map[string]bool{}
	)
	for n := 0; ; n++ {
		if n == maxPages {
			return nil, protocolError("the list has more than %d pages", maxPages)
		}
		items, next, err := page(ctx, cursor)
		if err != nil {
			if n == 0 && isMethodNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		out = append(out, items...)
		if next == "" {
			return out, nil
		}
		if seen[next] {
			return nil, protocolError("the server repeated the cursor %q", safetext.Sanitize(next, 64))
		}
		seen[next] = true
		cursor = next
	}
}

// protocolError wraps err with transport.ErrProtocol.
func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", transport.ErrProtocol, fmt.Sprintf(format, args...))
}

// isMethodNotFound reports whether err is a JSON-RPC -32601 from the peer.
func isMethodNotFound(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == jsonrpc.CodeMethodNotFound
}
