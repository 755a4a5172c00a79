// Package storetest is the behaviour suite every store.Store backend must
// pass. It is for tests only.
//
// # Usage
//
// A backend's test calls Run with a Backend that opens Stores on a database
// private to each test:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, storetest.Backend{
//			Open: func(t *testing.T, opts storetest.Options) store.Store { ... },
//			Raw:  func(t *testing.T) []byte { ... },
//		})
//	}
//
// Open is called once or more per test, each time with that test's t: the
// first call creates an empty database for t, later calls open the same
// database again (a second handle while the first is open, or a reopen
// after Close). The Store must use opts.Now as its clock and opts.Cipher as
// its cipher, and Open must register its Close with t.Cleanup (the suite
// may close it earlier; Close is idempotent).
//
// # Concurrency
//
// The suite's tests run in parallel (t.Parallel) and some of them use 50
// goroutines on two handles of one database, so Open must be safe to call
// from parallel tests.
//
// # Errors
//
// Failures are reported through t; nothing is returned.
package storetest
