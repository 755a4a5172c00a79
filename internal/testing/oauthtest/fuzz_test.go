package oauthtest

import "testing"

// FuzzJSONRPCCalls: the body parser never panics and finds tools only in
// tools/call messages.
func FuzzJSONRPCCalls(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	f.Add([]byte(`[{"method":"tools/list"},{"method":"tools/call","params":{"name":"y"}}]`))
	f.Add([]byte(`{"method":"tools/call","params":[1,2]}`))
	f.Add([]byte(`[1, "x", null]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		methods, tools := jsonRPCCalls(body)
		if len(tools) > len(methods) {
			t.Errorf("%d tools from %d methods", len(tools), len(methods))
		}
	})
}

// FuzzChallengeParam: quoted auth-params round-trip through a simple
// unquoting.
func FuzzChallengeParam(f *testing.F) {
	f.Add(`mcp:read mcp:write`)
	f.Add(`a"b\c`)
	f.Fuzz(func(t *testing.T, v string) {
		p := param("scope", v)
		quoted := p[len(`scope="`) : len(p)-1]
		var out []byte
		for i := 0; i < len(quoted); i++ {
			if quoted[i] == '\\' {
				i++
				if i == len(quoted) {
					t.Fatalf("dangling escape in %q", p)
				}
			} else if quoted[i] == '"' {
				t.Fatalf("unescaped quote in %q", p)
			}
			out = append(out, quoted[i])
		}
		if string(out) != v {
			t.Errorf("param(%q) = %s", v, p)
		}
	})
}
