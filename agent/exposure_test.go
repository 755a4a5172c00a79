package agent_test

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// TestExposureExposes checks the rules' precedence: deny wins, an empty
// allow list allows everything, a SERVER pattern covers the server's
// tools, and a SERVER/TOOL allow pattern names its server.
func TestExposureExposes(t *testing.T) {
	type ask struct {
		server, tool string
		want         bool
	}
	tests := []struct {
		name string
		e    agent.Exposure
		asks []ask
	}{
		{"zero exposes everything", agent.Exposure{}, []ask{
			{"docs", "", true}, {"docs", "search", true}, {"github", "delete_repo", true}}},
		{"deny a tool everywhere", agent.Exposure{Deny: []string{"*/delete_*"}}, []ask{
			{"github", "", true}, {"github", "delete_repo", false}, {"github", "search", true},
			{"docs", "delete_page", false}, {"docs", "undelete_x", true}}},
		{"deny a server", agent.Exposure{Deny: []string{"scratch"}}, []ask{
			{"scratch", "", false}, {"scratch", "anything", false}, {"scratchpad", "", true}, {"docs", "x", true}}},
		{"allow a server and some tools of another", agent.Exposure{Allow: []string{"docs", "github/search_*"}}, []ask{
			{"docs", "", true}, {"docs", "write", true},
			{"github", "", true}, {"github", "search_code", true}, {"github", "create_issue", false},
			{"other", "", false}, {"other", "search_code", false}}},
		{"deny wins over allow", agent.Exposure{Allow: []string{"github"}, Deny: []string{"github/delete_*", "github/push?"}}, []ask{
			{"github", "", true}, {"github", "delete_repo", false}, {"github", "push1", false},
			{"github", "push", true}, {"github", "push12", true}, {"github", "search", true}}},
		{"a tool deny does not hide the server", agent.Exposure{Deny: []string{"github/*"}}, []ask{
			{"github", "", true}, {"github", "search", false}}},
		{"wildcards span slashes in tool names", agent.Exposure{Deny: []string{"fs/admin/*"}}, []ask{
			{"fs", "admin/rm", false}, {"fs", "admin", true}, {"fs", "user/admin/rm", true}}},
		{"? is one character, multi-byte included", agent.Exposure{Allow: []string{"a?c/t?"}}, []ask{
			{"abc", "té", true}, {"ac", "", false}, {"abc", "t", false}, {"abbc", "", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.e.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			for _, a := range tt.asks {
				if got := tt.e.Exposes(a.server, a.tool); got != a.want {
					t.Errorf("Exposes(%q, %q) = %v, want %v", a.server, a.tool, got, a.want)
				}
			}
		})
	}
}

// TestExposureValidate checks that bad patterns are refused with an
// *ExposureError naming the pattern and why.
func TestExposureValidate(t *testing.T) {
	tests := []struct {
		e          agent.Exposure
		wantReason string // "" when valid
	}{
		{agent.Exposure{Allow: []string{"docs", "github/search_*", "*"}, Deny: []string{"*/delete_*", "a-b_c?/x.y-z/w"}}, ""},
		{agent.Exposure{Allow: []string{""}}, "empty"},
		{agent.Exposure{Deny: []string{"/tool"}}, "no server part"},
		{agent.Exposure{Deny: []string{"docs/"}}, "no tool part"},
		{agent.Exposure{Allow: []string{"Docs"}}, "lower-case"},
		{agent.Exposure{Allow: []string{"do cs"}}, "lower-case"},
		{agent.Exposure{Deny: []string{"docs/a b"}}, "space"},
		{agent.Exposure{Deny: []string{"docs/a\x01"}}, "control"},
		{agent.Exposure{Deny: []string{"docs/" + strings.Repeat("x", 300)}}, "longer than"},
	}
	for _, tt := range tests {
		err := tt.e.Validate()
		if tt.wantReason == "" {
			if err != nil {
				t.Errorf("Validate(%+v) = %v, want nil", tt.e, err)
			}
			continue
		}
		var ee *agent.ExposureError
		if !errors.As(err, &ee) || !errors.Is(err, agent.ErrInvalidExposure) || !strings.Contains(ee.Reason, tt.wantReason) {
			t.Errorf("Validate(%+v) = %v, want an *ExposureError saying %q", tt.e, err, tt.wantReason)
		}
	}
	many := agent.Exposure{Deny: make([]string, agent.MaxExposurePatterns+1)}
	for i := range many.Deny {
		many.Deny[i] = "x"
	}
	if err := many.Validate(); !errors.Is(err, agent.ErrInvalidExposure) {
		t.Errorf("Validate of %d patterns = %v, want ErrInvalidExposure", len(many.Deny), err)
	}
}

// TestSetExposure: the rules are stored with the agent and come back when
// it is opened again; bad rules change nothing; a change is an update
// (OnMCPUpdate); an agent under a Directory writes them fenced.
func TestSetExposure(t *testing.T) {
	st := openSQLite(t, "")
	ctx := testCtx(t)
	a, err := agent.Open(ctx, st, "TestAgent", "exposure", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(agent.Exposure{Allow: []string{}, Deny: []string{}}, a.Exposure()); diff != "" {
		t.Fatalf("rules of a new agent (-want +got):\n%s", diff)
	}
	updated := make(chan struct{}, 1)
	dispose := a.OnMCPUpdate(func(agent.MCPServersState) {
		select {
		case updated <- struct{}{}:
		default:
		}
	})
	defer dispose()
	rules := agent.Exposure{Allow: []string{"docs", "github/search_*"}, Deny: []string{"*/delete_*"}}
	if err := a.SetExposure(ctx, rules); err != nil {
		t.Fatal(err)
	}
	select {
	case <-updated:
	case <-ctx.Done():
		t.Fatal("no update after SetExposure")
	}
	if a.Exposes("github", "create_issue") || !a.Exposes("github", "search_code") || a.Exposes("docs", "delete_page") {
		t.Error("the rules set are not applied")
	}
	if err := a.SetExposure(ctx, agent.Exposure{Deny: []string{"/x"}}); !errors.Is(err, agent.ErrInvalidExposure) {
		t.Fatalf("SetExposure of a bad pattern = %v, want ErrInvalidExposure", err)
	}
	if diff := cmp.Diff(rules, a.Exposure()); diff != "" {
		t.Fatalf("rules after a refused change (-want +got):\n%s", diff)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	a = openAgent(t, st, "exposure", nil)
	if diff := cmp.Diff(rules, a.Exposure()); diff != "" {
		t.Fatalf("rules after reopening (-want +got):\n%s", diff)
	}
	if got, err := st.(store.ExposureStore).GetExposure(ctx, "TestAgent/exposure"); err != nil || !cmp.Equal(got.Deny, rules.Deny) {
		t.Fatalf("stored rules = %+v, %v", got, err)
	}

	// Under a Directory the write carries the claim's fence (SQLite
	// ignores fences; the wrapper must still reach the store).
	h, _ := newHost(t, st, &agent.HostOptions{Directory: &directory{t: t, owners: map[string]string{}}})
	ha, release, err := h.Use(ctx, "TestAgent", "exposure")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if diff := cmp.Diff(rules, ha.Exposure()); diff != "" {
		t.Fatalf("rules of the agent opened by a host with a Directory (-want +got):\n%s", diff)
	}
	if err := ha.SetExposure(ctx, agent.Exposure{}); err != nil {
		t.Fatalf("SetExposure under a Directory: %v", err)
	}
	if got, _ := st.(store.ExposureStore).GetExposure(ctx, "TestAgent/exposure"); !got.IsZero() {
		t.Fatalf("stored rules after clearing = %+v", got)
	}
}

// FuzzExposureGlob checks the glob matcher against a regular expression
// built from the same pattern.
func FuzzExposureGlob(f *testing.F) {
	for _, s := range [][2]string{{"a*b", "axxb"}, {"*/delete_*", "x/delete_y"}, {"?", "é"}, {"**a", "ba"}, {"a?*c", "abc"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(name) || strings.Contains(pattern, "/") {
			return
		}
		var re strings.Builder
		re.WriteString(`^(?s:`)
		for _, r := range pattern {
			switch r {
			case '*':
				re.WriteString(`.*`)
			case '?':
				re.WriteString(`.`)
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re.WriteString(`)$`)
		want := regexp.MustCompile(re.String()).MatchString(name)
		e := agent.Exposure{Allow: []string{"s/" + pattern}}
		if got := e.Exposes("s", name); name != "" && got != want {
			t.Fatalf("tool pattern %q on %q: %v, regexp says %v", pattern, name, got, want)
		}
	})
}

// BenchmarkExposes measures the check the gateway makes on every listed
// tool and every call, with a few rules of each kind.
func BenchmarkExposes(b *testing.B) {
	e := agent.Exposure{Allow: []string{"docs", "github/search_*", "fs/read_?ile"}, Deny: []string{"*/delete_*", "scratch", "github/*admin*"}}
	b.ReportAllocs()
	for b.Loop() {
		e.Exposes("github", "search_code_in_repository")
		e.Exposes("github", "delete_repo")
		e.Exposes("scratch", "")
	}
}

// BenchmarkGetExposure measures what reading the rules adds to each wake
// of an agent (Open), on SQLite, for an agent with rules.
func BenchmarkGetExposure(b *testing.B) {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "agent.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	es := store.ExposureStore(st)
	if err := es.PutExposure(b.Context(), "c/n", store.Exposure{Deny: []string{"*/delete_*"}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := es.GetExposure(b.Context(), "c/n"); err != nil {
			b.Fatal(err)
		}
	}
}
