package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// spanLine is one line of --trace's tree: indentation, name, duration and
// an error mark.
var spanLine = regexp.MustCompile(`^( +)(\S.*?) +(\d+(?:\.\d+)?(?:s|ms|µs))(  error.*)?$`)

// traceNode is a span of the printed tree.
type traceNode struct {
	name, errMark string
	children      []*traceNode
}

// childNames returns the names of n's children, sorted.
func (n *traceNode) childNames() []string {
	var names []string
	for _, c := range n.children {
		names = append(names, c.name)
	}
	slices.Sort(names)
	return names
}

func (n *traceNode) child(name string) *traceNode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// traceTree parses the tree --trace printed on stderr, checking
// every line's form, and returns its roots.
func traceTree(t *testing.T, stderr string) []*traceNode {
	t.Helper()
	_, tree, ok := strings.Cut(stderr, "trace:\n")
	if !ok {
		t.Fatalf("no trace on stderr: %q", stderr)
	}
	var roots []*traceNode
	var stack []*traceNode // stack[d] is the last node at depth d
	for _, l := range strings.Split(strings.TrimRight(tree, "\n"), "\n") {
		if !strings.HasPrefix(l, " ") {
			break // the command's error message follows the tree
		}
		m := spanLine.FindStringSubmatch(l)
		if m == nil || len(m[1])%2 != 0 || len(m[1])/2-1 > len(stack) {
			t.Fatalf("not a span line: %q in\n%s", l, tree)
		}
		depth := len(m[1])/2 - 1
		n := &traceNode{name: m[2], errMark: m[4]}
		stack = append(stack[:depth], n)
		if depth == 0 {
			roots = append(roots, n)
		} else {
			stack[depth-1].children = append(stack[depth-1].children, n)
		}
	}
	return roots
}

// TestCallTrace: call --trace prints, on stderr once the command is done,
// the tree of its spans, each with a duration: the command's span, and
// under it the connection (the handshake under it), the discovery (its
// list requests under it) and the tool call, in the order they started;
// never the arguments. A failed call's span is marked. Stdout holds the
// result alone.
func TestCallTrace(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	r := runCmd(t, "call", hs.URL, "echo", "--args", `{"text":"secret-arg"}`, "--trace")
	if r.code != 0 || strings.Contains(r.stdout, "trace:") || !strings.Contains(r.stdout, "secret-arg") {
		t.Fatalf("call: %+v", r)
	}
	if strings.Contains(r.stderr, "secret-arg") {
		t.Errorf("the arguments are in the trace: %s", r.stderr)
	}
	roots := traceTree(t, r.stderr)
	if len(roots) != 1 || roots[0].name != "agentmcp call" {
		t.Fatalf("roots of the trace: %v\n%s", roots, r.stderr)
	}
	cmd := roots[0]
	var order []string
	for _, c := range cmd.children {
		order = append(order, c.name)
	}
	if want := []string{"agentmcp.connect", "agentmcp.discover", "tools/call echo"}; !slices.Equal(order, want) {
		t.Errorf("under the command: %q; want %q\n%s", order, want, r.stderr)
	}
	if c := cmd.child("agentmcp.connect"); c == nil || !slices.Contains(c.childNames(), "initialize") ||
		!slices.Contains(c.childNames(), "notifications/initialized") {
		t.Errorf("the handshake is not under agentmcp.connect:\n%s", r.stderr)
	}
	if d := cmd.child("agentmcp.discover"); d == nil || !slices.Contains(d.childNames(), "tools/list") {
		t.Errorf("tools/list is not under agentmcp.discover:\n%s", r.stderr)
	}
	if c := cmd.child("tools/call echo"); c == nil || c.errMark != "" {
		t.Errorf("the call's span: %+v\n%s", c, r.stderr)
	}

	r = runCmd(t, "call", hs.URL, "fail", "--trace")
	if r.code == 0 {
		t.Fatalf("call fail succeeded: %+v", r)
	}
	roots = traceTree(t, r.stderr)
	if c := roots[0].child("tools/call fail"); c == nil || c.errMark == "" || roots[0].errMark == "" {
		t.Errorf("the failed call is not marked:\n%s", r.stderr)
	}
}

// TestInspectTrace: inspect --trace prints the tree of its spans too, and
// call refuses --trace for a SERVER of an agent (its spans are serve's).
func TestInspectTrace(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	r := runCmd(t, "inspect", hs.URL, "--trace")
	if r.code != 0 {
		t.Fatalf("inspect: %+v", r)
	}
	roots := traceTree(t, r.stderr)
	if len(roots) != 1 || roots[0].name != "agentmcp inspect" ||
		!slices.Equal(roots[0].childNames(), []string{"agentmcp.connect", "agentmcp.discover"}) {
		t.Errorf("trace:\n%s", r.stderr)
	}
	r = runCmd(t, "call", "s", "echo", "--trace", "--db", t.TempDir()+"/a.db")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--trace") {
		t.Errorf("call SERVER --trace: %+v", r)
	}
}
