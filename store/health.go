package store

import "time"

// DefaultTimeout is the deadline of one Store operation when the backend's
// Options.Timeout is zero: long enough for any single query of a healthy
// database, short enough that a request waiting on a hung one is answered
// (with ErrUnavailable) while its client still waits.
const DefaultTimeout = 5 * time.Second

// WriteHealth is implemented by stores that keep count of the writes the
// database refused (store/sqlite and store/postgres do), for operators:
// metrics, and a readiness check that fails while writes fail.
type WriteHealth interface {
	// WriteHealth returns how many writes failed with ErrUnavailable since
	// the Store was opened, and the error of the last one while the
	// database refuses writes: from such a failure until a write succeeds
	// again. refusing is nil when the last write made went through (or
	// none failed yet).
	WriteHealth() (failed uint64, refusing error)
}
