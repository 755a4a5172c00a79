package aitools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"get_file_contents", []string{"get", "fil", "content"}},
		{"getFileContents", []string{"get", "fil", "content"}},
		{"get-file-contents", []string{"get", "fil", "content"}},
		{"fs.readFile", []string{"fs", "read", "fil"}},
		{"HTTPServerURL", []string{"http", "server", "url"}},
		{"parseHTTPRequest", []string{"pars", "http", "request"}},
		{"base64 v2", []string{"bas", "64", "v", "2"}},
		{"List the files in a directory", []string{"list", "fil", "directory"}},
		{"directories entries queries", []string{"directory", "entry", "query"}},
		{"searches searching searched search", []string{"search", "search", "search", "search"}},
		{"creates created creating create", []string{"creat", "creat", "creat", "creat"}},
		{"processes boxes pushes", []string{"process", "box", "push"}},
		{"status access analysis", []string{"status", "access", "analysis"}},
		{"copied running committed", []string{"copy", "run", "commit"}},
		{"Résumé Ünïcode", []string{"résumé", "ünïcod"}},
		{"", nil},
		{"the of and", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, aitools.Terms(tt.in)); diff != "" {
				t.Errorf("Terms(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"get_file_contents", "HTTPServer", "ÀÉ-ß", "a1b2", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range aitools.Terms(s) {
			if term == "" {
				t.Fatalf("Terms(%q) has an empty term", s)
			}
			if strings.ToLower(term) != term {
				t.Fatalf("Terms(%q) has %q, not lowercase", s, term)
			}
		}
	})
}

// searchCatalog is a small catalog of tools as real servers describe them.
func searchCatalog() []aitools.MCPTool {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return []aitools.MCPTool{
		{ServerID: "fs", Def: &mcp.Tool{Name: "read_text_file", Description: "Read the complete contents of a file from the file system as text.",
			InputSchema: objectSchema(map[string]any{"path": str("Path of the file")}, "path")}},
		{ServerID: "fs", Def: &mcp.Tool{Name: "list_directory", Description: "Get a detailed listing of all files and directories in a specified path.",
			InputSchema: objectSchema(map[string]any{"path": str("")}, "path")}},
		{ServerID: "fs", Def: &mcp.Tool{Name: "move_file", Description: "Move or rename files and directories.",
			InputSchema: objectSchema(map[string]any{"source": str(""), "destination": str("")}, "source", "destination")}},
		{ServerID: "github", Def: &mcp.Tool{Name: "create_issue", Description: "Create a new issue in a GitHub repository.",
			InputSchema: objectSchema(map[string]any{"owner": str("Repository owner"), "repo": str("Repository name"), "title": str("Issue title")}, "owner", "repo", "title")}},
		{ServerID: "github", Def: &mcp.Tool{Name: "search_repositories", Description: "Search for GitHub repositories.",
			InputSchema: objectSchema(map[string]any{"query": str("Search query")}, "query")}},
		{ServerID: "slack", Def: &mcp.Tool{Name: "slack_post_message", Description: "Post a new message to a Slack channel.",
			InputSchema: objectSchema(map[string]any{"channel_id": str("The ID of the channel to post to"), "text": str("The message text to post")}, "channel_id", "text")}},
		{ServerID: "memory", Def: &mcp.Tool{Name: "delete_entities", Description: "Delete multiple entities and their associated relations from the knowledge graph.",
			InputSchema: objectSchema(map[string]any{"entityNames": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "An array of entity names to delete"}}, "entityNames")}},
	}
}

func matchKeys(ms []aitools.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Tool.Key
	}
	return out
}

