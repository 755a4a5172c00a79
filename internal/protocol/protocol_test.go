package protocol

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestVersions(t *testing.T) {
	if diff := cmp.Diff([]string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, Versions()); diff != "" {
		t.Errorf("Versions() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, SessionVersions()); diff != "" {
		t.Errorf("SessionVersions() (-want +got):\n%s", diff)
	}
	v := Versions()
	v[0] = "changed"
	if Versions()[0] != Stateless {
		t.Error("Versions shares its slice with the caller")
	}
	if !slices.IsSortedFunc(Versions(), func(a, b string) int { return strings.Compare(b, a) }) {
		t.Error("Versions is not newest first")
	}
}

func TestEras(t *testing.T) {
	for _, tt := range []struct {
		v                             string
		supported, stateless, session bool
	}{
		{"2026-07-28", true, true, false},
		{"2025-11-25", true, false, true},
		{"2024-11-05", true, false, true},
		{"2027-01-01", false, true, false},
		{"2024-01-01", false, false, false},
		{"", false, false, false},
	} {
		if got := Supported(tt.v); got != tt.supported {
			t.Errorf("Supported(%q) = %v, want %v", tt.v, got, tt.supported)
		}
		if got := IsStateless(tt.v); got != tt.stateless {
			t.Errorf("IsStateless(%q) = %v, want %v", tt.v, got, tt.stateless)
		}
		if got := IsSession(tt.v); got != tt.session {
			t.Errorf("IsSession(%q) = %v, want %v", tt.v, got, tt.session)
		}
	}
}

// TestGoSDKVersions checks that agentmcp speaks the versions go-sdk does:
// its client negotiates over our transports and its server answers
// behind the gateway, whose fast path accepts the same versions. A go-sdk
// upgrade that adds one fails here, so that it is added in this package.
func TestGoSDKVersions(t *testing.T) {
	if diff := cmp.Diff(mcp.SupportedProtocolVersions(), Versions()); diff != "" {
		t.Errorf("Versions() differs from go-sdk's (-go-sdk +ours):\n%s", diff)
	}
}
