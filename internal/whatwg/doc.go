// Package whatwg parses and serialises URLs the way browsers and
// JavaScript runtimes do, following the WHATWG URL Standard
// (https://url.spec.whatwg.org/).
//
// Go's net/url implements RFC 3986 and leaves hosts alone: it accepts
// http://0x0a000001/ as a host name, keeps default ports, does not resolve
// dot segments and does not map internationalised names to punycode. A
// browser, and the reference TypeScript implementation this module follows,
// sees http://10.0.0.1/ in that URL. Deduplicating server URLs and judging
// them for server-side request forgery both need the browser's view, so
// agentmcp parses URLs with this package.
//
// Only absolute URLs are parsed: the basic URL parser runs without a base
// URL, so relative references fail. The special schemes (http, https, ws,
// wss, ftp and file) are parsed as the standard says, including file's
// Windows drive letter quirks; other schemes get opaque hosts and paths.
//
// The package follows the living standard as of July 2026. Two of its
// recent changes may not have reached every browser and runtime yet: '^'
// is percent-encoded in paths (March 2025), and an ASCII domain is only
// lower-cased, never rejected by UTS #46 (June 2026), so "xn--" labels
// that are not valid punycode are kept. Internationalised names go through
// golang.org/x/net/idna with the tables of the Go toolchain's Unicode
// version.
//
// # Usage
//
// Parse a URL and read its canonical parts, or serialise it again:
//
//	u, err := whatwg.Parse("HTTPS://MCP.Example.com:443/a/../mcp")
//	if err != nil {
//		return err
//	}
//	u.Host   // "mcp.example.com"
//	u.Href() // "https://mcp.example.com/mcp"
//
// Normalize is Parse followed by Href, for comparing URLs:
//
//	whatwg.Normalize("http://0x7f.1/m cp") // "http://127.0.0.1/m%20cp"
//
// ParseHost runs the host parser of a special URL on a bare host, as needed
// when all one has is the host of a dial address.
//
// # Concurrency
//
// Parse, Normalize and ParseHost are safe for concurrent use. A *URL is a
// plain value: reading it from many goroutines is safe, writing it is not.
//
// # Errors
//
// Every failure wraps ErrInvalidURL; test for it with errors.Is. The error
// text names the part of the URL that failed but never repeats the input,
// which may carry credentials.
package whatwg
