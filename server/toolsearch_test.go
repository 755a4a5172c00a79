package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
)

// TestToolSearchRoute: GET .../tools?q= answers the matching tools best
// first with keys and scores, filters by server, honours limit, refuses
// bad input, and follows a catalog change.
func TestToolSearchRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	test, testURL := mcpServer(t, "s")
	files := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	for _, tool := range []*mcp.Tool{
		{Name: "read_text_file", Description: "Read the complete contents of a file as text."},
		{Name: "list_directory", Description: "List the files and directories in a path."},
		{Name: "write_file", Description: "Create a new file or overwrite one."},
	} {
		tool.InputSchema = map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string", "description": "Path of the file"}}}
		files.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	_, filesURL := mcpServerOf(t, files)
	for id, u := range map[string]string{"test": testURL, "files": filesURL} {
		if status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":%q,"url":%q,"id":%q}`, id, u, id)); status != http.StatusCreated {
			t.Fatalf("add %s: %d %s", id, status, b)
		}
	}

	search := func(query string) []api.ToolMatch {
		t.Helper()
		status, _, b := e.do("GET", agentPath+"/tools?"+query, "")
		if status != http.StatusOK {
			t.Fatalf("GET tools?%s: %d %s", query, status, b)
		}
		var out struct{ Tools []api.ToolMatch }
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("GET tools?%s: %v in %s", query, err, b)
		}
		return out.Tools
	}
	ids := func(ms []api.ToolMatch) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ServerID+"/"+m.Name)
		}
		return out
	}

	got := search("q=read+a+file")
	if len(got) == 0 || got[0].ServerID != "files" || got[0].Name != "read_text_file" || got[0].Key != "tool_files_read_text_file" ||
		got[0].Description == "" || !strings.Contains(string(got[0].InputSchema), `"path"`) {
		t.Fatalf("read a file: %+v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score || got[i].Score <= 0 {
			t.Errorf("read a file: scores not best first: %v", got)
		}
	}
	if got := search("q=sum+two+integers"); len(got) == 0 || got[0].ServerID != "test" || got[0].Name != "add" {
		t.Errorf("sum two integers: %v", ids(got))
	}
	if got := search("q=file&limit=1"); len(got) != 1 {
		t.Errorf("limit=1: %v", ids(got))
	}
	if got := search("q=file&serverId=test"); len(got) != 0 {
		t.Errorf("q=file&serverId=test: %v, want none", ids(got))
	}
	if got := search("q=file&serverName=files"); len(got) != 3 {
		t.Errorf("q=file&serverName=files: %v, want the 3 file tools", ids(got))
	}
	if got := search("q=zebra"); got == nil || len(got) != 0 {
		t.Errorf("q=zebra: %v, want an empty list", got)
	}

	for _, tt := range []struct{ query, want string }{
		{"q=", "q must not be empty"},
		{"q=file&limit=0", "limit"},
		{"q=file&limit=101", "limit"},
		{"q=file&limit=x", "limit"},
		{"q=file&sort=name", `sort`},
	} {
		status, _, b := e.do("GET", agentPath+"/tools?"+tt.query, "")
		if status != http.StatusBadRequest || !strings.Contains(string(b), tt.want) || !strings.Contains(string(b), api.CodeInvalidRequest) {
			t.Errorf("GET tools?%s: %d %s, want 400 naming %s", tt.query, status, b, tt.want)
		}
	}

	// The Go client, and a tool that appears later (list_changed).
	c, err := client.New(client.AgentURL(e.ts.URL, "test", "a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	test.AddTool("translate_subtitles")
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := c.SearchTools(t.Context(), client.Filter{}, "subtitles", 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 && got[0].Name == "translate_subtitles" && got[0].Key == "tool_test_translate_subtitles" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a tool added to the server is not found: %+v", got)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a safety deadline
	}
	got2, err := c.SearchTools(t.Context(), client.Filter{ServerID: []string{"files"}}, "directory", 0)
	if err != nil || len(got2) != 1 || got2[0].Name != "list_directory" {
		t.Errorf("client SearchTools with a filter: %+v, %v", got2, err)
	}
}