func TestIndexSearch(t *testing.T) {
	set := aitools.NewCache(okCall, nil).Build(searchCatalog())
	for _, ranker := range []aitools.Ranker{aitools.RankBoosted, aitools.RankBM25} {
		idx := aitools.NewIndex(&aitools.IndexOptions{Ranker: ranker}).Update(set)
		tests := []struct{ query, want string }{
			{"read a file", "tool_fs_read_text_file"},
			{"readTextFile", "tool_fs_read_text_file"},
			{"list directories", "tool_fs_list_directory"},
			{"rename a file", "tool_fs_move_file"},
			{"open an issue on github", "tool_github_create_issue"},
			{"find repositories", "tool_github_search_repositories"},
			{"post message to channel", "tool_slack_slack_post_message"},
			{"delete_entities", "tool_memory_delete_entities"},
			{"entityNames", "tool_memory_delete_entities"},
		}
		for _, tt := range tests {
			if ranker == aitools.RankBM25 && (tt.query == "find repositories" || tt.query == "open an issue on github") {
				continue // needs synonyms: "find" for search, "open" for create
			}
			got := idx.Search(tt.query, 3)
			if len(got) == 0 || got[0].Tool.Key != tt.want {
				t.Errorf("%v: Search(%q) = %v, want %s first", ranker, tt.query, matchKeys(got), tt.want)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Score > got[i-1].Score {
					t.Errorf("%v: Search(%q): scores not best first: %v", ranker, tt.query, got)
				}
			}
		}
		if got := idx.Search("zebra quantum", 5); len(got) != 0 {
			t.Errorf("%v: a query of unknown words matched %v", ranker, matchKeys(got))
		}
		if got := idx.Search("", 5); len(got) != 0 {
			t.Errorf("%v: an empty query matched %v", ranker, matchKeys(got))
		}
		if got := idx.Search("file", 1); len(got) != 1 {
			t.Errorf("%v: limit 1 gave %d matches", ranker, len(got))
		}
		got := idx.SearchFunc("file", 10, func(t *aitools.Tool) bool { return t.ServerID == "github" })
		if len(got) != 0 {
			t.Errorf("%v: SearchFunc kept %v", ranker, matchKeys(got))
		}
	}
}

// TestIndexIncremental: an update reads only new or replaced definitions,
// drops tools that left, and finds what it should after each change.
func TestIndexIncremental(t *testing.T) {
	cat := searchCatalog()
	cache := aitools.NewCache(okCall, nil)
	idx := aitools.NewIndex(nil)
	idx.Update(cache.Build(cat))
	st := idx.Stats()
	if st.Indexed != int64(len(cat)) || st.Tools != len(cat) {
		t.Fatalf("after the first update: %+v, want %d indexed", st, len(cat))
	}
	// The same ToolSet again: nothing to do.
	idx.Update(cache.Build(cat))
	if st := idx.Stats(); st.Indexed != int64(len(cat)) || st.Rebuilds != 1 || st.Updates != 2 {
		t.Fatalf("unchanged catalog: %+v", st)
	}
	// One definition replaced (a list_changed), one tool gone, one new.
	cat2 := slices.Clone(cat)
	cat2[0] = aitools.MCPTool{ServerID: "fs", Def: &mcp.Tool{Name: "read_text_file", Description: "Read a file as text, with head and tail options."}}
	cat2 = slices.DeleteFunc(cat2, func(m aitools.MCPTool) bool { return m.Def.Name == "slack_post_message" })
	cat2 = append(cat2, aitools.MCPTool{ServerID: "slack", Def: &mcp.Tool{Name: "slack_list_channels", Description: "List public channels in the workspace."}})
	idx.Update(cache.Build(cat2))
	st = idx.Stats()
	if st.Indexed != int64(len(cat))+2 || st.Removed != 2 || st.Tools != len(cat2) {
		t.Errorf("after a change: %+v, want 2 more indexed, 2 removed, %d tools", st, len(cat2))
	}
	if got := idx.Search("post message", 5); slices.Contains(matchKeys(got), "tool_slack_slack_post_message") {
		t.Errorf("a removed tool is found: %v", matchKeys(got))
	}
	if got := idx.Search("slack channels", 1); len(got) != 1 || got[0].Tool.Key != "tool_slack_slack_list_channels" {
		t.Errorf("a new tool is not found: %v", matchKeys(got))
	}
	if got := idx.Search("head tail", 1); len(got) != 1 || got[0].Tool.Key != "tool_fs_read_text_file" || got[0].Tool.Def != cat2[0].Def {
		t.Errorf("a replaced definition is not found: %v", got)
	}

	// Many changes: dropped tools are compacted away and searches still
	// find the live ones.
	var big []aitools.MCPTool
	for i := range 300 {
		big = append(big, aitools.MCPTool{ServerID: "gen", Def: &mcp.Tool{Name: fmt.Sprintf("tool%d", i), Description: fmt.Sprintf("Generated tool number %d about widgets", i)}})
	}
	idx.Update(cache.Build(big))
	idx.Update(cache.Build(cat))
	st = idx.Stats()
	if st.Compactions == 0 || st.Tools != len(cat) {
		t.Errorf("after dropping 300 tools: %+v, want a compaction and %d tools", st, len(cat))
	}
	if got := idx.Search("widgets", 5); len(got) != 0 {
		t.Errorf("dropped tools found: %v", matchKeys(got))
	}
	if got := idx.Search("delete entities", 1); len(got) != 1 || got[0].Tool.Key != "tool_memory_delete_entities" {
		t.Errorf("after a compaction: %v", matchKeys(got))
	}
}

