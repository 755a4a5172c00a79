package agent

import (
	"context"

	"github.com/agentmcp/agentmcp/store"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// registerMetrics registers the host's instruments on the meter provider
// of its agents' options (the global one by default): agents awake, and
// the wakes and hibernations so far (docs/OBSERVABILITY.md). The result
// unregisters them; nil when the meter refused them. With a store that
// counts its refused writes (store.WriteHealth), their count and whether
// it refuses writes now are there too.
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
	instruments := []metric.Observable{awake, wakes, hibernations}
	// The store's refused writes, when it counts them (store/sqlite and
	// store/postgres do).
	wh, _ := h.st.(store.WriteHealth)
	var refused, refusing metric.Int64Observable
	if wh != nil {
		if refused, err = meter.Int64ObservableCounter("agentmcp.store.write_failures", metric.WithUnit("{write}"),
			metric.WithDescription("Writes the store refused or did not answer within its deadline (disk full, read-only, database down or hung).")); err != nil {
			return nil
		}
		if refusing, err = meter.Int64ObservableGauge("agentmcp.store.refusing_writes", metric.WithUnit("1"),
			metric.WithDescription("1 while the store refuses writes (from a refused write until one goes through), else 0.")); err != nil {
			return nil
		}
		instruments = append(instruments, refused, refusing)
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := h.Stats()
		o.ObserveInt64(awake, int64(st.Awake))
		o.ObserveInt64(wakes, st.Wakes)
		o.ObserveInt64(hibernations, st.Hibernations)
		if wh != nil {
			n, refusingErr := wh.WriteHealth()
			o.ObserveInt64(refused, int64(n))
			now := int64(0)
			if refusingErr != nil {
				now = 1
			}
			o.ObserveInt64(refusing, now)
		}
		return nil
	}, instruments...)
	if err != nil {
		return nil
	}
	return reg
}
