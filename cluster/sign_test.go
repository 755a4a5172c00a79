package cluster

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// testKey is a cluster key.
const testKey = "0123456789abcdef-test-key"

// TestReplayCache: a signature is remembered for as long as its time can
// be within Skew of the clock (two generations of 2*Skew),
// and the cache is bounded.
func TestReplayCache(t *testing.T) {
	c := NewSigner(testKey)
	start := time.Unix(1e9, 0)
	id := func(i int) [16]byte { return [16]byte{byte(i), byte(i >> 8), byte(i >> 16)} }
	if err := c.remember(id(1), start); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{0, Skew, 2 * Skew, 2*Skew + Skew/2} {
		if err := c.remember(id(1), start.Add(d)); !errors.Is(err, errReplayed) {
			t.Errorf("the signature again after %v: %v; want replayed", d, err)
		}
	}
	if err := c.remember(id(2), start.Add(4*Skew)); err != nil {
		t.Fatal(err)
	}
	// Two generations on, the first is forgotten: its time is long stale.
	if err := c.remember(id(1), start.Add(6*Skew)); err != nil {
		t.Errorf("after two generations: %v; want it forgotten", err)
	}
	full := NewSigner(testKey)
	for i := range maxReplayEntries {
		if err := full.remember(id(i), start); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if err := full.remember(id(maxReplayEntries), start); !errors.Is(err, ErrReplayFull) {
		t.Errorf("past the bound: %v; want ErrReplayFull", err)
	}
}

// BenchmarkSign is what signing and checking cost a forwarded
// request with a 1 KiB body.
func BenchmarkSign(b *testing.B) {
	c := NewSigner(testKey)
	body := bytes.Repeat([]byte("x"), 1024)
	req := httptest.NewRequest(http.MethodPost, "/agents/test/x/tools/call", nil)
	req.Host = "agents.example.com"
	b.ReportAllocs()
	for b.Loop() {
		req.Header.Set("X-Forwarded-Proto", "https")
		c.Sign(req, "r-abc", time.Now(), sha256.Sum256(body))
		sig, err := c.Parse(req)
		if err == nil {
			err = c.Check(req, sig, body)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
