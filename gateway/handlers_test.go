//lint:file-ignore SA1019 sampling is deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have it

package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// TestHandlerChain: a gateway passes the requests for input no client
// takes to the fallback handlers it was given (else to those in place),
// and Close puts back the handlers the agent had before New: a second
// gateway on the same agent does not go through the first one's.
func TestHandlerChain(t *testing.T) {
	ctx := testCtx(t)
	st, err := sqlite.Open(ctx, sqlite.Memory, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := agent.Open(ctx, st, "test", "chain", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())

	var calls []string
	handlers := func(name string) (*input.ElicitationHandlers, input.SamplingHandler) {
		answer := func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
			calls = append(calls, name+" elicit")
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		sample := func(context.Context, *mcp.CreateMessageParams, string) (*mcp.CreateMessageResult, error) {
			calls = append(calls, name+" sample")
			return &mcp.CreateMessageResult{Model: name, Content: &mcp.TextContent{Text: name}}, nil
		}
		return &input.ElicitationHandlers{Form: answer, URL: answer}, sample
	}
	// ask sends the agent's handlers in place one request of each kind,
	// outside any client's call.
	ask := func() {
		t.Helper()
		calls = nil
		eh, sh := a.ElicitationHandlers(), a.SamplingHandler()
		if eh == nil || eh.Form == nil || sh == nil {
			t.Fatalf("handlers in place: %+v %v", eh, sh != nil)
		}
		if _, err := eh.Form(ctx, &input.ElicitationRequest{ServerID: "s", Mode: "form", Params: &mcp.ElicitParams{Message: "?"}}, "s"); err != nil {
			t.Fatal(err)
		}
		if _, err := sh(ctx, &mcp.CreateMessageParams{}, "s"); err != nil {
			t.Fatal(err)
		}
	}
	own, ownSample := handlers("agent")
	a.ConfigureElicitationHandlers(own)
	a.ConfigureSampling(ownSample)

	// Without fallbacks given: the handlers in place answer.
	g1 := gateway.New(a, nil)
	ask()
	if want := "agent elicit,agent sample"; strings.Join(calls, ",") != want {
		t.Errorf("through the first gateway: %s, want %s", strings.Join(calls, ","), want)
	}
	if err := g1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ask()
	if want := "agent elicit,agent sample"; strings.Join(calls, ",") != want {
		t.Errorf("after Close: %s, want %s", strings.Join(calls, ","), want)
	}

	// With fallbacks given: they answer, and Close puts the agent's back.
	fb, fbSample := handlers("fallback")
	g2 := gateway.New(a, &gateway.Options{Elicitation: fb, Sampling: fbSample})
	ask()
	if want := "fallback elicit,fallback sample"; strings.Join(calls, ",") != want {
		t.Errorf("through the second gateway: %s, want %s", strings.Join(calls, ","), want)
	}
	if err := g2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ask()
	if want := "agent elicit,agent sample"; strings.Join(calls, ",") != want {
		t.Errorf("after the second Close: %s, want %s", strings.Join(calls, ","), want)
	}
}
