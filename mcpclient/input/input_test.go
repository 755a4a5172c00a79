//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package input_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient/input"
)

func TestElicitationMode(t *testing.T) {
	tests := []struct {
		name string
		p    mcp.ElicitParams
		want string
	}{
		{"explicit", mcp.ElicitParams{Mode: "url"}, "url"},
		{"url", mcp.ElicitParams{URL: "https://example.com/"}, "url"},
		{"elicitation id", mcp.ElicitParams{ElicitationID: "e1"}, "url"},
		{"form", mcp.ElicitParams{Message: "name?"}, "form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := input.ElicitationMode(&tt.p); got != tt.want {
				t.Errorf("ElicitationMode = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewElicitationRequest(t *testing.T) {
	p := &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}}
	req, err := input.NewElicitationRequest("s1", p)
	if err != nil {
		t.Fatal(err)
	}
	want := &input.ElicitationRequest{ServerID: "s1", Mode: "form", Message: "name?", RequestedSchema: []byte(`{"type":"object"}`), Params: p}
	if diff := cmp.Diff(want, req); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if req.Size() != len("name?")+len(`{"type":"object"}`) {
		t.Errorf("Size = %d", req.Size())
	}
	if _, err := input.NewElicitationRequest("s1", &mcp.ElicitParams{RequestedSchema: func() {}}); !isInvalidParams(err) {
		t.Errorf("unencodable schema: %v; want invalid params", err)
	}
}

func isInvalidParams(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams
}

// TestElicit: the answer of the mode's handler, checked: only an accepted
// form keeps content; an unknown action, a missing result or handler, and
// an unknown mode fail.
func TestElicit(t *testing.T) {
	answer := func(res *mcp.ElicitResult, err error) func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
		return func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) { return res, err }
	}
	content := map[string]any{"name": "Ada"}
	tests := []struct {
		name    string
		h       input.ElicitationHandlers
		mode    string
		want    *mcp.ElicitResult
		wantErr func(error) bool
	}{
		{"form accepted", input.ElicitationHandlers{Form: answer(&mcp.ElicitResult{Action: "accept", Content: content}, nil)}, "form",
			&mcp.ElicitResult{Action: "accept", Content: content}, nil},
		{"url accepted, content dropped", input.ElicitationHandlers{URL: answer(&mcp.ElicitResult{Action: "accept", Content: content}, nil)}, "url",
			&mcp.ElicitResult{Action: "accept"}, nil},
		{"declined, content dropped", input.ElicitationHandlers{Form: answer(&mcp.ElicitResult{Action: "decline", Content: content}, nil)}, "form",
			&mcp.ElicitResult{Action: "decline"}, nil},
		{"unknown action", input.ElicitationHandlers{Form: answer(&mcp.ElicitResult{Action: "ok"}, nil)}, "form",
			nil, func(err error) bool { return err != nil }},
		{"no result", input.ElicitationHandlers{Form: answer(nil, nil)}, "form",
			nil, func(err error) bool { return err != nil }},
		{"handler error", input.ElicitationHandlers{Form: answer(nil, context.Canceled)}, "form",
			nil, func(err error) bool { return errors.Is(err, context.Canceled) }},
		{"no handler", input.ElicitationHandlers{Form: answer(&mcp.ElicitResult{Action: "accept"}, nil)}, "url",
			nil, func(err error) bool { return errors.Is(err, input.ErrNoHandler) && isInvalidParams(err) }},
		{"unknown mode", input.ElicitationHandlers{Form: answer(&mcp.ElicitResult{Action: "accept"}, nil)}, "voice",
			nil, isInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.h.Elicit(context.Background(), &input.ElicitationRequest{ServerID: "s1", Mode: tt.mode})
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Errorf("error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	form := func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) { return nil, nil }
	if caps := (&input.ElicitationHandlers{}).Capabilities(); caps != nil {
		t.Errorf("no handlers: %+v, want nil", caps)
	}
	caps := (&input.ElicitationHandlers{Form: form}).Capabilities()
	if caps == nil || caps.Form == nil || caps.URL != nil {
		t.Errorf("form handler: %+v, want form mode only", caps)
	}
}

func TestSample(t *testing.T) {
	var none input.SamplingHandler
	if _, err := none.Sample(context.Background(), "s1", &mcp.CreateMessageParams{}); !errors.Is(err, input.ErrNoHandler) || !isInvalidParams(err) {
		t.Errorf("nil handler: %v; want ErrNoHandler with invalid params", err)
	}
	empty := input.SamplingHandler(func(context.Context, *mcp.CreateMessageParams, string) (*mcp.CreateMessageResult, error) {
		return nil, nil
	})
	if _, err := empty.Sample(context.Background(), "s1", &mcp.CreateMessageParams{}); err == nil {
		t.Error("a handler without a result: no error")
	}
}

// Example answers an elicitation request as a Manager does, without one:
// the form handler's answer is checked before it goes back to the server.
func ExampleElicitationHandlers_Elicit() {
	h := &input.ElicitationHandlers{
		Form: func(_ context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
			fmt.Printf("%s asks: %s\n", serverID, req.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}
	req, _ := input.NewElicitationRequest("docs", &mcp.ElicitParams{Message: "Your name?"})
	res, err := h.Elicit(context.Background(), req)
	fmt.Println(res.Action, res.Content["name"], err)

	// A URL elicitation has no handler here.
	req, _ = input.NewElicitationRequest("docs", &mcp.ElicitParams{URL: "https://docs.example/sign-in"})
	_, err = h.Elicit(context.Background(), req)
	fmt.Println(errors.Is(err, input.ErrNoHandler), err)
	// Output:
	// docs asks: Your name?
	// accept Ada <nil>
	// true no url-mode elicitation handler is configured for mcp server "docs"
}
