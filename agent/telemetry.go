package agent

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// registerMetrics registers the host's instruments on the meter provider
// of its agents' options (the global one by default): agents awake, and
// the wakes and hibernations so far (docs/OBSERVABILITY.md). The result
// unregisters them; nil when the meter refused them.
func (h *Host) registerMetrics() metric.Registration {
	mp := h.agentO.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter("github.com/agentmcp/agentmcp/agent")
	awake, err := meter.Int64ObservableGauge("agentmcp.agents.awake", metric.WithUnit("{agent}"),
		metric.WithDescription("Agents awake (or being woken) in this process."))
	if err != nil {
		return nil
	}
	wakes, err := meter.Int64ObservableCounter("agentmcp.agent.wakes", metric.WithUnit("{wake}"),
		metric.WithDescription("Agents opened (woken) by this process."))
	if err != nil {
		return nil
	}
	hibernations, err := meter.Int64ObservableCounter("agentmcp.agent.hibernations", metric.WithUnit("{hibernation}"),
		metric.WithDescription("Agents hibernated by this process."))
	if err != nil {
		return nil
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := h.Stats()
		o.ObserveInt64(awake, int64(st.Awake))
		o.ObserveInt64(wakes, st.Wakes)
		o.ObserveInt64(hibernations, st.Hibernations)
		return nil
	}, awake, wakes, hibernations)
	if err != nil {
		return nil
	}
	return reg
}
