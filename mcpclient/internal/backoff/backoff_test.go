package backoff

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRetryDelaysNeverWrap: however many attempts were made, and whatever
// the base delay, a wait is never shorter than the doubling says: the
// background retry of a server down for long waits about its cap, not a
// wrapped-around shift of the base delay (2^34 ns + 1 ns shifted by 30 is
// about a second).
func TestRetryDelaysNeverWrap(t *testing.T) {
	base := time.Duration(1<<34 + 1) // about 17 s
	const attempts = 3
	for n := 1; n <= 100; n++ {
		want := min(time.Hour, base<<min(attempts+n-1, 20)) // no overflow below a shift of 29
		if got := Equal(base, attempts+n-1, time.Hour); got < want/2 || got > want {
			t.Fatalf("background attempt %d waits %v; want within [%v, %v]", n, got, want/2, want)
		}
	}
	longest := time.Duration(0)
	for range 100 {
		longest = max(longest, Full(base, 40, time.Hour))
	}
	if longest < time.Minute {
		t.Errorf("100 waits after attempt 40 were all under %v; want them spread over [0, 1h)", longest)
	}
	for _, k := range []int{0, 1, 62, 63, 64, 1000} {
		if d := Doubled(time.Second, k, time.Hour); d <= 0 || d > time.Hour {
			t.Errorf("Doubled(1s, %d, 1h) = %v", k, d)
		}
	}
}

// TestPacer: quick restarts wait a doubling delay, up to the limit; a
// process that ran for a while starts again at once.
func TestPacer(t *testing.T) {
	var p Pacer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := func(after time.Duration) time.Duration {
		now = now.Add(after)
		d := p.Delay(now, time.Second, 5*time.Second)
		now = now.Add(d)
		p.Started(now)
		return d
	}
	var got []time.Duration
	got = append(got, start(0)) // first start
	for range 4 {
		got = append(got, start(time.Second)) // dies a second after each start
	}
	got = append(got, start(time.Minute)) // ran for a minute
	want := []time.Duration{0, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v; want %v", got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		in      *Policy
		want    Policy
		wantErr string
	}{
		{"nil", nil, Policy{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 5 * time.Second, BackgroundMaxDelay: 3 * time.Minute}, ""},
		{"zero fields", &Policy{MaxAttempts: 5, DisableBackground: true},
			Policy{MaxAttempts: 5, BaseDelay: 500 * time.Millisecond, MaxDelay: 5 * time.Second, BackgroundMaxDelay: 3 * time.Minute, DisableBackground: true}, ""},
		{"background at least MaxDelay", &Policy{MaxDelay: time.Hour, BackgroundMaxDelay: time.Minute},
			Policy{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: time.Hour, BackgroundMaxDelay: time.Hour}, ""},
		{"negative attempts", &Policy{MaxAttempts: -1}, Policy{}, "retry.MaxAttempts must be >= 1"},
		{"negative background", &Policy{BackgroundMaxDelay: -1}, Policy{}, "retry.BackgroundMaxDelay must be > 0"},
		{"base over max", &Policy{BaseDelay: time.Minute, MaxDelay: time.Second}, Policy{}, "retry.BaseDelay must be <= retry.MaxDelay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Check(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("Check: %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Check = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
