package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// verdict is what a check decided, for tables.
type verdict int

const (
	allowed verdict = iota
	blocked
	unsupported
)

func (v verdict) String() string {
	return [...]string{"allowed", "blocked", "unsupported"}[v]
}

func verdictOf(t *testing.T, err error) verdict {
	t.Helper()
	switch {
	case err == nil:
		return allowed
	case errors.Is(err, ErrBlockedURL):
		var be *BlockedError
		if !errors.As(err, &be) {
			t.Errorf("error %v wraps ErrBlockedURL but is no *BlockedError", err)
		}
		if !strings.HasPrefix(err.Error(), "Blocked URL: ") {
			t.Errorf("message %q does not start with %q", err, "Blocked URL: ")
		}
		return blocked
	case errors.Is(err, ErrUnsupportedScheme):
		return unsupported
	}
	t.Errorf("unexpected error kind: %v", err)
	return -1
}

type urlCase struct {
	url  string
	want verdict
}

func runURLCases(t *testing.T, g *Guard, cases []urlCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.url, func(t *testing.T) {
			err := g.CheckURL(tt.url)
			if got := verdictOf(t, err); got != tt.want {
				t.Errorf("CheckURL(%q) = %v (%v), want %v", tt.url, got, err, tt.want)
			}
		})
	}
}

// TestCheckURLReference holds every example of the reference's section 5,
// "Verified decisions", with the same verdict unless marked. The reference
// lists most of them as bare hosts; they are checked as http:// URLs.
func TestCheckURLReference(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	runURLCases(t, g, []urlCase{
		// Blocked.
		{"http://10.0.0.1/", blocked},
		{"http://172.16.0.1/", blocked},
		{"http://172.31.255.255/", blocked},
		{"http://192.168.1.1/", blocked},
		{"http://169.254.169.254/", blocked},
		{"http://0.0.0.0/", blocked},
		{"http://0.1.2.3/", blocked},
		{"http://0/", blocked},
		{"http://10.1/", blocked},
		{"http://167772161/", blocked},
		{"http://0x0a000001/", blocked},
		{"http://[::]/", blocked},
		{"http://[0::0]/", blocked},
		{"http://[fc00::1]/", blocked},
		{"http://[fd12:3456::1]/", blocked},
		{"http://[fd00:ec2::254]/", blocked},
		{"http://[fe80::1]/", blocked},
		{"http://[fe81::1]/", blocked},
		{"http://[feab::1]/", blocked},
		{"http://[febf::1]/", blocked},
		{"http://[FE8F::1]/", blocked},
		{"http://[::ffff:a00:1]/", blocked},
		{"http://[::ffff:c0a8:101]/", blocked},
		{"http://[::ffff:ac10:1]/", blocked},
		{"http://[::ffff:a9fe:a9fe]/", blocked},
		{"http://[::ffff:10.0.0.1]/", blocked},
		{"http://[::ffff:0:0]/", blocked},
		{"http://metadata.google.internal/", blocked},
		{"ftp://10.0.0.1/", blocked},
		{"ws://192.168.0.1/", blocked},
		{"https://user:pw@10.0.0.1/", blocked},
		// Unparseable URLs (rule 1).
		{"not a url", blocked},
		{"http://[fe80::1%25eth0]/", blocked},

		// Allowed.
		{"http://localhost:8080/", allowed},
		{"http://127.0.0.1/", allowed},
		{"http://127.12.34.56:9999/", allowed},
		{"http://172.15.255.255/", allowed},
		{"http://172.32.0.1/", allowed},
		{"http://192.169.1.1/", allowed},
		{"http://169.253.0.1/", allowed},
		{"http://[::1]:8080/", allowed},
		{"http://[fe7f::1]/", allowed},
		{"http://[::ffff:127.0.0.1]/", allowed},
		{"http://8.8.8.8/", allowed},
		{"https://mcp.example.com/v1", allowed},
		{"http://224.0.0.1/", allowed},

		// Allowed by the reference, blocked here (issue 3).
		{"http://100.64.0.1/", blocked},
		{"http://[fec0::1]/", blocked},
		{"http://[64:ff9b::a00:1]/", blocked},
		{"http://[::a00:1]/", blocked},
		{"http://metadata.google.internal./", blocked},
	})
}

