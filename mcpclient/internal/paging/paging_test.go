package paging

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pages is a scripted server's list: answers[i] answers the i-th request,
// which must carry cursors[i].
type pages struct {
	t       *testing.T
	cursors []string
	answers []answer
	asked   int
}

type answer struct {
	items []int
	next  string
	err   error
}

func (p *pages) page(_ context.Context, cursor string) ([]int, string, error) {
	p.t.Helper()
	if p.asked >= len(p.answers) {
		p.t.Fatalf("page %d asked for; the script has %d", p.asked+1, len(p.answers))
	}
	if want := p.cursors[p.asked]; cursor != want {
		p.t.Errorf("page %d asked with cursor %q, want %q", p.asked+1, cursor, want)
	}
	a := p.answers[p.asked]
	p.asked++
	return a.items, a.next, a.err
}

// TestAll: the pages are followed by their cursors and their items
// returned in order; a list with more pages than allowed, or a repeated
// cursor (shown sanitised), is a protocol error; -32601 on the first page
// is an empty list, on a later one an error, as is any other error.
func TestAll(t *testing.T) {
	ctx := context.Background()
	notFound := &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
	failed := errors.New("failed")
	tests := []struct {
		name     string
		maxPages int
		cursors  []string
		answers  []answer
		want     []int
		err      error  // errors.Is
		errText  string // in the error, when err is ErrProtocol
	}{
		{"one page", 3, []string{""}, []answer{{items: []int{1, 2}}}, []int{1, 2}, nil, ""},
		{"three pages", 3, []string{"", "a", "b"},
			[]answer{{items: []int{1}, next: "a"}, {items: []int{2, 3}, next: "b"}, {items: []int{4}}}, []int{1, 2, 3, 4}, nil, ""},
		{"too many pages", 2, []string{"", "a"},
			[]answer{{items: []int{1}, next: "a"}, {items: []int{2}, next: "b"}}, nil, transport.ErrProtocol, "more than 2 pages"},
		{"repeated cursor", 5, []string{"", "a\x1b", "b"},
			[]answer{{next: "a\x1b"}, {next: "b"}, {next: "a\x1b"}}, nil, transport.ErrProtocol, `repeated the cursor "a`},
		{"not implemented", 3, []string{""}, []answer{{err: notFound}}, nil, nil, ""},
		{"not implemented later", 3, []string{"", "a"}, []answer{{items: []int{1}, next: "a"}, {err: notFound}}, nil, notFound, ""},
		{"failed", 3, []string{""}, []answer{{err: failed}}, nil, failed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pages{t: t, cursors: tt.cursors, answers: tt.answers}
			got, err := All(ctx, tt.maxPages, p.page)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if tt.errText != "" && !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("error %q, want it to say %q", err, tt.errText)
			}
			if err != nil && strings.ContainsRune(err.Error(), '\x1b') {
				t.Errorf("error %q shows the cursor unsanitised", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("items %v, want %v", got, tt.want)
			}
			if p.asked != len(tt.answers) {
				t.Errorf("%d pages asked for, want %d", p.asked, len(tt.answers))
			}
		})
	}
}
