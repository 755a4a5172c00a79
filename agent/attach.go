package agent

import (
	"context"
	"errors"
	"sync"
)

// An Attachment is a part made for one agent that lives exactly as long as
// the agent: the agent's MCP endpoint (package gateway's Gateway, which
// agentmcp serve attaches on an agent's first MCP request) is one. The
// agent closes its attachments first when it closes (a hibernation, the
// Host's Close), before its servers' connections, with its Close's ctx.
type Attachment interface {
	Close(ctx context.Context) error
}

// InputAsker is an Attachment that asks its own clients for input on the
// agent's behalf (the gateway passes its servers' elicitations to the MCP
// clients of the calls they belong to): PendingInputs is how many of
// those questions wait for an answer now. They count in Busyness.Inputs.
type InputAsker interface {
	PendingInputs() int
}

// attachments are an agent's Attachments, by key.
type attachments struct {
	// mu guards the fields below.
	mu     sync.Mutex
	m      map[any]*attached
	closed bool // the agent closed them: no more are made
}

// attached is one attachment, made once: ready is closed once v is set.
type attached struct {
	ready chan struct{}
	v     Attachment
}

// Attach returns the agent's attachment under key (a comparable value of
// the caller's own type, as with context keys), made by newAttachment on
// the first call: one per key and agent, and concurrent callers get the
// same one. newAttachment runs without the agent's locks held and may use
// the agent. Attach returns nil once the agent is closing.
func (a *Agent) Attach(key any, newAttachment func(*Agent) Attachment) Attachment {
	at := &a.attachments
	at.mu.Lock()
	if at.closed {
		at.mu.Unlock()
		return nil
	}
	e, ok := at.m[key]
	if !ok {
		if at.m == nil {
			at.m = map[any]*attached{}
		}
		e = &attached{ready: make(chan struct{})}
		at.m[key] = e
	}
	at.mu.Unlock()
	if !ok {
		e.v = newAttachment(a)
		close(e.ready)
	}
	<-e.ready
	return e.v
}

// closeAttachments closes every attachment, once each is made, and lets no
// more be made.
func (a *Agent) closeAttachments(ctx context.Context) error {
	at := &a.attachments
	at.mu.Lock()
	at.closed = true
	all := at.m
	at.m = nil
	at.mu.Unlock()
	var errs []error
	for _, e := range all {
		<-e.ready
		if e.v != nil {
			errs = append(errs, e.v.Close(ctx))
		}
	}
	return errors.Join(errs...)
}

// pendingInputs sums the attachments' PendingInputs (InputAsker).
func (a *Agent) pendingInputs() int {
	at := &a.attachments
	at.mu.Lock()
	var askers []InputAsker
	for _, e := range at.m {
		select {
		case <-e.ready:
			if ia, ok := e.v.(InputAsker); ok {
				askers = append(askers, ia)
			}
		default: // being made: it has asked nothing yet
		}
	}
	at.mu.Unlock()
	n := 0
	for _, ia := range askers {
		n += ia.PendingInputs()
	}
	return n
}
