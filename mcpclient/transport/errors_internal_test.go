package transport

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestRejected: a rejected write matches go-sdk's "rejected by transport"
// (so the connection survives it) but is no JSON-RPC error of its own: a
// caller looking for the server's JSON-RPC error finds the server's, or
// none.
func TestRejected(t *testing.T) {
	sentinel := &jsonrpc.Error{Code: -32005, Message: "rejected by transport"} // go-sdk's, by code
	plain := fmt.Errorf("calling %q: %w", "tools/call", rejected(&HTTPError{StatusCode: 500, Status: "500 Internal Server Error"}))
	if !errors.Is(plain, sentinel) {
		t.Errorf("errors.Is(%v, rejected by transport) = false", plain)
	}
	var jerr *jsonrpc.Error
	if errors.As(plain, &jerr) {
		t.Errorf("an HTTP 500 reads as the JSON-RPC error %d %q", jerr.Code, jerr.Message)
	}
	var herr *HTTPError
	if !errors.As(plain, &herr) || herr.StatusCode != 500 {
		t.Errorf("the HTTP error is lost: %v", plain)
	}
	server := &jsonrpc.Error{Code: -32602, Message: "invalid params"}
	withServer := rejected(fmt.Errorf("%w: %w", server, &HTTPError{StatusCode: 400}))
	if !errors.As(withServer, &jerr) || jerr.Code != -32602 {
		t.Errorf("the server's JSON-RPC error is not found: %v", withServer)
	}
	if errors.Is(errors.New("other"), sentinel) || errors.Is(rejected(errors.New("x")), &jsonrpc.Error{Code: -32601}) {
		t.Error("rejected matches too much")
	}
}
