package api

import "testing"

// TestAddRequestCheck: Check refuses what the server refuses before
// anything else, with the code it answers, and passes the rest.
func TestAddRequestCheck(t *testing.T) {
	tests := []struct {
		name string
		req  AddRequest
		code string // "" when it passes
	}{
		{"url server", AddRequest{Name: "docs", URL: "https://example.com/mcp", Transport: &TransportRequest{Type: "sse", Headers: map[string]string{"X-Key": "v"}}}, ""},
		{"stdio server", AddRequest{Name: "fs", Command: "npx", Args: []string{"-y", "x"}, Env: map[string]string{"K": "v"}, Transport: &TransportRequest{Type: "stdio"}}, ""},
		{"no name", AddRequest{Name: " ", URL: "https://example.com/"}, CodeInvalidRequest},
		{"long name", AddRequest{Name: string(make([]rune, MaxNameLength+1)), URL: "https://example.com/"}, CodeInvalidRequest},
		{"bidi name", AddRequest{Name: "a\u202eb", URL: "https://example.com/"}, CodeInvalidRequest},
		{"blank id", AddRequest{Name: "a", ID: " ", URL: "https://example.com/"}, CodeInvalidRequest},
		{"neither", AddRequest{Name: "a"}, CodeInvalidRequest},
		{"both", AddRequest{Name: "a", URL: "https://example.com/", Command: "x"}, CodeInvalidRequest},
		{"args on a url", AddRequest{Name: "a", URL: "https://example.com/", Args: []string{"x"}}, CodeInvalidRequest},
		{"relative url", AddRequest{Name: "a", URL: "/mcp"}, CodeInvalidURL},
		{"ftp url", AddRequest{Name: "a", URL: "ftp://example.com/"}, CodeInvalidURL},
		{"unknown transport", AddRequest{Name: "a", URL: "https://example.com/", Transport: &TransportRequest{Type: "ws"}}, CodeInvalidRequest},
		{"bad header name", AddRequest{Name: "a", URL: "https://example.com/", Transport: &TransportRequest{Headers: map[string]string{"X Key": "v"}}}, CodeInvalidRequest},
		{"bad header value", AddRequest{Name: "a", URL: "https://example.com/", Transport: &TransportRequest{Headers: map[string]string{"X-Key": "a\nb"}}}, CodeInvalidRequest},
		{"sse for a command", AddRequest{Name: "a", Command: "x", Transport: &TransportRequest{Type: "sse"}}, CodeInvalidRequest},
		{"headers for a command", AddRequest{Name: "a", Command: "x", Transport: &TransportRequest{Headers: map[string]string{"K": "v"}}}, CodeInvalidRequest},
		{"NUL in an arg", AddRequest{Name: "a", Command: "x", Args: []string{"a\x00"}}, CodeInvalidRequest},
		{"bad env name", AddRequest{Name: "a", Command: "x", Env: map[string]string{"A=B": "v"}}, CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aerr := tt.req.Check()
			switch {
			case tt.code == "" && aerr != nil:
				t.Errorf("Check: %v; want nil", aerr)
			case tt.code != "" && (aerr == nil || aerr.Code != tt.code || aerr.Status != 400):
				t.Errorf("Check: %+v; want 400 %s", aerr, tt.code)
			}
		})
	}
}
