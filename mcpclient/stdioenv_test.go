package mcpclient_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestStdioEnvironment: a stdio server gets the variables its entry names
// and the few every server needs (PATH, HOME, the locale, npm's), not the
// rest of the program's environment: not serve's token, not the store's
// key, not anything else.
func TestStdioEnvironment(t *testing.T) {
	t.Setenv("AGENTMCP_TOKEN", "token-of-serve")
	t.Setenv("AGENTMCP_SECRET_KEY", "key-of-the-store")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "cloud-credentials")
	t.Setenv("LC_TIME", "C")
	t.Setenv("npm_config_cache", "/tmp/npm-cache")
	t.Setenv("HOME", "/home/someone")
	m := newManager(t, nil)
	connectReady(t, m, "s", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{Path: os.Args[0],
		Env: []string{"AGENTMCP_TEST_STDIO_SERVER=env", "GITHUB_TOKEN=named-by-the-entry", "HOME=/home/server"}}})
	res, err := m.CallTool(testCtx(t), "s", "env", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(textOf(t, res), "\n")
	names := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		names[k] = v
	}
	for _, secret := range []string{"AGENTMCP_TOKEN", "AGENTMCP_SECRET_KEY", "AWS_SECRET_ACCESS_KEY", "AGENTMCP_STDIO_SUPERVISOR"} {
		if _, ok := names[secret]; ok {
			t.Errorf("the server got %s", secret)
		}
	}
	want := map[string]string{
		"AGENTMCP_TEST_STDIO_SERVER": "env",
		"GITHUB_TOKEN":               "named-by-the-entry",
		"HOME":                       "/home/server", // the entry's value wins
		"PATH":                       os.Getenv("PATH"),
		"LC_TIME":                    "C",
		"npm_config_cache":           "/tmp/npm-cache",
	}
	for k, v := range want {
		if got, ok := names[k]; !ok || got != v {
			t.Errorf("the server's %s = %q (set: %v); want %q", k, got, ok, v)
		}
	}
	for k := range names {
		if _, ok := want[k]; !ok && !slices.Contains([]string{"USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "TZ", "LANG", "LANGUAGE", "GORACE",
			"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
			"http_proxy", "https_proxy", "no_proxy", "all_proxy"}, k) &&
			!strings.HasPrefix(k, "LC_") && !strings.HasPrefix(k, "XDG_") && !strings.HasPrefix(k, "npm_config_") && !strings.HasPrefix(k, "NPM_CONFIG_") && !strings.HasPrefix(k, "UV_") {
			t.Errorf("the server got %s, which neither its entry nor the inherited set names", k)
		}
	}
}
