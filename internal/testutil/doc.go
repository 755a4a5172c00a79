// Package testutil holds small helpers that the tests of several packages
// share: a Clock whose waits end only when the test says so, and an
// address that refuses connections. It is for tests only.
package testutil
