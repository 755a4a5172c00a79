package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBlockedBeforeScheme: the commands judge a server URL's host before
// its scheme, as netguard documents: a blocked host under another scheme is
// a blocked URL; an allowed one is a wrong scheme (a usage error).
func TestBlockedBeforeScheme(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect", "ftp://10.0.0.1/"}, exitFailure, "Blocked URL: ftp://10.0.0.1/"},
		{[]string{"call", "ftp://169.254.169.254/", "t"}, exitFailure, "Blocked URL: ftp://169.254.169.254/"},
		{[]string{"inspect", "--allow-private", "ftp://169.254.169.254/"}, exitFailure, "Blocked URL"},
		{[]string{"inspect", "--allow-private", "ftp://10.0.0.1/"}, exitUsage, `scheme "ftp"`},
		{[]string{"add", "--db", db, "s", "ftp://user:pw@10.0.0.1/?k=v"}, exitFailure, "Blocked URL: ftp://10.0.0.1/"},
		{[]string{"add", "--db", db, "s", "ftp://example.com/"}, exitUsage, `scheme "ftp"`},
	}
	for _, tt := range tests {
		r := runCmd(t, tt.args...)
		line := r.errorLine(t, tt.code)
		if !strings.Contains(line, tt.want) {
			t.Errorf("%v: %q, want %q", tt.args, line, tt.want)
		}
		if strings.Contains(line, "pw") || strings.Contains(line, "k=v") {
			t.Errorf("%v: the error shows a URL secret: %q", tt.args, line)
		}
	}
}
