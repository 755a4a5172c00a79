package aitools_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreDependencies: the core (mcpclient, aitools) imports no LLM SDK;
// only the adapter packages do.
func TestCoreDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	const module = "github.com/agentmcp/agentmcp/"
	for _, pkg := range []string{"mcpclient", "aitools"} {
		out, err := exec.Command(goBin, "list", "-deps", module+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed only %v", pkg, deps)
		}
		for _, dep := range deps {
			if strings.HasPrefix(dep, "github.com/openai/") || strings.HasPrefix(dep, "github.com/anthropics/") ||
				strings.HasPrefix(dep, module+"aitools/") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
	// The adapters do depend on their SDKs (the check above can fail).
	out, err := exec.Command(goBin, "list", "-deps", module+"aitools/openai").Output()
	if err != nil || !strings.Contains(string(out), "github.com/openai/openai-go/v3\n") {
		t.Errorf("go list -deps aitools/openai: %v; the openai SDK is not listed", err)
	}
}
