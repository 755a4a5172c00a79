package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/netguard"
)

// TestNetFlagsGuard: --allow-private and --allow-net decide which URLs
// serve's agents may reach. Each decision is the guard's check of the URL,
// made before any connection.
func TestNetFlagsGuard(t *testing.T) {
	tests := []struct {
		name    string
		flags   netFlags
		allowed []string
		blocked []string
	}{
		{"default", netFlags{}, []string{"http://127.0.0.1:1/mcp"},
			[]string{"http://10.20.0.5/mcp", "http://192.168.1.2/mcp", "http://169.254.169.254/"}},
		{"allow-private", netFlags{private: true}, []string{"http://10.20.0.5/mcp", "http://192.168.1.2/mcp", "http://[fd00::1]/mcp"},
			[]string{"http://169.254.169.254/", "http://0.0.0.0/"}},
		{"allow-net", netFlags{allow: rawHeaders{"10.20.0.0/16", "192.168.1.7", "10.30.1.1/24"}},
			[]string{"http://10.20.0.5/mcp", "http://10.20.255.1/", "http://192.168.1.7/mcp", "http://10.30.1.9/"},
			[]string{"http://10.21.0.5/mcp", "http://10.30.2.1/", "http://192.168.1.8/mcp", "http://172.16.0.1/", "http://169.254.169.254/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := tt.flags.guard()
			if err != nil {
				t.Fatal(err)
			}
			if g == nil {
				g, _ = netguard.New(nil, nil)
			}
			for _, u := range tt.allowed {
				if err := g.CheckURL(u); err != nil {
					t.Errorf("%s: %v", u, err)
				}
			}
			for _, u := range tt.blocked {
				if err := g.CheckURL(u); !errors.Is(err, netguard.ErrBlockedURL) {
					t.Errorf("%s allowed (%v)", u, err)
				}
			}
		})
	}
	for _, bad := range []string{"10.0.0.0/33", "lan", ""} {
		f := netFlags{allow: rawHeaders{bad}}
		var uerr *usageError
		if _, err := f.guard(); !errors.As(err, &uerr) || !strings.Contains(err.Error(), "--allow-net") {
			t.Errorf("--allow-net %q: %v", bad, err)
		}
	}
}

// TestServeAllowNet: serve's agents use the guard of its flags, and a
// blocked URL's error names them. (An ftp URL is refused for its scheme,
// once the guard has judged its host, so no test connects outside
// 127.0.0.0/8.)
func TestServeAllowNet(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	plain := startServe(t, "--db", filepath.Join(t.TempDir(), "plain.db"))
	line := runCmd(t, "add", "--server", plain.base, "lan", "http://10.20.0.5/mcp").errorLine(t, exitFailure)
	if !strings.Contains(line, "Blocked URL: http://10.20.0.5/mcp") || !strings.Contains(line, "start agentmcp serve with --allow-private, or --allow-net CIDR") {
		t.Errorf("default: %s", line)
	}
	// The API judges the host of an ftp URL first: blocked by default,
	// else refused for its scheme.
	ftp := func(base string) *api.APIError {
		c, err := client.New(client.AgentURL(base, "agentmcp", "default"), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.AddMCPServer(t.Context(), api.AddRequest{Name: "lan", URL: "ftp://10.20.0.5/"})
		var aerr *api.APIError
		if !errors.As(err, &aerr) {
			t.Fatalf("add ftp: %v", err)
		}
		return aerr
	}
	if aerr := ftp(plain.base); aerr.Code != api.CodeBlockedURL {
		t.Errorf("default, ftp: %+v", aerr)
	}
	open := startServe(t, "--db", filepath.Join(t.TempDir(), "open.db"), "--allow-net", "10.20.0.0/16")
	if aerr := ftp(open.base); aerr.Code != api.CodeInvalidURL {
		t.Errorf("--allow-net, inside, ftp: %+v", aerr)
	}
	if line := runCmd(t, "add", "--server", open.base, "lan", "http://10.21.0.5/mcp").errorLine(t, exitFailure); !strings.Contains(line, "Blocked URL") {
		t.Errorf("--allow-net, outside: %s", line)
	}
	if r := runCmd(t, "serve", "--allow-net", "lan"); r.code != exitUsage {
		t.Errorf("--allow-net lan: %+v", r)
	}
}

// TestInspectBlocked: inspect of a URL the guard refuses exits 1 with the
// reason (and --allow-private when that allows it), not 2 with usage. The
// guard refuses it before any connection.
func TestInspectBlocked(t *testing.T) {
	r := runCmd(t, "inspect", "http://10.0.0.1/mcp")
	line := r.errorLine(t, exitFailure)
	if want := "agentmcp: Blocked URL: http://10.0.0.1/mcp — MCP client connections to private/internal addresses are not allowed (10.0.0.1 is a private address); --allow-private allows private addresses"; line != want {
		t.Errorf("got  %s\nwant %s", line, want)
	}
	r = runCmd(t, "inspect", "--allow-private", "http://169.254.169.254/")
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, "cloud metadata") || strings.Contains(line, "--allow-private") || strings.Contains(line, "usage") {
		t.Errorf("metadata: %s", line)
	}
}

// TestServeBindFails: a serve that cannot listen (the port is taken)
// fails without creating its database or its lock file.
func TestServeBindFails(t *testing.T) {
	t.Setenv(envToken, "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	r := runCmd(t, "serve", "--addr", l.Addr().String(), "--db", filepath.Join(dir, "agentmcp.db"))
	if r.code != exitFailure || !strings.Contains(r.stderr, "address already in use") {
		t.Errorf("serve on a taken port: %+v", r)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("left behind: %v %v", entries, err)
	}
}
