package mcpclient_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodLog serves mcptest's server in a mode and records the method of
// every request posted to it.
type methodLog struct {
	mu      sync.Mutex
	methods []string
}

var anyMethod = regexp.MustCompile(`"method":"([^"]+)"`)

func (l *methodLog) serve(t *testing.T, mode mcptest.Mode, srv *mcptest.Server) *mcptest.HTTPServer {
	h := mcptest.Handler(t, mode, func() *mcp.Server { return srv.Server })
	return mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if m := anyMethod.FindSubmatch(body); r.Method == http.MethodPost && m != nil {
			l.mu.Lock()
			l.methods = append(l.methods, string(m[1]))
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
}

func (l *methodLog) count(method string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.methods {
		if m == method {
			n++
		}
	}
	return n
}

// TestToolsOnly: with ClientOptions.ToolsOnly, a discovery sends
// tools/list alone, a change of the server's prompts is not listed, and a
// change of its tools is; without it, every list goes out. Both eras.
func TestToolsOnly(t *testing.T) {
	otherLists := []string{"prompts/list", "resources/list", "resources/templates/list"}
	for _, era := range httpEras {
		t.Run(era.name, func(t *testing.T) {
			ctx := testCtx(t)
			m := newManager(t, nil)

			srv := mcptest.NewServer("tools-only")
			var only methodLog
			connectReady(t, m, "only", mcpclient.ServerOptions{URL: only.serve(t, era.mode, srv).URL,
				Client: mcpclient.ClientOptions{ToolsOnly: true}})
			if n := only.count("tools/list"); n != 1 {
				t.Errorf("tools/list sent %d times, want 1", n)
			}
			for _, l := range otherLists {
				if n := only.count(l); n != 0 {
					t.Errorf("%s sent %d times, want none", l, n)
				}
			}
			f := mcpclient.Filter{ServerID: []string{"only"}}
			if len(m.ListTools(f)) == 0 {
				t.Error("no tools listed")
			}
			if n := len(m.ListPrompts(f)) + len(m.ListResources(f)) + len(m.ListResourceTemplates(f)); n != 0 {
				t.Errorf("%d prompts, resources and templates listed, want none", n)
			}

			// A prompt added, then a tool: the tools are listed again, the
			// prompts never.
			srv.AddPrompt(&mcp.Prompt{Name: "later"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
			srv.AddTool("later")
			deadline := time.Now().Add(10 * time.Second)
			for !slices.ContainsFunc(m.ListTools(f), func(tl mcpclient.Tool) bool { return tl.Name == "later" }) {
				if time.Now().After(deadline) {
					t.Fatal("the tool added later was never listed")
				}
				time.Sleep(5 * time.Millisecond)
			}
			m.WaitForConnections(ctx)
			if n := only.count("prompts/list"); n != 0 {
				t.Errorf("prompts/list sent %d times after the prompts changed, want none", n)
			}

			// The default lists everything the server advertises.
			var all methodLog
			connectReady(t, m, "all", mcpclient.ServerOptions{URL: all.serve(t, era.mode, mcptest.NewServer("all")).URL})
			for _, l := range append(otherLists, "tools/list") {
				if n := all.count(l); n != 1 {
					t.Errorf("by default, %s sent %d times, want 1", l, n)
				}
			}
		})
	}
}
