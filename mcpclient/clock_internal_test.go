package mcpclient

import (
	"testing"
	"time"
)

// TestRetryDelaysNeverWrap: however many attempts were made, and whatever
// the base delay, a wait is never shorter than the doubling says: the
// background retry of a server down for long waits about its cap, not a
// wrapped-around shift of the base delay (2^34 ns + 1 ns shifted by 30 is
// about a second).
func TestRetryDelaysNeverWrap(t *testing.T) {
	base := time.Duration(1<<34 + 1) // about 17 s
	r := RetryOptions{MaxAttempts: 3, BaseDelay: base, MaxDelay: base, BackgroundMaxDelay: time.Hour}
	for n := 1; n <= 100; n++ {
		want := min(time.Hour, base<<min(r.MaxAttempts+n-1, 20)) // no overflow below a shift of 29
		if got := backgroundDelay(r, n); got < want/2 || got > want {
			t.Fatalf("background attempt %d waits %v; want within [%v, %v]", n, got, want/2, want)
		}
	}
	r = RetryOptions{MaxAttempts: 100, BaseDelay: base, MaxDelay: time.Hour}
	longest := time.Duration(0)
	for range 100 {
		longest = max(longest, backoff(r, 40))
	}
	if longest < time.Minute {
		t.Errorf("100 waits after attempt 40 were all under %v; want them spread over [0, 1h)", longest)
	}
	for _, k := range []int{0, 1, 62, 63, 64, 1000} {
		if d := doubled(time.Second, k, time.Hour); d <= 0 || d > time.Hour {
			t.Errorf("doubled(1s, %d, 1h) = %v", k, d)
		}
	}
}
