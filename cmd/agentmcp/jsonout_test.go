package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// hostileText is server text with HTML characters and every bidirectional
// control that reorders what a terminal shows (Trojan Source).
const hostileText = "a <b> & c \u202a\u202b\u202c\u202d\u202e \u2066\u2067\u2068\u2069 \u200e\u200f\u061c \u0085\u009b end"

// terminalRunes are the characters no JSON output may carry raw.
var terminalRunes = []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
	0x200e, 0x200f, 0x061c, 0x85, 0x9b}

// TestJSONOutputTerminalSafe runs every command that prints server text
// as JSON against a server whose names, descriptions, instructions and
// results carry bidirectional controls and <, > and &: the controls are
// \u escapes, the HTML characters are printed as they are, and the JSON
// still decodes to the server's text.
func TestJSONOutputTerminalSafe(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Title: hostileText, Version: "1"},
		&mcp.ServerOptions{Instructions: hostileText})
	mcp.AddTool(srv, &mcp.Tool{Name: "t", Description: hostileText},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: hostileText}}}, nil, nil
		})
	hs := serveServer(t, mcptest.Stateful, srv)
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	runCmd(t, "add", "--db", db, "s", hs.URL).mustSucceed(t)

	for _, args := range [][]string{
		{"inspect", hs.URL},
		{"call", hs.URL, "t"},
		{"call", "--db", db, "s", "t"},
		{"tools", "--db", db, "--json"},
		{"ls", "--db", db, "--json", "--connect"},
	} {
		t.Run(args[0], func(t *testing.T) {
			r := runCmd(t, args...)
			r.mustSucceed(t)
			for _, c := range terminalRunes {
				if strings.ContainsRune(r.stdout, c) {
					t.Errorf("%v prints U+%04X raw", args, c)
				}
			}
			if strings.Contains(r.stdout, `\u003c`) || strings.Contains(r.stdout, `\u0026`) || !strings.Contains(r.stdout, "a <b> & c") {
				t.Errorf("%v escapes <, > or &:\n%s", args, r.stdout)
			}
			if !strings.Contains(r.stdout, `\u202e`) {
				t.Errorf("%v lacks the escaped U+202E:\n%s", args, r.stdout)
			}
			var v any
			decode(t, r.stdout, &v)
			if !strings.Contains(flatten(v), hostileText) {
				t.Errorf("%v: the decoded output lacks the server's text", args)
			}
		})
	}
}

// flatten joins every string of a decoded JSON value.
func flatten(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				b.WriteString(k)
				b.WriteByte('\n')
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

func TestTerminalSafe(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"html", "<a href=\"x\">&amp;</a>", `"<a href=\"x\">&amp;</a>"`},
		{"html from a marshaler", json.RawMessage(`{"k":"\u003cb\u003e \u0026 \u003E"}`), `{"k":"<b> & >"}`},
		{"escaped backslash before u003c", `\u003c`, `"\\u003c"`},
		{"bidi", "x\u202ey\u2066z", `"x\u202ey\u2066z"`},
		{"bidi key", map[string]int{"k\u202e": 1}, `{"k\u202e":1}`},
		{"c1", "\u009b31m", `"\u009b31m"`},
		{"line separators stay escaped", "\u2028\u2029", `"\u2028\u2029"`},
		{"other text", "héllo 世界 😀 \u200d", "\"héllo 世界 😀 \u200d\""},
		{"numbers and literals", []any{1.5, true, nil}, `[1.5,true,null]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeJSON(&b, tt.in); err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(b.Bytes(), &v); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, b.String())
			}
			var got bytes.Buffer
			json.Compact(&got, b.Bytes()) // keeps strings as they are
			if diff := cmp.Diff(tt.want, got.String()); diff != "" {
				t.Errorf("writeJSON(%q) (-want +got):\n%s", tt.in, diff)
			}
			var want any
			json.Unmarshal([]byte(tt.want), &want)
			if diff := cmp.Diff(want, v); diff != "" {
				t.Errorf("the value changed (-want +got):\n%s", diff)
			}
		})
	}
}
