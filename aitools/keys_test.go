package aitools_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

var keyRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// noCall is a Caller for tests that never call.
func noCall(context.Context, string, string, map[string]any) (*mcp.CallToolResult, error) {
	panic("unexpected call")
}

// catalog builds fresh definitions (new pointers, as a refresh would) for
// server/tool pairs.
func catalog(pairs ...string) []aitools.MCPTool {
	var out []aitools.MCPTool
	for _, p := range pairs {
		server, name, _ := strings.Cut(p, "|")
		out = append(out, aitools.MCPTool{ServerID: server, Def: &mcp.Tool{Name: name,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}}})
	}
	return out
}

// keysOf returns "server|tool" -> key.
func keysOf(set *aitools.ToolSet) map[string]string {
	out := map[string]string{}
	for t := range set.All() {
		out[t.ServerID+"|"+t.Name] = t.Key
	}
	return out
}

func TestSeedKeys(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"server-1", "create_charge", "tool_server1_create_charge"},
		{"github", "create_pull_request", "tool_github_create_pull_request"},
		{"selected", "selected_tool", "tool_selected_selected_tool"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := aitools.SeedKey(tt.server, tt.tool); got != tt.want {
				t.Errorf("SeedKey(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
			}
			set := aitools.NewCache(noCall, nil).Build(catalog(tt.server + "|" + tt.tool))
			if got := keysOf(set)[tt.server+"|"+tt.tool]; got != tt.want {
				t.Errorf("key %q, want %q", got, tt.want)
			}
		})
	}
}

// TestKeys is acceptance test 1: seed-format keys, a 90-character tool
// name, names with "." and "/", server ids that differ only by "-",
// identical tool names on two servers; all keys valid, unique, stable
// across a refresh, and reversible.
func TestKeys(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 4) + "1234567890" // 90 characters
	if len(long) != 90 {
		t.Fatalf("len(long) = %d", len(long))
	}
	pairs := []string{
		"server-1|create_charge",
		"github|create_pull_request",
		"s1|" + long,
		"files|fs.read_file",
		"files|repo/list",
		"files|a.b/c d",
		"my-server|search",
		"myserver|search",
		"alpha|echo",
		"beta|echo",
		"a_b|c", // seed key tool_a_b_c,
		"a|b_c", // the same
	}
	cache := aitools.NewCache(noCall, nil)
	set := cache.Build(catalog(pairs...))
	keys := keysOf(set)
	if len(keys) != len(pairs) || set.Len() != len(pairs) {
		t.Fatalf("%d keys for %d tools", len(keys), len(pairs))
	}
	seen := map[string]string{}
	for pair, key := range keys {
		if !keyRE.MatchString(key) {
			t.Errorf("%s: key %q is not a valid provider name", pair, key)
		}
		if other, dup := seen[key]; dup {
			t.Errorf("key %q given to %s and %s", key, pair, other)
		}
		seen[key] = pair
		server, name, ok := set.Lookup(key)
		if !ok || server+"|"+name != pair {
			t.Errorf("Lookup(%q) = %q, %q, %v; want %s", key, server, name, ok, pair)
		}
	}

	// Seed keys where they are valid and unique.
	for pair, want := range map[string]string{
		"server-1|create_charge":     "tool_server1_create_charge",
		"github|create_pull_request": "tool_github_create_pull_request",
		"alpha|echo":                 "tool_alpha_echo",
		"beta|echo":                  "tool_beta_echo",
	} {
		if keys[pair] != want {
			t.Errorf("%s: key %q, want %q", pair, keys[pair], want)
		}
	}
	// Safe keys otherwise: readable fragments and the identity's hash.
	for pair, want := range map[string]string{
		"s1|" + long:         "tool_s1_" + long[:47] + "_",
		"files|fs.read_file": "tool_files_fs_read_file_",
		"files|repo/list":    "tool_files_repo_list_",
		"files|a.b/c d":      "tool_files_a_b_c_d_",
		"my-server|search":   "tool_my-server_search_",
		"myserver|search":    "tool_myserver_search_",
		"a_b|c":              "tool_a_b_c_",
		"a|b_c":              "tool_a_b_c_",
	} {
		server, name, _ := strings.Cut(pair, "|")
		if got := keys[pair]; got != aitools.SafeKey(server, name) || !strings.HasPrefix(got, want) || len(got) != len(want)+8 {
			t.Errorf("%s: key %q, want SafeKey %q of the form %s<8 hex>", pair, got, aitools.SafeKey(server, name), want)
		}
	}
	if n := len(keys["s1|"+long]); n != 64 {
		t.Errorf("the long name's key has %d characters, want 64", n)
	}

	// Collisions are reported, never resolved by dropping a tool.
	var gotColl []string
	for _, c := range set.Collisions() {
		var members []string
		for _, r := range c.Tools {
			members = append(members, r.ServerID+"|"+r.Name+"="+r.Key)
		}
		gotColl = append(gotColl, c.Key+": "+strings.Join(members, ", "))
	}
	wantColl := []string{
		"tool_a_b_c: a|b_c=" + keys["a|b_c"] + ", a_b|c=" + keys["a_b|c"],
		"tool_myserver_search: my-server|search=" + keys["my-server|search"] + ", myserver|search=" + keys["myserver|search"],
	}
	if diff := cmp.Diff(wantColl, gotColl); diff != "" {
		t.Errorf("collisions (-want +got):\n%s", diff)
	}

	// Stable across a refresh (new definitions), a reordering, a restart
	// (a new cache), and an unrelated tool added.
	reordered := slices.Clone(pairs)
	slices.Reverse(reordered)
	for name, rebuild := range map[string]func() *aitools.ToolSet{
		"refresh":   func() *aitools.ToolSet { return cache.Build(catalog(pairs...)) },
		"reordered": func() *aitools.ToolSet { return cache.Build(catalog(reordered...)) },
		"restart":   func() *aitools.ToolSet { return aitools.NewCache(noCall, nil).Build(catalog(pairs...)) },
		"unrelated tool added": func() *aitools.ToolSet {
			return cache.Build(catalog(append(slices.Clone(pairs), "github|merge_pull_request", "new-server|fs.read_file")...))
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := keysOf(rebuild())
			for pair, key := range keys {
				if got[pair] != key {
					t.Errorf("%s: key %q, was %q", pair, got[pair], key)
				}
			}
		})
	}

	// A tool with the same seed key as an existing one moves both to their
	// safe keys; the old key then names nothing (it never passes to the
	// other tool).
	set = cache.Build(catalog(append(slices.Clone(pairs), "git-hub|create_pull_request")...))
	if _, ok := set.Get("tool_github_create_pull_request"); ok {
		t.Errorf("the contested key still names a tool")
	}
	got := keysOf(set)
	if got["github|create_pull_request"] != aitools.SafeKey("github", "create_pull_request") ||
		got["git-hub|create_pull_request"] != aitools.SafeKey("git-hub", "create_pull_request") {
		t.Errorf("colliding tools got %q and %q, want their safe keys", got["github|create_pull_request"], got["git-hub|create_pull_request"])
	}
	// When it goes, the seed key comes back.
	if got := keysOf(cache.Build(catalog(pairs...))); got["github|create_pull_request"] != "tool_github_create_pull_request" {
		t.Errorf("after the colliding tool left: %q", got["github|create_pull_request"])
	}
}

