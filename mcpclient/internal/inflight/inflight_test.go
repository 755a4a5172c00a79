package inflight

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errClosed = errors.New("closed")

// TestRequestContext: a server request that arrives while calls are in
// flight is cancelled once they have all ended if one of them was
// cancelled by its caller, not if they all returned; one that arrives
// within a call keeps that call's context; every one ends with the owner.
func TestRequestContext(t *testing.T) {
	life := context.Background()
	tests := []struct {
		name      string
		cancelled []bool // how the calls in flight end
		want      error  // the request context's cause
	}{
		{"calls returned", []bool{false, false}, nil},
		{"one call cancelled", []bool{false, true}, ErrOriginCancelled},
		{"no call in flight", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs Calls
			var calls []*Call
			for range tt.cancelled {
				_, cl := cs.Begin(context.Background())
				calls = append(calls, cl)
			}
			ctx, done := cs.RequestContext(context.Background(), life, errClosed)
			for i, cl := range calls {
				cs.End(cl, tt.cancelled[i])
			}
			if tt.want != nil {
				<-ctx.Done()
			}
			done() // waits for the watcher: the cause is settled
			if got := context.Cause(ctx); tt.want != nil && !errors.Is(got, tt.want) {
				t.Errorf("cause %v; want %v", got, tt.want)
			} else if tt.want == nil && errors.Is(got, ErrOriginCancelled) {
				t.Errorf("cause %v; want no origin cancellation", got)
			}
		})
	}

	t.Run("within a call", func(t *testing.T) {
		var cs Calls
		callCtx, cl := cs.Begin(context.Background())
		ctx, done := cs.RequestContext(callCtx, life, errClosed)
		defer done()
		cs.End(cl, true)
		if ctx.Err() != nil {
			t.Errorf("a request within a call ended with the call's end: %v", context.Cause(ctx))
		}
	})

	t.Run("owner closes", func(t *testing.T) {
		var cs Calls
		owner, closeOwner := context.WithCancel(context.Background())
		_, cl := cs.Begin(context.Background())
		defer cs.End(cl, false)
		ctx, done := cs.RequestContext(context.Background(), owner, errClosed)
		defer done()
		closeOwner()
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), errClosed) {
			t.Errorf("cause %v; want the owner's", context.Cause(ctx))
		}
	})
}

func TestRetryRounds(t *testing.T) {
	tests := []struct {
		params string
		want   bool
	}{
		{`{"name":"x","arguments":{}}`, false},
		{`{"name":"x","inputResponses":{"a":{}}}`, true},
		{`{"name":"x","inputResponses":null}`, false},
		{`{"name":"x","requestState":"s"}`, true},
		{`{"name":"x","arguments":{"text":"\"requestState\""}}`, false},
		{`not json "requestState"`, false},
	}
	for _, tt := range tests {
		var cs Calls
		ctx, cl := cs.Begin(context.Background())
		got, ok := FromContext(ctx)
		if !ok || got != cl {
			t.Fatal("the call is not in its context")
		}
		cl.NoteRound([]byte(`{"name":"x"}`))
		cl.NoteRound([]byte(tt.params))
		if cl.Retried() != tt.want {
			t.Errorf("after %s: retried %v, want %v", tt.params, cl.Retried(), tt.want)
		}
		cs.End(cl, false)
	}
	if _, ok := FromContext(context.Background()); ok {
		t.Error("a call in a context without one")
	}
}

// TestOrigins: a server request's handler context names the call it was
// fulfilled within, else the calls in flight when it arrived (their
// values), else none.
func TestOrigins(t *testing.T) {
	type key struct{}
	life := context.Background()
	var cs Calls
	ctxA, a := cs.Begin(context.WithValue(context.Background(), key{}, "a"))
	defer cs.End(a, false)

	within, done := cs.RequestContext(ctxA, life, errClosed)
	if got := values(Origins(within), key{}); !slices.Equal(got, []any{"a"}) {
		t.Errorf("within a call: origins %v; want [a]", got)
	}
	done()

	alone, done := cs.RequestContext(context.Background(), life, errClosed)
	if got := values(Origins(alone), key{}); !slices.Equal(got, []any{"a"}) {
		t.Errorf("one call in flight: origins %v; want [a]", got)
	}
	done()

	_, b := cs.Begin(context.WithValue(context.Background(), key{}, "b"))
	both, done := cs.RequestContext(context.Background(), life, errClosed)
	got := values(Origins(both), key{})
	slices.SortFunc(got, func(x, y any) int { return strings.Compare(x.(string), y.(string)) })
	if !slices.Equal(got, []any{"a", "b"}) {
		t.Errorf("two calls in flight: origins %v; want [a b]", got)
	}
	done()
	cs.End(b, false)

	var none Calls
	ctx, done := none.RequestContext(context.Background(), life, errClosed)
	if o := Origins(ctx); len(o) != 0 {
		t.Errorf("no call in flight: origins %v", o)
	}
	done()
	if o := Origins(context.Background()); o != nil {
		t.Errorf("a context of no request: origins %v", o)
	}
}

func values(ctxs []context.Context, key any) []any {
	var out []any
	for _, c := range ctxs {
		out = append(out, c.Value(key))
	}
	return out
}
