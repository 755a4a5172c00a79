package netguard

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/whatwg"
)

// FuzzCheckURL checks that CheckURL never panics, that a URL and its
// canonical (WHATWG) serialisation always get the same decision, for the
// same reason, and that blocked errors never carry a query or fragment.
// The seed corpus is in testdata/fuzz/FuzzCheckURL. Run it with
//
//	go test ./netguard -run '^$' -fuzz FuzzCheckURL
func FuzzCheckURL(f *testing.F) {
	guards := make([]*Guard, 0, 2)
	for _, p := range []*Policy{
		nil,
		{BlockLoopback: true, Block: []string{"203.0.113.0/24", "*.bad.example"}},
	} {
		// These guards only check URLs and addresses; they never dial.
		g, err := New(p, &Options{Resolver: &fakeResolver{}, Dial: refuseDial})
		if err != nil {
			f.Fatal(err)
		}
		guards = append(guards, g)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, parseErr := whatwg.Parse(raw)
		for _, g := range guards {
			err := g.CheckURL(raw)
			got := decision(err)
			if parseErr != nil {
				if !errors.Is(err, ErrBlockedURL) {
					t.Fatalf("unparseable %q: CheckURL = %v, want blocked", raw, err)
				}
				continue
			}
			canonical := u.Href()
			if want := decision(g.CheckURL(canonical)); got != want {
				t.Fatalf("%q and its canonical form %q decided differently:\n%s\n%s", raw, canonical, got, want)
			}
			// An allowed IP literal is an allowed address.
			if ip, ok := u.IP(); ok && err == nil && whatwg.Special(u.Scheme) {
				if aerr := g.CheckAddr(ip); aerr != nil {
					t.Fatalf("CheckURL(%q) allowed, CheckAddr(%v) = %v", raw, ip, aerr)
				}
			}
		}
	})
}

// decision summarises a CheckURL result for comparison: the kind of
// error and, for a block, what was judged and why.
func decision(err error) string {
	var be *BlockedError
	switch {
	case err == nil:
		return "allowed"
	case errors.As(err, &be):
		if !strings.HasPrefix(err.Error(), "Blocked URL: ") {
			return "bad message: " + err.Error()
		}
		if strings.ContainsAny(be.URL, "?#") {
			return "unredacted URL: " + be.URL
		}
		return fmt.Sprintf("blocked host=%q addr=%v reason=%q", be.Host, be.Addr, be.Reason)
	case errors.Is(err, ErrUnsupportedScheme):
		return "unsupported: " + err.Error()
	}
	return "unexpected: " + err.Error()
}