// TestKeySeedMeetsSafe: a tool whose seed key equals another tool's safe
// key. Neither keeps the contested key, whatever the order.
func TestKeySeedMeetsSafe(t *testing.T) {
	safe := aitools.SafeKey("x", "y.z") // tool_x_y_z_<hash>
	impostor := strings.TrimPrefix(safe, "tool_x_")
	pairs := []string{"x|y.z", "x|" + impostor, "other|tool"}
	for _, order := range [][]string{pairs, {pairs[2], pairs[1], pairs[0]}} {
		set := aitools.NewCache(noCall, nil).Build(catalog(order...))
		keys := keysOf(set)
		if keys["x|y.z"] == safe || keys["x|"+impostor] == safe {
			t.Errorf("the contested key %q was given: %v", safe, keys)
		}
		if len(set.Collisions()) != 1 || set.Collisions()[0].Key != safe {
			t.Errorf("collisions %+v", set.Collisions())
		}
		if keys["x|"+impostor] != aitools.SafeKey("x", impostor) {
			t.Errorf("the impostor got %q, want its safe key", keys["x|"+impostor])
		}
		if !keyRE.MatchString(keys["x|y.z"]) || len(keys["x|y.z"]) != len(safe)+8 {
			t.Errorf("the safe-key tool got %q, want a 16-digit hash", keys["x|y.z"])
		}
	}
}

// TestKeyDuplicateIdentity: a server that lists a name twice. Both
// entries stay, with distinct keys.
func TestKeyDuplicateIdentity(t *testing.T) {
	set := aitools.NewCache(noCall, nil).Build(catalog("s|dup", "s|dup", "s|dup", "s|other"))
	if set.Len() != 4 {
		t.Fatalf("%d tools, want 4", set.Len())
	}
	seen := map[string]bool{}
	for tool := range set.All() {
		if seen[tool.Key] || !keyRE.MatchString(tool.Key) {
			t.Errorf("key %q duplicate or invalid", tool.Key)
		}
		seen[tool.Key] = true
		if s, n, _ := set.Lookup(tool.Key); s != tool.ServerID || n != tool.Name {
			t.Errorf("Lookup(%q) = %s/%s", tool.Key, s, n)
		}
	}
	if _, ok := set.Get("tool_s_other"); !ok {
		t.Errorf("tool_s_other missing")
	}
}

func FuzzKeys(f *testing.F) {
	f.Add("server-1", "create_charge", "myserver", "search")
	f.Add("my-server", "a.b/c", "myserver", "a.b/c")
	f.Add("", "", "-", "é")
	f.Add(strings.Repeat("s", 100), strings.Repeat("t", 100), "x", "y")
	f.Fuzz(func(t *testing.T, s1, n1, s2, n2 string) {
		if k := aitools.SafeKey(s1, n1); !keyRE.MatchString(k) {
			t.Fatalf("SafeKey(%q, %q) = %q", s1, n1, k)
		}
		set := aitools.NewCache(noCall, nil).Build(catalog(s1+"|"+n1, s2+"|"+n2, s1+"|"+n2, s2+"|"+n1))
		seen := map[string]bool{}
		for tool := range set.All() {
			if !keyRE.MatchString(tool.Key) || seen[tool.Key] {
				t.Fatalf("key %q invalid or duplicate", tool.Key)
			}
			seen[tool.Key] = true
		}
	})
}