// TestCheckURLDefaults covers the default policy beyond the reference's
// examples.
func TestCheckURLDefaults(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	runURLCases(t, g, []urlCase{
		// IPv4 spellings, parsed as a browser would.
		{"http://0177.0.0.1/", allowed},
		{"http://0x7f.1/", allowed},
		{"http://2130706433/", allowed},
		{"http://0x7f000001/", allowed},
		{"http://012.0.0.1/", blocked},
		{"http://0xa.0x0.0x0.0x1/", blocked},
		{"http://%31%30.0.0.1/", blocked},
		{"http://１０.0.0.1/", blocked},
		{"http://10.0.0.1./", blocked},
		{"http://0x/", blocked},
		{"http://3232235777/", blocked}, // 192.168.1.1
		{"http://0xa9fea9fe/", blocked}, // 169.254.169.254

		// Range edges.
		{"http://9.255.255.255/", allowed},
		{"http://11.0.0.0/", allowed},
		{"http://100.63.255.255/", allowed},
		{"http://100.127.255.255/", blocked},
		{"http://100.128.0.0/", allowed},
		{"http://192.167.255.255/", allowed},
		{"http://192.168.255.255/", blocked},
		{"http://1.0.0.0/", allowed},
		{"http://[fbff::1]/", allowed},
		{"http://[fe00::1]/", allowed},
		{"http://[fec0::]/", blocked},
		{"http://[feff:ffff::1]/", blocked},
		{"http://[ff02::1]/", allowed},
		{"http://255.255.255.255/", allowed},
		{"http://[2606:4700::1111]/", allowed},

		// Cloud metadata.
		{"http://METADATA.GOOGLE.INTERNAL/", blocked},
		{"http://metadata.google.internal../", blocked},
		{"http://metadata.google.internal:8080/computeMetadata/v1/", blocked},
		{"http://169.254.170.2/v2/credentials", blocked},
		{"http://100.100.100.200/latest/meta-data/", blocked},
		{"http://[::ffff:169.254.169.254]/", blocked},
		{"http://metadata.google.internal.evil.example/", allowed},
		// Names are judged by address at dial time, not here.
		{"http://10.0.0.1.nip.io/", allowed},

		// IPv6 forms that embed an IPv4 address are judged by it.
		{"http://[::ffff:8.8.8.8]/", allowed},
		{"http://[::a9fe:a9fe]/", blocked},       // IPv4-compatible 169.254.169.254
		{"http://[::808:808]/", allowed},         // IPv4-compatible 8.8.8.8
		{"http://[::7f00:1]/", allowed},          // IPv4-compatible 127.0.0.1: loopback
		{"http://[::2]/", blocked},               // IPv4-compatible 0.0.0.2
		{"http://[64:ff9b::808:808]/", allowed},  // NAT64 of a public host
		{"http://[64:ff9b::c0a8:101]/", blocked}, // NAT64 192.168.1.1
		{"http://[64:ff9b:1::808:808]/", blocked},
		{"http://[::ffff:0:a00:1]/", blocked},                       // IPv4-translated 10.0.0.1
		{"http://[2002:a00:1::1]/", blocked},                        // 6to4 of 10.0.0.1
		{"http://[2002:808:808::1]/", allowed},                      // 6to4 of 8.8.8.8
		{"http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", blocked}, // Teredo client 10.0.0.1
		{"http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", allowed}, // Teredo client 8.8.8.8

		// Schemes: the host is judged first.
		{"https://mcp.example.com/mcp", allowed},
		{"wss://mcp.example.com/mcp", allowed},
		{"ftp://example.com/", unsupported},
		{"file:///etc/passwd", unsupported},
		{"file://10.0.0.1/share", blocked},
		{"javascript:alert(1)", unsupported},
		{"mailto:a@10.0.0.1", unsupported},
		{"foo://10.0.0.1/", unsupported},
		{"gopher://127.0.0.1:6379/", unsupported},

		// Unparseable.
		{"", blocked},
		{"/relative/path", blocked},
		{"http://h:99999/", blocked},
		{"http://exa mple.com/", blocked},
		{"http://1.2.3.4.5/", blocked},
		{"http://256.256.256.256/", blocked},
	})
}

