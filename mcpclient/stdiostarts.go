package mcpclient

import (
	"context"

	"github.com/agentmcp/agentmcp/mcpclient/stdio"
)

// paceStdio waits, if need be, before the process of c is started: a
// start soon after the previous one waits a doubling delay first (the
// server's retry backoff, up to its BackgroundMaxDelay), so that a server
// that dies soon after each start is not restarted again and again at
// once (backoff.Pacer).
func (c *server) paceStdio(ctx context.Context) error {
	if d := c.starts.Delay(c.m.clock.Now(), c.retry.BaseDelay, c.retry.BackgroundMaxDelay); d > 0 {
		c.m.logger.Info("mcp stdio server exits soon after it starts; waiting before starting it again", "server", c.ID(), "in", d)
		select {
		case <-c.m.clock.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.starts.Started(c.m.clock.Now())
	return nil
}

// stderrLimit returns the bound on the logging of c's stderr lines, one
// for all its processes: a server that restarts does not start a new
// burst each time.
func (c *server) stderrLimit() *stdio.LineLimiter {
	if l := c.stderr.Load(); l != nil {
		return l
	}
	c.stderr.CompareAndSwap(nil, stdio.NewLineLimiter())
	return c.stderr.Load()
}
