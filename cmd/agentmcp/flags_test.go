package main

import (
	"errors"
	"flag"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		wantPositional []string
		wantCommand    []string
		wantHasCommand bool
		wantTool       string
		wantArgs       string
		wantHeaders    []string
		wantErr        string
	}{
		{name: "url-tool-args", args: []string{"http://x/mcp", "echo", "--args", `{"a":1}`},
			wantPositional: []string{"http://x/mcp", "echo"}, wantArgs: `{"a":1}`},
		{name: "interspersed", args: []string{"--header", "A: b", "http://x/mcp", "-header=C: d", "echo"},
			wantPositional: []string{"http://x/mcp", "echo"}, wantHeaders: []string{"A: b", "C: d"}},
		{name: "command", args: []string{"echo", "--args", "{}", "--", "node", "server.js", "--args", "x"},
			wantPositional: []string{"echo"}, wantArgs: "{}",
			wantCommand: []string{"node", "server.js", "--args", "x"}, wantHasCommand: true},
		{name: "command-only", args: []string{"--", "server"},
			wantCommand: []string{"server"}, wantHasCommand: true},
		{name: "empty-command", args: []string{"--"},
			wantCommand: []string{}, wantHasCommand: true},
		{name: "dashdash-as-value", args: []string{"--tool", "--", "--", "server", "--"},
			wantTool: "--", wantCommand: []string{"server", "--"}, wantHasCommand: true},
		{name: "dashdash-as-value-equals", args: []string{"--tool=--", "http://x/mcp"},
			wantTool: "--", wantPositional: []string{"http://x/mcp"}},
		{name: "single-dash", args: []string{"-", "-tool", "t"},
			wantPositional: []string{"-"}, wantTool: "t"},
		{name: "unknown", args: []string{"http://x/mcp", "--nope", "--", "x"}, wantErr: "flag provided but not defined: -nope"},
		{name: "missing-value", args: []string{"http://x/mcp", "--args"}, wantErr: "flag needs an argument: -args"},
		{name: "missing-value-before-dashdash", args: []string{"--args", "--"}, wantCommand: []string{}, wantArgs: "--", wantHasCommand: false},
		{name: "help", args: []string{"http://x/mcp", "-h", "--", "x"}, wantErr: flag.ErrHelp.Error()},
		{name: "triple-dash", args: []string{"---tool", "x"}, wantErr: "bad flag syntax: ---tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFlagSet("call")
			var cf connFlags
			cf.register(fs)
			var tool, args string
			fs.StringVar(&tool, "tool", "", "")
			fs.StringVar(&args, "args", "", "")
			positional, command, hasCommand, err := parseArgs(fs, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var uerr *usageError
				if !errors.Is(err, flag.ErrHelp) && !errors.As(err, &uerr) {
					t.Errorf("err = %T, want a *usageError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantHasCommand != hasCommand {
				t.Errorf("hasCommand = %v, want %v", hasCommand, tt.wantHasCommand)
			}
			if tt.wantHasCommand {
				if diff := cmp.Diff(tt.wantCommand, command); diff != "" {
					t.Errorf("command (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tt.wantPositional, positional); diff != "" {
				t.Errorf("positional (-want +got):\n%s", diff)
			}
			if tool != tt.wantTool || args != tt.wantArgs {
				t.Errorf("tool, args = %q, %q; want %q, %q", tool, args, tt.wantTool, tt.wantArgs)
			}
			if diff := cmp.Diff(tt.wantHeaders, []string(cf.headers)); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseHeaders(t *testing.T) {
	tests := []struct {
		name    string
		raw     []string
		want    http.Header
		wantErr string
	}{
		{name: "none"},
		{name: "simple", raw: []string{"Authorization: Bearer abc"},
			want: http.Header{"Authorization": {"Bearer abc"}}},
		{name: "canonical-and-repeated", raw: []string{"x-api-key:k1", "X-API-KEY:  k2  "},
			want: http.Header{"X-Api-Key": {"k1", "k2"}}},
		{name: "empty-value", raw: []string{"X-Empty:"}, want: http.Header{"X-Empty": {""}}},
		{name: "colon-in-value", raw: []string{"X-Url: http://a:b@c"}, want: http.Header{"X-Url": {"http://a:b@c"}}},
		{name: "no-colon", raw: []string{"Bearer abc"}, wantErr: "found no colon"},
		{name: "space-before-colon", raw: []string{"X-A : b"}, wantErr: `"X-A " is not a valid header name`},
		{name: "empty-name", raw: []string{": b"}, wantErr: `"" is not a valid header name`},
		{name: "newline", raw: []string{"X-A: b\nX-B: c"}, wantErr: "line break or control character"},
		{name: "nul", raw: []string{"X-A: b\x00"}, wantErr: "line break or control character"},
		{name: "trailing-cr", raw: []string{"X-A: b\r"}, wantErr: "line break or control character"},
		{name: "reserved", raw: []string{"Content-Type: text/plain"}, wantErr: "the transport sets it"},
		{name: "reserved-param", raw: []string{"mcp-param-region: eu"}, wantErr: "the transport sets it"},
		{name: "host", raw: []string{"host: example.com"}, wantErr: "the transport sets it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := parseHeaders(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseHeaders checks that parseHeaders never quotes a header value in
// an error, and that what it accepts is a valid header.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"A: b", "Authorization: Bearer token", "no colon at all", "X: a\r\nb",
		": value", "Bad Name: value", "Content-Type: x", "X:\x00", "X-Ü: v", "X: ü", "0:\r", "X: v\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		h, secrets, err := parseHeaders([]string{raw})
		_, value, _ := strings.Cut(raw, ":")
		value = strings.Trim(value, " \t")
		if err != nil {
			if len(value) >= minSecretValue && strings.Contains(err.Error(), value) {
				// The name may legitimately contain the same text; only
				// a quoted value is a leak.
				name, _, _ := strings.Cut(raw, ":")
				if !strings.Contains(name, value) && !strings.Contains(`"`+name+`"`, value) {
					t.Errorf("error %q quotes the value %q", err, value)
				}
			}
			return
		}
		if len(h) != 1 {
			t.Fatalf("parseHeaders(%q) = %v, want one header", raw, h)
		}
		for k, vs := range h {
			if k != http.CanonicalHeaderKey(k) || len(vs) != 1 || vs[0] != value {
				t.Errorf("parseHeaders(%q) = %v", raw, h)
			}
		}
		if len(value) >= minSecretValue && (len(secrets) == 0 || secrets[0] != value) {
			t.Errorf("parseHeaders(%q): secrets %q lack the value", raw, secrets)
		}
	})
}

func TestRedact(t *testing.T) {
	var cf connFlags
	cf.timeout = defaultTimeout
	cf.transport = "auto"
	cf.headers = rawHeaders{"Authorization: Bearer tok-0123456789", "X-Short: 1"}
	raw := "http://user:pa55word-xyz@127.0.0.1:1/mcp?key=k-0123456789&x=1"
	spec, _, err := cf.server([]string{raw}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if spec.display != "http://127.0.0.1:1/mcp" {
		t.Errorf("display = %q", spec.display)
	}
	orig := errors.New(`Post "` + raw + `": refused; token tok-0123456789; header "Bearer tok-0123456789"; key=k-0123456789&x=1; pa55word-xyz; 127.0.0.1`)
	got := spec.redact(orig)
	want := `Post "http://127.0.0.1:1/mcp": refused; token [redacted]; header "[redacted]"; [redacted]; [redacted]; 127.0.0.1`
	if got.Error() != want {
		t.Errorf("redact =\n%s\nwant\n%s", got, want)
	}
	if !errors.Is(got, orig) {
		t.Error("the redacted error does not wrap the original")
	}
	if plain := errors.New("nothing secret"); spec.redact(plain) != plain {
		t.Error("redact changed an error without secrets")
	}
}
