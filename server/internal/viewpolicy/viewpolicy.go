package viewpolicy

import (
	"regexp"
	"slices"
	"strings"

	"github.com/agentmcp/agentmcp/mcpclient"
)

// Policy is the Content-Security-Policy of a view: nothing but its
// inline scripts and styles, data: images, fonts and media, and the
// origins its _meta.ui.csp lists (safe ones: Source) for what they
// are listed for; sandboxed with scripts alone (an opaque origin, even
// when the view is opened outside its frame), framed only by the
// dashboard. host is the dashboard's, which no list may name.
func Policy(c mcpclient.ViewCSP, host string) string {
	src := func(list []string, base ...string) string {
		out := append([]string(nil), base...)
		for _, s := range list {
			if Source(s, host) && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return "'none'"
		}
		return strings.Join(out, " ")
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + src(c.ResourceDomains, "'unsafe-inline'"),
		"style-src " + src(c.ResourceDomains, "'unsafe-inline'"),
		"img-src " + src(c.ResourceDomains, "data:"),
		"font-src " + src(c.ResourceDomains, "data:"),
		"media-src " + src(c.ResourceDomains, "data:"),
		"connect-src " + src(c.ConnectDomains),
		"frame-src " + src(c.FrameDomains),
		"base-uri " + src(c.BaseURIDomains),
		"form-action 'none'",
		"frame-ancestors 'self'",
		"sandbox allow-scripts",
	}, "; ")
}

// sourceRE is an origin a view may list: https or wss (http or ws only
// for a loopback host), a host name (its leftmost label may be "*"), an
// optional port; no path, no keyword, no scheme alone, no bare "*".
var sourceRE = regexp.MustCompile(`^(https|wss|http|ws)://(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$`)

// Source reports whether s, from a view's _meta.ui.csp, may go into
// its policy: an origin (sourceRE), plain http only to loopback, and not
// the dashboard's own host (the API), whatever the scheme or port.
func Source(s, dashboardHost string) bool {
	s = strings.ToLower(s)
	m := sourceRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	scheme, rest, _ := strings.Cut(s, "://")
	hostname := rest
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		hostname = rest[:i]
	}
	if scheme == "http" || scheme == "ws" {
		if hostname != "localhost" && !strings.HasPrefix(hostname, "127.") {
			return false
		}
	}
	dh := strings.ToLower(dashboardHost)
	if i := strings.LastIndexByte(dh, ':'); i >= 0 && !strings.Contains(dh[i:], "]") {
		dh = dh[:i]
	}
	return hostname != dh && !strings.HasSuffix(dh, strings.TrimPrefix(hostname, "*"))
}
