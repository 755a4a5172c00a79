package stdio

import (
	"os"
	"runtime"
	"strings"
)

// inheritedNames are the variables of the program's environment that a
// stdio server started with [Environ] gets, on Unix: those the MCP SDKs
// pass (HOME, LOGNAME, PATH, SHELL, TERM, USER), those a program needs to
// find its temporary directory, time zone and language, and the Go race
// detector's settings (read by race-enabled Go programs only: a
// race-enabled build's supervisor is the program itself).
var inheritedNames = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
	"TMPDIR", "TZ", "LANG", "LANGUAGE",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	"GORACE",
}

// inheritedPrefixes are the prefixes of the other variables passed on, on
// Unix: the locale's categories (LC_ALL, LC_CTYPE, ...), the XDG base
// directories (where npm, uv and many servers keep their caches and
// configuration), npm's configuration (npx: its cache, registry and
// proxy), and uv's (uvx).
var inheritedPrefixes = []string{"LC_", "XDG_", "npm_config_", "NPM_CONFIG_", "UV_"}

// inheritedWindows are the variables passed on on Windows: those the MCP
// SDKs pass there (the system's and the user's directories, without which
// many programs cannot start).
var inheritedWindows = []string{
	"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
	"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "PROGRAMFILES", "COMSPEC",
}

// Environ returns the environment of a stdio server: the program's own
// variables that a server needs to start and find its way (the inherited
// set below) and extra (KEY=VALUE entries, which win over the inherited
// ones), and nothing else. A server does not see the program's secrets
// (an API token, a store's encryption key, a cloud provider's
// credentials) unless extra names them.
//
// The inherited set, on Unix: HOME, LOGNAME, PATH, SHELL, TERM and USER
// (what the MCP SDKs pass), TMPDIR, TZ, LANG, LANGUAGE and LC_*; XDG_*;
// npm_config_* and NPM_CONFIG_* (npx), UV_* (uvx); HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY and ALL_PROXY (either case), SSL_CERT_FILE,
// SSL_CERT_DIR and NODE_EXTRA_CA_CERTS (downloads behind a proxy or a
// private certificate authority); GORACE. On Windows: APPDATA, COMSPEC,
// HOMEDRIVE, HOMEPATH, LOCALAPPDATA, PATH, PATHEXT,
// PROCESSOR_ARCHITECTURE, PROGRAMFILES, SYSTEMDRIVE, SYSTEMROOT, TEMP,
// TMP, USERNAME and USERPROFILE. Pass os.Environ() in extra to give a
// server the whole environment.
func Environ(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, ok := strings.Cut(kv, "=")
		if ok && inherited(name) {
			env = append(env, kv)
		}
	}
	// exec.Cmd keeps the last value of a name given twice: extra wins.
	return append(env, extra...)
}

// inherited reports whether the variable name is passed on to servers.
func inherited(name string) bool {
	if runtime.GOOS == "windows" {
		for _, n := range inheritedWindows {
			if strings.EqualFold(n, name) {
				return true
			}
		}
		return false
	}
	for _, n := range inheritedNames {
		if n == name {
			return true
		}
	}
	for _, p := range inheritedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
