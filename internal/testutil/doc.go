// Package testutil holds small helpers that the tests of several packages
// share: a Clock whose waits end only when the test says so, an address
// that refuses connections, and (on Linux) a wait for a process to end.
// It is for tests only.
package testutil
