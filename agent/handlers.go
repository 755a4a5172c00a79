package agent

import "github.com/agentmcp/agentmcp/mcpclient/input"

// The handlers of the agent's servers' requests for input (elicitation and
// sampling): with Options.ElicitationTimeout, the agent's queue of pending
// elicitations answers elicitation; otherwise the application sets them.
// A layer that answers some requests itself and hands the others on
// (package gateway) reads the ones in place and sets its own in front of
// them.

// ElicitationHandlers returns a copy of the elicitation handlers in place,
// or nil when none were ever set (mcpclient.Manager.ElicitationHandlers).
func (a *Agent) ElicitationHandlers() *input.ElicitationHandlers {
	return a.m.ElicitationHandlers()
}

// ConfigureElicitationHandlers sets the handlers that answer the agent's
// servers' elicitation requests, replacing the ones in place; live
// sessions use them at once (mcpclient.Manager.ConfigureElicitationHandlers).
func (a *Agent) ConfigureElicitationHandlers(h *input.ElicitationHandlers) {
	a.m.ConfigureElicitationHandlers(h)
}

// SamplingHandler returns the sampling handler in place, or nil.
func (a *Agent) SamplingHandler() input.SamplingHandler { return a.m.SamplingHandler() }

// ConfigureSampling sets the handler of the agent's servers' sampling
// requests, replacing any; nil clears it (mcpclient.Manager.ConfigureSampling).
func (a *Agent) ConfigureSampling(h input.SamplingHandler) { a.m.ConfigureSampling(h) }
