package agent

import "time"

// SetClock makes the agents opened with o tell time by now.
func SetClock(o *Options, now func() time.Time) { o.now = now }
