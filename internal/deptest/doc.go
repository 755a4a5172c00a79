// Package deptest holds the house's import rules as a test: which package
// may depend on which (transitively, test files aside), checked against
// `go list -deps -json` of the whole module. It has no code of its own;
// deps_test.go is the rule table, and a rule that does not hold yet is
// written there, skipped with what must move for it to hold.
package deptest