func TestCheckURLPolicies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		policy *Policy
		cases  []urlCase
	}{
		{"BlockLoopback", &Policy{BlockLoopback: true}, []urlCase{
			{"http://localhost:8080/", blocked},
			{"http://LOCALHOST./", blocked},
			{"http://mcp.localhost/", blocked},
			{"http://127.0.0.1/", blocked},
			{"http://127.255.255.254/", blocked},
			{"http://0x7f.1/", blocked},
			{"http://2130706433/", blocked},
			{"http://[::1]:8080/", blocked},
			{"http://[::ffff:127.0.0.1]/", blocked},
			{"http://[::7f00:1]/", blocked},
			{"http://localhost.example.com/", allowed},
			{"http://8.8.8.8/", allowed},
			{"http://10.0.0.1/", blocked},
		}},
		{"AllowPrivate", &Policy{AllowPrivate: true}, []urlCase{
			{"http://10.0.0.1/", allowed},
			{"http://10.1/", allowed},
			{"http://172.16.0.1/", allowed},
			{"http://192.168.1.1/", allowed},
			{"http://100.64.0.1/", allowed},
			{"http://169.254.1.1/", allowed},
			{"http://[fd12:3456::1]/", allowed},
			{"http://[fe80::1]/", allowed},
			{"http://[fec0::1]/", allowed},
			{"http://[::ffff:10.0.0.1]/", allowed},
			{"http://[64:ff9b:1::1]/", allowed},
			// Never opened by AllowPrivate.
			{"http://169.254.169.254/", blocked},
			{"http://[::ffff:169.254.169.254]/", blocked},
			{"http://[fd00:ec2::254]/", blocked},
			{"http://100.100.100.200/", blocked},
			{"http://metadata.google.internal/", blocked},
			{"http://0.0.0.0/", blocked},
			{"http://0.1.2.3/", blocked},
			{"http://[::]/", blocked},
			{"http://127.0.0.1/", allowed},
		}},
		{"AllowPrivate and BlockLoopback", &Policy{AllowPrivate: true, BlockLoopback: true}, []urlCase{
			{"http://10.0.0.1/", allowed},
			{"http://127.0.0.1/", blocked},
			{"http://localhost/", blocked},
		}},
		{"Allow", &Policy{
			BlockLoopback: true,
			Allow: []string{
				"10.0.0.5", "192.168.0.0/16", "[fd00::1]", "169.254.169.254",
				"metadata.google.internal", "LOCALHOST", "*.corp.example",
			},
		}, []urlCase{
			{"http://10.0.0.5/", allowed},
			{"http://[::ffff:10.0.0.5]/", allowed},
			{"http://10.0.0.6/", blocked},
			{"http://192.168.77.1/", allowed},
			{"http://[fd00::1]/", allowed},
			{"http://[fd00::2]/", blocked},
			{"http://169.254.169.254/", allowed},
			{"http://metadata.google.internal./", allowed},
			{"http://localhost:8080/", allowed},
			{"http://127.0.0.1/", blocked},
			{"http://mcp.corp.example/", allowed},
			{"http://corp.example/", allowed},
		}},
		{"Block", &Policy{
			Block: []string{"203.0.113.0/24", "8.8.8.8", "evil.example", "*.bad.example", "2001:db8::/32"},
		}, []urlCase{
			{"http://203.0.113.7/", blocked},
			{"http://[::ffff:203.0.113.7]/", blocked},
			{"http://[64:ff9b::cb00:7107]/", blocked}, // NAT64 of 203.0.113.7
			{"http://203.0.114.1/", allowed},
			{"http://8.8.8.8/", blocked},
			{"http://134744072/", blocked}, // 8.8.8.8
			{"http://8.8.4.4/", allowed},
			{"http://EVIL.example./", blocked},
			{"http://sub.evil.example/", allowed},
			{"http://x.bad.example/", blocked},
			{"http://x.y.bad.example/", blocked},
			{"http://bad.example/", allowed},
			{"http://[2001:db8::1]/", blocked},
			{"http://mcp.example.com/", allowed},
		}},
		{"IPv4-mapped entries", &Policy{
			Allow: []string{"::ffff:10.0.0.5", "::ffff:192.168.0.0/112"},
		}, []urlCase{
			{"http://10.0.0.5/", allowed},
			{"http://[::ffff:10.0.0.5]/", allowed},
			{"http://192.168.3.4/", allowed},
			{"http://192.169.3.4/", allowed},
			{"http://10.0.0.6/", blocked},
		}},
		{"Allow beats Block", &Policy{
			Allow: []string{"10.0.0.5", "ok.example"},
			Block: []string{"10.0.0.0/8", "ok.example", "8.8.8.8"},
		}, []urlCase{
			{"http://10.0.0.5/", allowed},
			{"http://10.0.0.6/", blocked},
			{"http://ok.example/", allowed},
			{"http://8.8.8.8/", blocked},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, _ := newTestGuard(t, tt.policy)
			runURLCases(t, g, tt.cases)
		})
	}
}

