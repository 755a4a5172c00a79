package mcpclient

import (
	"context"
	"sync"
	"time"
)

// stdioStarts paces the starts of one stdio server's process. A server
// that dies soon after each start, even after a good handshake (which
// resets the retry backoff), would otherwise be restarted at once, again
// and again: a start within quickRestart of the previous one waits a
// doubling delay first (the server's retry backoff, up to its
// BackgroundMaxDelay), so that the restart rate stays bounded; a server
// that ran for a while is started again at once.
type stdioStarts struct {
	mu    sync.Mutex
	last  time.Time // when the process last started
	quick int       // starts in a row that each followed the one before quickly
}

const quickRestart = 10 * time.Second

// paceStdio waits, if need be, before the process of c is started.
func (c *server) paceStdio(ctx context.Context) error {
	p := &c.starts
	p.mu.Lock()
	now := c.m.clock.Now()
	if !p.last.IsZero() && now.Sub(p.last) < quickRestart {
		p.quick++
	} else {
		p.quick = 0
	}
	n := p.quick
	p.mu.Unlock()
	if n > 0 {
		d := doubled(c.retry.BaseDelay, n, c.retry.BackgroundMaxDelay)
		c.m.logger.Info("mcp stdio server exits soon after it starts; waiting before starting it again", "server", c.ID(), "in", d)
		select {
		case <-c.m.clock.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	p.last = c.m.clock.Now()
	p.mu.Unlock()
	return nil
}
