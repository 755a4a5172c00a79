package mcpclient

import (
	"net/http"

	"github.com/agentmcp/agentmcp/mcpclient/internal/gate"
	"github.com/agentmcp/agentmcp/netguard"
)

// ErrGateClosed is wrapped by the error of a request that Options.Gate
// stopped before it was sent.
var ErrGateClosed = gate.ErrClosed

// gateClient returns a copy of base whose requests, and the writes of
// whose connections, ask gate first (gate.Client).
func gateClient(base *http.Client, guard *netguard.Guard, g func() error) *http.Client {
	return gate.Client(base, guard, g)
}

// gatedDial wraps dial so that every connection it opens asks the gate
// before each write (gate.Dial).
func gatedDial(dial gate.DialFunc, g func() error) gate.DialFunc { return gate.Dial(dial, g) }