func TestNewRejectsBadEntries(t *testing.T) {
	t.Parallel()
	for _, p := range []*Policy{
		{Allow: []string{"10.0.0.0/33"}},
		{Allow: []string{""}},
		{Allow: []string{"a b"}},
		{Allow: []string{"host:80"}},
		{Block: []string{"fe80::1%eth0"}},
		{Block: []string{"*.10.0.0.1"}},
		{Block: []string{"http://example.com/"}},
		{Block: []string{"."}},
	} {
		if _, err := New(p, nil); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", *p)
		}
	}
}

func TestBlockedError(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	err := g.CheckURL("https://alice:hunter2@10.0.0.1:8443/mcp?token=s3cret#frag")
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("CheckURL error %v is not a *BlockedError", err)
	}
	want := &BlockedError{
		URL:    "https://10.0.0.1:8443/mcp",
		Host:   "10.0.0.1",
		Addr:   netip.MustParseAddr("10.0.0.1"),
		Reason: "10.0.0.1 is a private address",
	}
	if diff := cmp.Diff(want, be, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("BlockedError mismatch (-want +got):\n%s", diff)
	}
	const msg = "Blocked URL: https://10.0.0.1:8443/mcp — MCP client connections to private/internal addresses are not allowed (10.0.0.1 is a private address)"
	if got := err.Error(); got != msg {
		t.Errorf("Error() =\n%q, want\n%q", got, msg)
	}
	if !errors.Is(err, ErrBlockedURL) {
		t.Error("errors.Is(err, ErrBlockedURL) = false")
	}
	for _, secret := range []string{"alice", "hunter2", "s3cret", "frag"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("message %q leaks %q", err, secret)
		}
	}
}

func TestBlockedErrorReasons(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, &Policy{Block: []string{"evil.example"}})
	tests := []struct {
		url, host, reason string
	}{
		{"http://[::ffff:a00:1]/", "[::ffff:a00:1]", "[::ffff:a00:1] is IPv4-mapped 10.0.0.1, a private address"},
		{"http://metadata.google.internal./x", "metadata.google.internal.", "metadata.google.internal. is a cloud metadata host"},
		{"http://evil.example/", "evil.example", "evil.example is on the block list"},
		{"http://0/", "0.0.0.0", `0.0.0.0 is a "this network" address`},
		{"http://[::]/", "[::]", "[::] is the unspecified address"},
		{"not a url?token=x", "", "invalid URL"},
	}
	for _, tt := range tests {
		var be *BlockedError
		if err := g.CheckURL(tt.url); !errors.As(err, &be) {
			t.Errorf("CheckURL(%q) = %v, want a *BlockedError", tt.url, err)
			continue
		}
		if be.Host != tt.host || be.Reason != tt.reason {
			t.Errorf("CheckURL(%q): Host %q, Reason %q; want %q, %q", tt.url, be.Host, be.Reason, tt.host, tt.reason)
		}
		if strings.Contains(be.URL, "token") {
			t.Errorf("CheckURL(%q): URL %q keeps the query", tt.url, be.URL)
		}
	}
}

func TestUnsupportedSchemeError(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	err := g.CheckURL("ftp://example.com/x")
	if !errors.Is(err, ErrUnsupportedScheme) || errors.Is(err, ErrBlockedURL) {
		t.Fatalf("CheckURL(ftp) = %v, want ErrUnsupportedScheme only", err)
	}
	if !strings.Contains(err.Error(), `"ftp"`) {
		t.Errorf("message %q does not name the scheme", err)
	}
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t, nil)
	tests := []struct {
		addr string
		want verdict
	}{
		{"10.0.0.5", blocked},
		{"::ffff:10.0.0.5", blocked},
		{"fe80::1%eth0", blocked},
		{"169.254.169.254", blocked},
		{"100.64.0.1", blocked},
		{"0.0.0.0", blocked},
		{"::", blocked},
		{"127.0.0.1", allowed},
		{"::1", allowed},
		{"93.184.215.14", allowed},
		{"2606:4700::1111", allowed},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		err := g.CheckAddr(a)
		if got := verdictOf(t, err); got != tt.want {
			t.Errorf("CheckAddr(%s) = %v (%v), want %v", a, got, err, tt.want)
		}
	}
	var be *BlockedError
	if err := g.CheckAddr(netip.MustParseAddr("fd00::5")); !errors.As(err, &be) || be.Host != "[fd00::5]" {
		t.Errorf("CheckAddr(fd00::5) = %v, want a *BlockedError for host [fd00::5]", err)
	}
}
