package urlelicit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errClosed = errors.New("closed")

// requiredErr is a -32042 error listing elicitations.
func requiredErr(t *testing.T, elicitations ...*mcp.ElicitParams) error {
	t.Helper()
	data, err := json.Marshal(map[string]any{"elicitations": elicitations})
	if err != nil {
		t.Fatal(err)
	}
	return &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "visit the URL first", Data: data}
}

// server answers requests with the errors of refusals in turn, then
// succeeds; it counts the requests.
type server struct {
	refusals []error
	requests int
}

func (s *server) handle(context.Context, string, mcp.Request) (mcp.Result, error) {
	s.requests++
	if len(s.refusals) > 0 {
		err := s.refusals[0]
		s.refusals = s.refusals[1:]
		return nil, err
	}
	return &mcp.CallToolResult{}, nil
}

type setup struct {
	comps   Completions
	cfg     Config
	elicits []string // ids handed to the handler
	action  string
	timeout chan time.Time
}

func newSetup(life context.Context) *setup {
	s := &setup{action: "accept", timeout: make(chan time.Time)}
	s.cfg = Config{
		ServerID:        func() string { return "s" },
		MaxElicitations: 2,
		Elicit: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			s.elicits = append(s.elicits, p.ElicitationID)
			if p.Mode != "url" {
				return nil, errors.New("mode not url")
			}
			if s.action == "accept" && p.ElicitationID != "" {
				s.comps.Complete(p.ElicitationID) // the user finished at once
			}
			return &mcp.ElicitResult{Action: s.action}, nil
		},
		Wait:   func() time.Duration { return time.Hour },
		After:  func(time.Duration) <-chan time.Time { return s.timeout },
		Logger: slog.New(slog.DiscardHandler),
		Life:   life,
		Closed: errClosed,
	}
	return s
}

func call(s *setup, srv *server) error {
	_, err := Middleware(&s.comps, s.cfg)(srv.handle)(context.Background(), "tools/call", &mcp.CallToolRequest{})
	return err
}

func TestMiddleware(t *testing.T) {
	url := func(id string) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: "url", URL: "https://example.com/" + id, ElicitationID: id, Message: "log in"}
	}
	tests := []struct {
		name     string
		refusals func(t *testing.T) []error
		action   string
		requests int
		check    func(t *testing.T, err error)
	}{
		{"satisfied", func(t *testing.T) []error { return []error{requiredErr(t, url("a"), url("b"))} }, "accept", 2,
			func(t *testing.T, err error) {
				if err != nil {
					t.Errorf("err %v; want the retry's success", err)
				}
			}},
		{"still required", func(t *testing.T) []error { return []error{requiredErr(t, url("a")), requiredErr(t, url("a"))} }, "accept", 2,
			func(t *testing.T, err error) {
				var uerr *input.URLElicitationRequiredError
				if !errors.As(err, &uerr) || uerr.Action != "" || len(uerr.Elicitations) != 1 || uerr.Elicitations[0].URL != "https://example.com/a" {
					t.Errorf("err %v; want URLElicitationRequiredError after the retry", err)
				}
			}},
		{"declined", func(t *testing.T) []error { return []error{requiredErr(t, url("a"))} }, "decline", 1,
			func(t *testing.T, err error) {
				var uerr *input.URLElicitationRequiredError
				if !errors.As(err, &uerr) || uerr.Action != "decline" {
					t.Errorf("err %v; want URLElicitationRequiredError with action decline", err)
				}
			}},
		{"form mode", func(t *testing.T) []error { return []error{requiredErr(t, &mcp.ElicitParams{Message: "x"})} }, "accept", 1,
			func(t *testing.T, err error) {
				if !errors.Is(err, transport.ErrProtocol) {
					t.Errorf("err %v; want ErrProtocol", err)
				}
			}},
		{"too many", func(t *testing.T) []error { return []error{requiredErr(t, url("a"), url("b"), url("c"))} }, "accept", 1,
			func(t *testing.T, err error) {
				if !errors.Is(err, transport.ErrProtocol) {
					t.Errorf("err %v; want ErrProtocol", err)
				}
			}},
		{"other error", func(t *testing.T) []error { return []error{&jsonrpc.Error{Code: -32602, Message: "no"}} }, "accept", 1,
			func(t *testing.T, err error) {
				var jerr *jsonrpc.Error
				if !errors.As(err, &jerr) || jerr.Code != -32602 {
					t.Errorf("err %v; want the server's error as it is", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(context.Background())
			s.action = tt.action
			srv := &server{refusals: tt.refusals(t)}
			tt.check(t, call(s, srv))
			if srv.requests != tt.requests {
				t.Errorf("%d requests; want %d", srv.requests, tt.requests)
			}
		})
	}
}

// TestWaitsForCompletion: the retry waits for the server's announcement,
// or for the wait to run out; a Manager closed meanwhile ends the wait.
func TestWaitsForCompletion(t *testing.T) {
	url := &mcp.ElicitParams{Mode: "url", URL: "https://example.com/x", ElicitationID: "x"}

	s := newSetup(context.Background())
	s.action = "accept"
	s.cfg.Elicit = func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept"}, nil // no completion announced
	}
	srv := &server{refusals: []error{requiredErr(t, url)}}
	done := make(chan error)
	go func() { done <- call(s, srv) }()
	s.timeout <- time.Time{} // the wait runs out: retry anyway
	if err := <-done; err != nil || srv.requests != 2 {
		t.Errorf("after the wait: err %v, %d requests; want the retry's success", err, srv.requests)
	}

	life, closeLife := context.WithCancel(context.Background())
	s = newSetup(life)
	s.cfg.Elicit = func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		closeLife() // the Manager closes while the user is away
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	srv = &server{refusals: []error{requiredErr(t, url)}}
	if err := call(s, srv); !errors.Is(err, context.Canceled) || srv.requests != 1 {
		t.Errorf("closed meanwhile: err %v, %d requests; want cancelled, no retry", err, srv.requests)
	}

	var c Completions
	ch, release := c.Await("y")
	release()
	c.Complete("y") // released: nothing to close
	select {
	case <-ch:
		t.Error("a released wait was completed")
	default:
	}
}