// TestIndexDuplicate: a definition listed twice (two tools, two keys, one
// *mcp.Tool) is indexed once, and dropped when it leaves.
func TestIndexDuplicate(t *testing.T) {
	def := &mcp.Tool{Name: "twice", Description: "Listed twice by its server: zanzibar."}
	cache := aitools.NewCache(okCall, nil)
	idx := aitools.NewIndex(nil).Update(cache.Build([]aitools.MCPTool{{ServerID: "s", Def: def}, {ServerID: "s", Def: def}}))
	if st := idx.Stats(); st.Tools != 1 || st.Indexed != 1 {
		t.Errorf("a definition listed twice: %+v", st)
	}
	if got := idx.Search("zanzibar", 5); len(got) != 1 {
		t.Errorf("found %v", matchKeys(got))
	}
	idx.Update(cache.Build(searchCatalog()))
	if got := idx.Search("zanzibar", 5); len(got) != 0 || idx.Stats().Tools != len(searchCatalog()) {
		t.Errorf("after it left: %v, %+v", matchKeys(got), idx.Stats())
	}
}

// TestIndexConcurrent: searches run while the index is updated (run with
// -race).
func TestIndexConcurrent(t *testing.T) {
	cache := aitools.NewCache(okCall, nil)
	a, b := cache.Build(searchCatalog()), aitools.NewCache(okCall, nil).Build(searchCatalog()[:3])
	idx := aitools.NewIndex(nil).Update(a)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				for _, m := range idx.Search("file directory issue", 5) {
					if m.Tool == nil || m.Tool.Key == "" {
						t.Error("a match without a tool")
						return
					}
				}
			}
		})
	}
	for i := range 200 {
		if i%2 == 0 {
			idx.Update(b)
		} else {
			idx.Update(a)
		}
	}
	wg.Wait()
}

