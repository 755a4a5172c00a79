// Package viewpolicy is the policy a tool's MCP Apps view is served
// under by the dashboard: the Content-Security-Policy built from the
// view's _meta.ui.csp (Policy), taking only the origins that are safe to
// list (Source: https or wss, plain http only to loopback, never the
// dashboard's own host, no keywords, paths or injected directives), and
// sandboxed with scripts alone, so that a hostile view has an opaque
// origin, no access to the dashboard's DOM, cookies or token, and no
// reach to the API.
package viewpolicy
