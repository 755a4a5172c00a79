package explain_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/mcpclient"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newManager returns a Manager closed when the test ends.
func newManager(t testing.TB, opts *mcpclient.Options) *mcpclient.Manager {
	t.Helper()
	m := mcpclient.New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// testCtx is a context bounded as a safety net.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
