package policy

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxPatternBytes bounds a server or tool pattern.
const MaxPatternBytes = 256

// CheckToolPattern returns why p is not a tool pattern, "SERVER" or
// "SERVER/TOOL" with the wildcards * and ?, or "" when it is one.
func CheckToolPattern(p string) string {
	if p == "" {
		return "empty: want SERVER or SERVER/TOOL"
	}
	if len(p) > MaxPatternBytes {
		return fmt.Sprintf("longer than %d bytes", MaxPatternBytes)
	}
	if !utf8.ValidString(p) {
		return "not UTF-8"
	}
	server, tool, hasTool := strings.Cut(p, "/")
	switch {
	case server == "":
		return "no server part before the '/': want SERVER or SERVER/TOOL (* matches every server)"
	case hasTool && tool == "":
		return "no tool part after the '/': want SERVER or SERVER/TOOL (SERVER/* is SERVER's tools)"
	}
	if reason := checkServer(server); reason != "" {
		return reason
	}
	for _, r := range tool {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return "the tool part has a space or a control character"
		}
	}
	return ""
}

// checkServerPattern returns why p is not a server pattern, or "".
func checkServerPattern(p string) string {
	switch {
	case p == "":
		return "empty: want a server id pattern"
	case len(p) > MaxPatternBytes:
		return fmt.Sprintf("longer than %d bytes", MaxPatternBytes)
	case strings.Contains(p, "/"):
		return "a server pattern has no '/' (tools takes SERVER/TOOL)"
	}
	return checkServer(p)
}

func checkServer(server string) string {
	for _, r := range server {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '*' || r == '?') {
			return fmt.Sprintf("server part %q: server ids have lower-case letters, digits, '_' and '-' only (and the wildcards * and ?)", server)
		}
	}
	return ""
}

// MatchTool reports whether the tool pattern p ("SERVER" or
// "SERVER/TOOL") matches tool of server serverID: SERVER alone matches
// every tool of the server.
func MatchTool(p, serverID, tool string) bool {
	s, t, hasTool := strings.Cut(p, "/")
	return Glob(s, serverID) && (!hasTool || Glob(t, tool))
}

// Glob reports whether name matches pattern, where "*" is any run of
// characters ("/" included) and "?" one character; every other character
// stands for itself. It backtracks to the last "*" only, so it takes time
// linear in len(pattern)*len(name) at worst, and allocates nothing.
func Glob(pattern, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, 0
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					_, size := utf8.DecodeRuneInString(name[nx:])
					px++
					nx += size
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if starPx >= 0 && starNx < len(name) {
			_, size := utf8.DecodeRuneInString(name[starNx:])
			starNx += size
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}