// TestSearchMode drives the meta-tools through the executor (ExecuteAll):
// a search, a call by key with valid and invalid arguments, a direct
// call of a deferred tool, and always-loaded tools.
func TestSearchMode(t *testing.T) {
	rec := &recorder{}
	set := aitools.NewCache(rec.call, nil).Build(searchCatalog())
	idx := aitools.NewIndex(nil)
	mode := idx.SearchMode(set, &aitools.SearchModeOptions{AlwaysLoadedServers: []string{"slack"}, AlwaysLoadedTools: []string{"fs/move_file"}})

	var offered []string
	for tool := range mode.All() {
		offered = append(offered, tool.Key)
	}
	want := []string{aitools.SearchToolKey, aitools.CallToolKey, "tool_fs_move_file", "tool_slack_slack_post_message"}
	if diff := cmp.Diff(want, offered); diff != "" {
		t.Fatalf("offered tools (-want +got):\n%s", diff)
	}
	search, _ := mode.Get(aitools.SearchToolKey)
	if search.InputSchema["required"] == nil || search.Description == "" {
		t.Errorf("search_tools: %+v", search)
	}

	ctx := context.Background()
	outs := mode.ExecuteAll(ctx, []aitools.Call{
		{ID: "1", Key: aitools.SearchToolKey, Args: json.RawMessage(`{"query":"open an issue in a github repo","limit":2}`)},
		{ID: "2", Key: aitools.CallToolKey, Args: json.RawMessage(`{"key":"tool_github_create_issue","arguments":{"owner":"o","repo":"r","title":"Broken"}}`)},
		{ID: "3", Key: aitools.CallToolKey, Args: json.RawMessage(`{"key":"tool_github_create_issue","arguments":{"owner":"o"}}`)},
		{ID: "4", Key: aitools.CallToolKey, Args: json.RawMessage(`{"key":"tool_nope"}`)},
		{ID: "5", Key: aitools.SearchToolKey, Args: json.RawMessage(`{"limit":2}`)},
		{ID: "6", Key: "tool_fs_list_directory", Args: json.RawMessage(`{"path":"/tmp"}`)},
		{ID: "7", Key: aitools.CallToolKey, Args: json.RawMessage(`{"key":"tool_fs_read_text_file","arguments":{"path":"/x"},"extra":1}`)},
	}, 1)

	if err := outs[0].Err; err != nil {
		t.Fatalf("search_tools: %v", err)
	}
	var found struct {
		Tools []aitools.SearchResult `json:"tools"`
	}
	if err := json.Unmarshal([]byte(aitools.ResultText(outs[0].Result)), &found); err != nil {
		t.Fatalf("search_tools answered %q: %v", aitools.ResultText(outs[0].Result), err)
	}
	if len(found.Tools) != 2 || found.Tools[0].Key != "tool_github_create_issue" || found.Tools[0].Server != "github" ||
		!strings.Contains(string(found.Tools[0].InputSchema), `"owner"`) || found.Tools[0].Description == "" {
		t.Errorf("search_tools found %+v", found.Tools)
	}

	if err := outs[1].Err; err != nil || !strings.Contains(aitools.ResultText(outs[1].Result), "Broken") {
		t.Errorf("call_tool: %v, %v", outs[1].Result, err)
	}
	var argsErr *aitools.ArgumentsError
	if !errors.As(outs[2].Err, &argsErr) || argsErr.Key != "tool_github_create_issue" || !strings.Contains(argsErr.Error(), "repo") {
		t.Errorf("call_tool with a missing argument: %v", outs[2].Err)
	}
	if !errors.Is(outs[3].Err, aitools.ErrUnknownTool) {
		t.Errorf("call_tool with an unknown key: %v", outs[3].Err)
	}
	if !errors.As(outs[4].Err, &argsErr) || argsErr.Key != aitools.SearchToolKey {
		t.Errorf("search_tools without a query: %v", outs[4].Err)
	}
	if outs[5].Err != nil {
		t.Errorf("a deferred tool called by its key: %v", outs[5].Err)
	}
	if !errors.As(outs[6].Err, &argsErr) || argsErr.Key != aitools.CallToolKey {
		t.Errorf("call_tool with an unknown property: %v", outs[6].Err)
	}
	// Only the valid calls reached the server, once each.
	if diff := cmp.Diff([]string{"github/create_issue", "fs/list_directory"}, rec.calls); diff != "" {
		t.Errorf("calls that reached the server (-want +got):\n%s", diff)
	}

	// A tool error comes back as the tool's own error.
	rec.reply = func(server, tool string, args map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "repository archived"}}}, nil
	}
	_, err := mode.Execute(ctx, aitools.CallToolKey, json.RawMessage(`{"key":"tool_github_create_issue","arguments":{"owner":"o","repo":"r","title":"t"}}`))
	var toolErr *aitools.ToolError
	if !errors.As(err, &toolErr) || toolErr.Message != "repository archived" || toolErr.Name != "create_issue" {
		t.Errorf("a tool error through call_tool: %v", err)
	}

	// No match is still JSON, with a note for the model.
	res, err := mode.Execute(ctx, aitools.SearchToolKey, json.RawMessage(`{"query":"zebra quantum"}`))
	var none struct {
		Tools []aitools.SearchResult `json:"tools"`
		Note  string                 `json:"note"`
	}
	if err != nil || json.Unmarshal([]byte(aitools.ResultText(res)), &none) != nil || none.Tools == nil || len(none.Tools) != 0 || none.Note == "" {
		t.Errorf("a search that matches nothing: %q, %v", aitools.ResultText(res), err)
	}

	// Search mode over a newer catalog: the index follows, and the old
	// mode's search keeps to its own catalog.
	cat2 := searchCatalog()[:2]
	newer := aitools.NewCache(rec.call, nil).Build(cat2)
	mode2 := idx.SearchMode(newer, nil)
	if _, ok := mode2.Get("tool_github_create_issue"); ok {
		t.Error("a tool of the older catalog is reachable in the newer mode")
	}
	res, err = mode.Execute(ctx, aitools.SearchToolKey, json.RawMessage(`{"query":"github issue"}`))
	if err != nil || strings.Contains(aitools.ResultText(res), "create_issue") {
		t.Errorf("the older mode's search after the index moved on: %v, %v", aitools.ResultText(res), err)
	}
	if n := mode2.Len(); n != 2 {
		t.Errorf("a mode with nothing always loaded offers %d tools, want the 2 meta-tools", n)
	}
}
